//! Helpers of the fault-matrix tests (`fault_matrix.rs`, `fault_wire.rs`, `fault_host.rs`):
//! one-variant specs on the simulator, running them, and the invariant every row checks.
#![allow(dead_code)]

use std::path::Path;

use serde_json::Value;

use crate::common::read_json;
pub(crate) use crate::common::{result_file, sb, write_spec};

/// The sidecar's lines, each parsed.
pub(crate) fn sidecar(result: &Path) -> Vec<Value> {
    let r = read_json(result);
    sidecar_lines(&result.with_file_name(r["requests_file"].as_str().expect("sidecar name")))
}

/// The lines of a sidecar file (plain or zstd), each as JSON with its events as
/// `[t_ns, tokens]` pairs whatever form they were written in.
pub(crate) fn sidecar_lines(path: &Path) -> Vec<Value> {
    servebench_result::read_requests(path)
        .unwrap_or_else(|e| panic!("every sidecar line is whole: {e}"))
        .into_iter()
        .map(|l| {
            let pairs: Vec<Value> = l
                .record
                .events
                .iter()
                .map(|e| serde_json::json!([e.t_ns, e.tokens]))
                .collect();
            let mut v = serde_json::to_value(&l).expect("json");
            v["events"] = Value::Array(pairs);
            v
        })
        .collect()
}

/// A one-variant, one-point spec on the simulator (fast preset, fixed seed) with `extra`
/// simulator flags, `requests` measured requests at concurrency `c`.
pub(crate) fn sim_spec(extra: &str, requests: u32, c: u32, timeout: &str) -> String {
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: fault-row}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast, --seed, "7"{extra}]
    readiness: {{http: {{path: /health}}, interval: 10ms, timeout: 20s}}
    stop: {{signal: SIGTERM, grace: 5s}}
  target: {{api: openai-completions, model: sim-model, tokenizer: server}}
  variants:
    - name: only
      baseline: true
  workload:
    dataset: {{kind: random, input_tokens: 16, output_tokens: 8}}
    requests: {requests}
    warmup_requests: 0
    request_timeout: {timeout}
  sweep: {{max_concurrency: [{c}]}}
  trials: {{count: 1}}
"#
    )
}

/// Runs `spec` in a fresh folder; returns the folder, the exit code and stderr.
pub(crate) fn run_spec(spec: &str) -> (tempfile::TempDir, i32, String) {
    let dir = tempfile::tempdir().expect("tmp");
    let path = write_spec(dir.path(), spec);
    let out = sb(dir.path())
        .args(["run", "--no-bars"])
        .arg(&path)
        .output()
        .expect("run servebench");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (dir, out.status.code().unwrap_or(-1), stderr + &stdout)
}

/// The single trial of a one-trial run, checked for the invariant of every row: the trial
/// is recorded, every request is in its denominators (completed + failed = requests), and
/// the sidecar holds one record per request with the same failures.
pub(crate) fn the_trial(dir: &Path, requests: u64) -> Value {
    let path = result_file(dir);
    let r = read_json(&path);
    let trials = r["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 1, "{r}");
    let t = trials[0].clone();
    let all = &t["summary"]["all"];
    assert_eq!(all["requests"], requests, "{all}");
    assert_eq!(
        all["completed"].as_u64().unwrap_or(0) + all["failed"].as_u64().unwrap_or(0),
        requests,
        "{all}"
    );
    let failed = all["failed"].as_u64().unwrap_or(0);
    if requests > 0 {
        let rate = all["error_rate"].as_f64().expect("error_rate");
        assert!(
            (rate - failed as f64 / requests as f64).abs() < 1e-12,
            "{all}"
        );
    }
    let errors: u64 = t["errors"]
        .as_object()
        .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
    assert_eq!(errors, failed, "errors by kind add up to the failures");
    let lines = sidecar(&path);
    let measured: Vec<&Value> = lines.iter().filter(|l| l["warmup"] == false).collect();
    assert_eq!(measured.len() as u64, requests);
    let failed_lines = measured.iter().filter(|l| !l["error"].is_null()).count() as u64;
    assert_eq!(failed_lines, failed);
    t
}

pub(crate) fn errors_of(t: &Value) -> Vec<(String, u64)> {
    t["errors"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default()
}
