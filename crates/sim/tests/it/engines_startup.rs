//! Readiness under `--startup-delay-ms` as each engine behaves while it loads or warms up
//! (versions and files in `crates/engines/src/dialect/mod.rs`, `Readiness`).

use std::time::{Duration, Instant};

use crate::common;

use common::engines::engine;
use common::*;
use serde_json::json;
use servebench_engines::Engine;

fn delayed(p: Engine, ms: u64) -> servebench_sim::SimConfig {
    let mut c = engine(p);
    c.faults.startup_delay_ms = ms;
    c
}

async fn status(url: &str) -> u16 {
    client()
        .get(url)
        .send()
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

// SGLang 0.5.23 http_server.py:714-798, 1993: /health and /ready 503 while warming up,
// /v1/models and generation served.
#[tokio::test]
async fn sglang_health_is_503_while_models_and_generation_answer() {
    let h = start(delayed(Engine::Sglang, 1500)).await;
    let base = h.base_url();
    assert_eq!(status(&format!("{base}/health")).await, 503);
    assert_eq!(status(&format!("{base}/health_generate")).await, 503);
    assert_eq!(status(&format!("{base}/ready")).await, 503);
    assert_eq!(status(&format!("{base}/v1/models")).await, 200);
    let (s, v) = post_json(
        &client(),
        &format!("{base}/v1/completions"),
        &json!({"prompt": "a", "max_tokens": 2}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(status(&format!("{base}/ready")).await, 200);
    // A ready /health waits for its 1-token health generation, checked each second.
    let t0 = Instant::now();
    assert_eq!(status(&format!("{base}/health")).await, 200);
    assert!(
        t0.elapsed() >= Duration::from_millis(990),
        "{:?}",
        t0.elapsed()
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// llama.cpp server-http.cpp:307-326: every route 503 `Loading model` until loaded.
#[tokio::test]
async fn llamacpp_answers_loading_model_on_every_route() {
    let h = start(delayed(Engine::Llamacpp, 800)).await;
    let base = h.base_url();
    for path in ["/health", "/v1/models", "/props"] {
        let (s, v) = get_json(&client(), &format!("{base}{path}")).await;
        assert_eq!(s, 503, "{path}");
        assert_eq!(
            v,
            json!({"error": {"message": "Loading model", "type": "unavailable_error",
                             "code": 503}}),
            "{path}"
        );
    }
    let (s, _) = post_json(
        &client(),
        &format!("{base}/v1/completions"),
        &json!({"prompt": "a", "max_tokens": 2}),
    )
    .await;
    assert_eq!(s, 503);
    // The simulator's own info answers throughout.
    assert_eq!(status(&format!("{base}/v1/sim/info")).await, 200);
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(status(&format!("{base}/health")).await, 200);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// vLLM, TGI, TensorRT-LLM and transformers serve listen only once loaded: connections
// are refused until then.
#[tokio::test]
async fn engines_that_listen_once_loaded_refuse_connections_until_then() {
    for p in [
        Engine::Vllm,
        Engine::Tgi,
        Engine::Trtllm,
        Engine::Transformers,
    ] {
        let h = start(delayed(p, 600)).await;
        let url = format!("{}/health", h.base_url());
        let err = client()
            .get(&url)
            .send()
            .await
            .err()
            .unwrap_or_else(|| panic!("{p:?} answered while loading"));
        assert!(err.is_connect(), "{p:?}: {err:?}");
        tokio::time::sleep(Duration::from_millis(700)).await;
        assert_eq!(status(&url).await, 200, "{p:?}");
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

// A server stopped before it listens stops at once.
#[tokio::test]
async fn a_server_stopped_while_loading_stops() {
    let h = start(delayed(Engine::Vllm, 60_000)).await;
    let t0 = Instant::now();
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    assert!(t0.elapsed() < Duration::from_secs(5));
}
