//! The personalities' profiler routes (crates/engines/src/<engine>/…/profiler.rs): where they
//! are served, what a start and a stop answer, and the files the stop writes. Kernel evidence
//! through them end to end: servebench's tests/it/kernels_sim.rs.

use std::path::Path;

use crate::common;

use common::engines::engine;
use common::*;
use serde_json::{Value, json};
use servebench_engines::Engine;
use servebench_sim::SimHandle;

async fn post(h: &SimHandle, path: &str, body: Value) -> (u16, Value) {
    post_json(&client(), &format!("{}{path}", h.base_url()), &body).await
}

async fn generate(h: &SimHandle) {
    let body = json!({"model": "sim-model", "messages": [{"role": "user", "content": "a b"}],
        "max_tokens": 4});
    let (s, _) = post(h, "/v1/chat/completions", body).await;
    assert_eq!(s, 200);
}

fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[tokio::test]
async fn the_transformers_launchers_routes_answer_as_scripts_tserve_profiler_py_does() {
    let dir = tempfile::tempdir().expect("tmp");
    let plain = start(engine(Engine::Transformers)).await;
    let (s, _) = post(&plain, "/start_profile", json!({})).await;
    assert_eq!(s, 404, "transformers serve itself has no profiler route");
    let mut c = engine(Engine::Transformers);
    c.wire.profiler.tserve = true;
    c.wire.moe_backend = Some("grouped_mm".into());
    let h = start(c).await;
    let out = json!({"output_dir": dir.path(), "activities": ["GPU"]});
    let (s, v) = post(&h, "/start_profile", out.clone()).await;
    assert_eq!(
        (s, v["error"].as_str().unwrap_or("")),
        (
            500,
            "no generation thread yet: send one request before starting the profiler"
        )
    );
    generate(&h).await;
    let (s, _) = post(&h, "/start_profile", json!({})).await;
    assert_eq!(s, 400, "no output_dir");
    let (s, v) = post(&h, "/start_profile", out.clone()).await;
    assert_eq!((s, v["started"].clone()), (200, json!(1)));
    let (s, _) = post(&h, "/start_profile", out).await;
    assert_eq!(s, 409, "already running");
    generate(&h).await;
    let (s, v) = post(&h, "/stop_profile", json!({})).await;
    assert_eq!(s, 200, "{v}");
    let trace = v["traces"][0].as_str().expect("a trace");
    let name = format!("tserve-{}-1.pt.trace.json", std::process::id());
    assert!(trace.ends_with(&name), "{trace}");
    // Written whole under a hidden name, then renamed: nothing else is left.
    assert_eq!(names(dir.path()), [name]);
    let text = std::fs::read_to_string(trace).expect("plain JSON");
    assert!(text.contains("GroupProblemShape"), "grouped_mm's kernel");
    let (s, _) = post(&h, "/stop_profile", json!({})).await;
    assert_eq!(s, 409, "not running");
}

#[tokio::test]
async fn vllms_routes_exist_only_with_its_profiler_config_and_write_a_trace_per_worker() {
    let dir = tempfile::tempdir().expect("tmp");
    let plain = start(engine(Engine::Vllm)).await;
    let (s, _) = post(&plain, "/start_profile", json!({})).await;
    assert_eq!(s, 404);
    let mut c = engine(Engine::Vllm);
    c.wire.profiler.vllm_config = Some(
        json!({"profiler": "torch", "torch_profiler_dir": dir.path(), "ignore_frontend": true})
            .to_string(),
    );
    let h = start(c).await;
    // A stop before any start is ignored, as are a second start and a second stop.
    assert_eq!(post(&h, "/stop_profile", json!({})).await.0, 200);
    assert_eq!(post(&h, "/start_profile", json!({})).await.0, 200);
    assert_eq!(post(&h, "/start_profile", json!({})).await.0, 200);
    generate(&h).await;
    assert_eq!(post(&h, "/stop_profile", json!({})).await.0, 200);
    assert_eq!(post(&h, "/stop_profile", json!({})).await.0, 200);
    let f = names(dir.path());
    // One worker (--tp 1) and its table; no API process trace (ignore_frontend).
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f[0].starts_with("dp0_pp0_tp0_dcp0_ep0_rank0.") && f[0].ends_with(".pt.trace.json.gz"),
        "{f:?}"
    );
    assert_eq!(f[1], "profiler_out_0.txt");
    let table = std::fs::read_to_string(dir.path().join(&f[1])).expect("table");
    assert!(table.contains("fused_moe_kernel"), "{table}");
}

#[tokio::test]
async fn sglangs_stop_without_a_start_fails_and_a_start_writes_where_it_is_told() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut c = engine(Engine::Sglang);
    c.wire.tp_size = 2;
    let h = start(c).await;
    assert_eq!(post(&h, "/stop_profile", json!({})).await.0, 500);
    let body = json!({"output_dir": dir.path(), "profile_id": "p", "with_stack": false,
        "record_shapes": false});
    assert_eq!(post(&h, "/start_profile", body.clone()).await.0, 200);
    assert_eq!(
        post(&h, "/start_profile", body).await.0,
        500,
        "one at a time"
    );
    generate(&h).await;
    assert_eq!(post(&h, "/stop_profile", json!({})).await.0, 200);
    // Written before the stop answered.
    assert_eq!(
        names(dir.path()),
        ["p-TP-0.trace.json.gz", "p-TP-1.trace.json.gz"]
    );
}
