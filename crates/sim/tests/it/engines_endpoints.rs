//! Each personality's tokenize, info, version and models endpoints, as its engine serves
//! them (versions and files in `crates/engines/src/<engine>/dialect`), so a client
//! can tell the engines apart and read what it needs.

use crate::common;

use common::engines::engine;
use common::*;
use serde_json::{Value, json};
use servebench_engines::Engine;
use servebench_sim::SimHandle;

async fn started(p: Engine) -> SimHandle {
    let mut c = engine(p);
    c.engine.max_model_len = 4096;
    c.wire.moe_backend = Some("flashinfer_cutedsl".into());
    start(c).await
}

async fn get(h: &SimHandle, path: &str) -> (u16, Value) {
    get_json(&client(), &format!("{}{path}", h.base_url())).await
}

async fn post(h: &SimHandle, path: &str, body: Value) -> (u16, Value) {
    post_json(&client(), &format!("{}{path}", h.base_url()), &body).await
}

// SGLang 0.5.23: /tokenize and /v1/tokenize (entrypoints/openai/serving_tokenize.py).
#[tokio::test]
async fn sglang_tokenize_server_info_and_models() {
    let h = started(Engine::Sglang).await;
    for path in ["/tokenize", "/v1/tokenize"] {
        let (s, v) = post(&h, path, json!({"prompt": "a b c"})).await;
        assert_eq!(s, 200);
        assert_eq!(
            v,
            json!({"tokens": [0, 1, 2], "count": 3, "max_model_len": 4096})
        );
    }
    let (_, v) = post(
        &h,
        "/tokenize",
        json!({"messages": [{"role": "user", "content": "a"}]}),
    )
    .await;
    assert_eq!(v["count"], 1 + 2 + 1);
    let (_, v) = post(&h, "/tokenize", json!({"prompt": ["a b", "c"]})).await;
    assert_eq!(v["count"], json!([2, 1]));
    let (s, v) = post(&h, "/tokenize", json!({"model": "sim-model"})).await;
    assert_eq!(s, 400);
    assert_eq!(v["object"], "error");
    assert_eq!(v["type"], "Bad Request");
    // /server_info: the flat resolved arguments (utils/common.py:3584-3592).
    for path in ["/server_info", "/get_server_info"] {
        let (s, v) = get(&h, path).await;
        assert_eq!(s, 200);
        assert_eq!(v["moe_runner_backend"], "flashinfer_cutedsl");
        assert_eq!(v["context_length"], 4096);
        assert_eq!(v["served_model_name"], "sim-model");
        assert_eq!(v["version"], "0.5.23");
        assert_eq!(v["frontend"], "python");
    }
    let (_, v) = get(&h, "/v1/models").await;
    assert_eq!(
        v,
        json!({"object": "list", "data": [{"id": "sim-model", "object": "model",
               "created": v["data"][0]["created"], "owned_by": "sglang", "root": "sim-model",
               "parent": null, "max_model_len": 4096}]})
    );
    let (s, _) = get(&h, "/v1/models/sim-model").await;
    assert_eq!(s, 200);
    let (s, v) = get(&h, "/v1/models/other").await;
    assert_eq!(s, 404);
    assert_eq!(v["error"]["code"], "model_not_found");
    let (_, v) = get(&h, "/model_info").await;
    assert_eq!(v["served_model_name"], "sim-model");
    // SGLang 0.5.23 serves no /version.
    let (s, _) = get(&h, "/version").await;
    assert_eq!(s, 404);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// vLLM 0.33.0: serve/tokenize/protocol.py:182-186, instrumentator/basic.py:53,
// openai/models/serving.py:64-77.
#[tokio::test]
async fn vllm_tokenize_version_and_models() {
    let h = started(Engine::Vllm).await;
    let (s, v) = post(&h, "/tokenize", json!({"prompt": "a b c"})).await;
    assert_eq!(s, 200);
    assert_eq!(
        v,
        json!({"count": 3, "max_model_len": 4096, "tokens": [0, 1, 2], "token_strs": null})
    );
    let (_, v) = post(
        &h,
        "/tokenize",
        json!({"messages": [{"role": "user", "content": "a"}]}),
    )
    .await;
    assert_eq!(v["count"], 4);
    let (s, v) = post(&h, "/tokenize", json!({"model": "other", "prompt": "a"})).await;
    assert_eq!(s, 404);
    assert_eq!(v["error"]["type"], "NotFoundError");
    let (_, v) = post(&h, "/detokenize", json!({"tokens": [0, 1]})).await;
    assert_eq!(v, json!({"prompt": "a b"}));
    let (_, v) = get(&h, "/version").await;
    assert_eq!(v, json!({"version": "0.33.0"}));
    let (_, v) = get(&h, "/v1/models").await;
    let card = &v["data"][0];
    assert_eq!(card["owned_by"], "vllm");
    assert_eq!(card["max_model_len"], 4096);
    assert_eq!(card["root"], "sim-model");
    assert_eq!(card["permission"][0]["object"], "model_permission");
    let (s, _) = get(&h, "/server_info").await;
    assert_eq!(s, 404, "vLLM serves /server_info only in dev mode");
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// llama.cpp: /tokenize (server-context.cpp:5065-5103), /props (:4580-4625), /v1/models.
#[tokio::test]
async fn llamacpp_tokenize_takes_content_and_answers_empty_for_messages() {
    let h = started(Engine::Llamacpp).await;
    let (s, v) = post(&h, "/tokenize", json!({"content": "a b c"})).await;
    assert_eq!((s, v), (200, json!({"tokens": [0, 1, 2]})));
    // A body without `content` — the chat form — gets 200 and no tokens.
    let (s, v) = post(
        &h,
        "/tokenize",
        json!({"messages": [{"role": "user", "content": "a b c"}]}),
    )
    .await;
    assert_eq!((s, v), (200, json!({"tokens": []})));
    let (_, v) = post(
        &h,
        "/tokenize",
        json!({"content": "a b", "with_pieces": true}),
    )
    .await;
    assert_eq!(
        v,
        json!({"tokens": [{"id": 0, "piece": "a"}, {"id": 1, "piece": "b"}]})
    );
    let (_, v) = post(&h, "/detokenize", json!({"tokens": [0, 1]})).await;
    assert_eq!(v, json!({"content": "a b"}));
    let (_, v) = get(&h, "/props").await;
    assert_eq!(v["default_generation_settings"]["n_ctx"], 4096);
    assert_eq!(v["total_slots"], 256);
    assert_eq!(v["build_info"], "b0-unknown");
    let (_, v) = get(&h, "/v1/models").await;
    assert_eq!(v["object"], "list");
    assert_eq!(v["data"][0]["owned_by"], "llamacpp");
    assert_eq!(v["data"][0]["meta"]["n_ctx"], 4096);
    assert_eq!(v["models"][0]["name"], "sim-model");
    for path in ["/health", "/v1/health"] {
        let (s, v) = get(&h, path).await;
        assert_eq!((s, v), (200, json!({"status": "ok"})));
    }
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// TGI db931fcf: /tokenize {"inputs"} → [{id, text, start, stop}] (server.rs:71-95),
// /info (lib.rs:261-299), /v1/models (server.rs:176-186).
#[tokio::test]
async fn tgi_tokenize_returns_an_array_with_byte_offsets() {
    let h = started(Engine::Tgi).await;
    let (s, v) = post(&h, "/tokenize", json!({"inputs": "ab  cd"})).await;
    assert_eq!(s, 200);
    let id = |w: &str| {
        // the simulator's ids of two words that are not vocabulary spellings
        servebench_sim::tokenizer::encode(w)[0]
    };
    assert_eq!(
        v,
        json!([{"id": id("ab"), "text": "ab", "start": 0, "stop": 2},
               {"id": id("cd"), "text": "cd", "start": 4, "stop": 6}])
    );
    let (s, _) = post(&h, "/tokenize", json!({"prompt": "a"})).await;
    assert_eq!(s, 422, "`inputs` is required");
    let (_, v) = get(&h, "/info").await;
    assert_eq!(v["model_id"], "sim-model");
    assert_eq!(v["max_total_tokens"], 4096);
    assert_eq!(v["router"], "text-generation-router");
    assert_eq!(v["version"], "3.3.6-dev0");
    let (_, v) = get(&h, "/v1/models").await;
    assert_eq!(
        v,
        json!({"object": "list", "data": [{"id": "sim-model", "object": "model",
                                           "created": 0, "owned_by": "sim-model"}]})
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// TensorRT-LLM: only /_internal/tokenize {prompt} → {count, tokens}.
#[tokio::test]
async fn trtllm_tokenizes_only_at_internal_tokenize() {
    let h = started(Engine::Trtllm).await;
    let (s, _) = post(&h, "/tokenize", json!({"prompt": "a b"})).await;
    assert_eq!(s, 404);
    let (s, v) = post(&h, "/_internal/tokenize", json!({"prompt": "a b"})).await;
    assert_eq!((s, v), (200, json!({"count": 2, "tokens": [0, 1]})));
    let (s, v) = post(
        &h,
        "/_internal/tokenize",
        json!({"messages": [{"role": "user", "content": "a"}]}),
    )
    .await;
    assert_eq!(s, 400);
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.contains("extra_forbidden")),
        "{v}"
    );
    let (_, v) = get(&h, "/version").await;
    assert_eq!(v, json!({"version": "1.0.0rc4"}));
    let (_, v) = get(&h, "/v1/models").await;
    assert_eq!(v["data"][0]["owned_by"], "tensorrt_llm");
    let (_, v) = get(&h, "/server_info").await;
    assert_eq!(v["max_batch_size"], 256);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// transformers serve 5.24.0: no tokenize route, FastAPI 404s, the pinned model listed.
#[tokio::test]
async fn transformers_has_no_tokenizer_and_lists_its_pinned_model() {
    let h = started(Engine::Transformers).await;
    let (s, v) = post(&h, "/tokenize", json!({"prompt": "a"})).await;
    assert_eq!((s, v), (404, json!({"detail": "Not Found"})));
    let (_, v) = get(&h, "/v1/models").await;
    assert_eq!(
        v,
        json!({"object": "list", "data": [{"owned_by": "", "id": "sim-model",
               "object": "model", "created": 0, "status": {"value": "loaded"}}]})
    );
    let (_, v) = get(&h, "/health").await;
    assert_eq!(v, json!({"status": "ok"}));
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// The generic dialect is unchanged, and every personality keeps the simulator's own
// /v1/sim/info, which names the personality.
#[tokio::test]
async fn every_personality_keeps_the_simulators_own_info() {
    for p in [
        Engine::Openai,
        Engine::Sglang,
        Engine::Vllm,
        Engine::Llamacpp,
        Engine::Tgi,
        Engine::Trtllm,
        Engine::Transformers,
    ] {
        let h = started(p).await;
        let (s, v) = get(&h, "/v1/sim/info").await;
        assert_eq!(s, 200);
        assert_eq!(v["server"], "servebench-sim");
        assert_eq!(v["wire"]["engine"], servebench_sim::engine_name(p));
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}
