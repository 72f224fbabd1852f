//! Which request fields each personality accepts, refuses or drops, as its engine's source
//! does (versions and files in `crates/engines/src/<engine>/dialect`).

use crate::common;

use common::engines::engine;
use common::*;
use serde_json::{Value, json};
use servebench_engines::Engine;

async fn post(p: Engine, path: &str, body: Value) -> (u16, Value) {
    let h = start(engine(p)).await;
    let r = post_json(&client(), &format!("{}{path}", h.base_url()), &body).await;
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    r
}

fn chat(extra: Value) -> Value {
    let mut b = json!({"model": "sim-model", "messages": [{"role": "user", "content": "hi"}],
                       "max_tokens": 4});
    if let (Some(b), Some(extra)) = (b.as_object_mut(), extra.as_object()) {
        b.extend(extra.clone());
    }
    b
}

// transformers 5.24.0, cli/serving/utils.py:1179-1190: 422 "Unexpected fields".
#[tokio::test]
async fn transformers_refuses_fields_outside_the_openai_request_with_422() {
    let (s, v) = post(
        Engine::Transformers,
        "/v1/chat/completions",
        chat(json!({"ignore_eos": true, "min_tokens": 4})),
    )
    .await;
    assert_eq!(s, 422);
    assert_eq!(
        v,
        json!({"detail": "Unexpected fields in the request: {'ignore_eos', 'min_tokens'}"})
    );
    // Accepted and ignored: logprobs, stream_options (a warning in the engine's log).
    let (s, v) = post(
        Engine::Transformers,
        "/v1/chat/completions",
        chat(json!({"logprobs": true, "top_logprobs": 2, "seed": 3})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let (s, v) = post(
        Engine::Transformers,
        "/v1/completions",
        json!({"prompt": [1, 2, 3], "max_tokens": 2}),
    )
    .await;
    assert_eq!((s, v), (400, json!({"detail": "prompt must be a string."})));
    let (s, v) = post(
        Engine::Transformers,
        "/v1/chat/completions",
        chat(json!({"model": "other"})),
    )
    .await;
    assert_eq!(
        (s, v),
        (
            400,
            json!({"detail": "Server is pinned to 'sim-model'; requested 'other'."})
        )
    );
}

// transformers 5.24.0, utils.py:1246-1251: `generation_config` (a JSON string) sets
// min_new_tokens / max_new_tokens; without it max_new_tokens is at least 1024.
#[tokio::test]
async fn transformers_generation_config_fixes_the_output_length() {
    let mut c = engine(Engine::Transformers);
    c.engine.eos_mean_tokens = 3.0;
    c.seed = 5;
    let h = start(c).await;
    let url = format!("{}/v1/chat/completions", h.base_url());
    let mut free = Vec::new();
    let mut fixed = Vec::new();
    for _ in 0..6 {
        let (_, v) = post_json(&client(), &url, &chat(json!({"max_tokens": 24}))).await;
        free.push(v["usage"]["completion_tokens"].as_u64().unwrap_or(0));
        let gc = json!({"min_new_tokens": 24, "max_new_tokens": 24}).to_string();
        let (s, v) = post_json(
            &client(),
            &url,
            &json!({"messages": [{"role": "user", "content": "hi"}],
                    "generation_config": gc}),
        )
        .await;
        assert_eq!(s, 200, "{v}");
        fixed.push(v["usage"]["completion_tokens"].as_u64().unwrap_or(0));
        assert_eq!(v["choices"][0]["finish_reason"], "length");
    }
    assert!(
        free.iter().any(|&n| n < 24),
        "EOS should end some early: {free:?}"
    );
    assert_eq!(fixed, vec![24; 6]);
    // Without max_tokens and generation_config: 1024 at most, EOS first here.
    let (_, v) = post_json(
        &client(),
        &url,
        &json!({"messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert!(
        v["usage"]["completion_tokens"]
            .as_u64()
            .is_some_and(|n| n <= 1024)
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// TensorRT-LLM openai_protocol.py: extra="forbid", `model` required; the server answers
// RequestValidationError 400 {"error": str(exc)}.
#[tokio::test]
async fn trtllm_refuses_unknown_fields_and_a_missing_model_with_400() {
    let (s, v) = post(
        Engine::Trtllm,
        "/v1/completions",
        json!({"model": "sim-model", "prompt": "a", "max_tokens": 2, "foo": 1}),
    )
    .await;
    assert_eq!(s, 400);
    assert_eq!(
        v,
        json!({"error": "1 validation error:\n  {'type': 'extra_forbidden', 'loc': ('body', \
                         'foo'), 'msg': 'Extra inputs are not permitted', 'input': 1}"})
    );
    let (s, v) = post(
        Engine::Trtllm,
        "/v1/completions",
        json!({"prompt": "a", "max_tokens": 2}),
    )
    .await;
    assert_eq!(s, 400);
    let msg = v["error"].as_str().unwrap_or_default();
    assert!(
        msg.contains("'loc': ('body', 'model'), 'msg': 'Field required'"),
        "{msg}"
    );
    // Its own sampling fields are fine.
    let (s, _) = post(
        Engine::Trtllm,
        "/v1/chat/completions",
        chat(json!({"ignore_eos": true, "min_tokens": 2, "top_k": 1})),
    )
    .await;
    assert_eq!(s, 200);
}

async fn lengths(c: servebench_sim::SimConfig, extra: Value) -> Vec<u64> {
    let h = start(c).await;
    let url = format!("{}/v1/completions", h.base_url());
    let mut out = Vec::new();
    for _ in 0..8 {
        let mut body = json!({"model": "sim-model", "prompt": "a b", "max_tokens": 20});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        let (s, v) = post_json(&client(), &url, &body).await;
        assert_eq!(s, 200, "{v}");
        out.push(v["usage"]["completion_tokens"].as_u64().unwrap_or(0));
    }
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    out
}

fn with_eos(p: Engine) -> servebench_sim::SimConfig {
    let mut c = engine(p);
    c.engine.eos_mean_tokens = 3.0;
    c.seed = 9;
    c
}

// TGI db931fcf, router/src/validation.rs:430: no ignore_eos, dropped silently; the model's
// EOS (the simulator's --eos-mean-tokens) ends the output.
#[tokio::test]
async fn tgi_drops_ignore_eos_and_min_tokens_so_lengths_are_not_fixed() {
    let tgi = lengths(
        with_eos(Engine::Tgi),
        json!({"ignore_eos": true, "min_tokens": 20}),
    )
    .await;
    assert!(tgi.iter().any(|&n| n < 20), "{tgi:?}");
    let vllm = lengths(with_eos(Engine::Vllm), json!({"ignore_eos": true})).await;
    assert_eq!(vllm, vec![20; 8]);
}

// llama.cpp has ignore_eos but no min_tokens (server-schema.cpp); vLLM and SGLang honour
// min_tokens (vllm completion/protocol.py:85-86, sglang protocol.py:407).
#[tokio::test]
async fn min_tokens_counts_on_vllm_and_sglang_not_on_llamacpp() {
    let llama = lengths(with_eos(Engine::Llamacpp), json!({"min_tokens": 20})).await;
    assert!(llama.iter().any(|&n| n < 20), "{llama:?}");
    let llama = lengths(with_eos(Engine::Llamacpp), json!({"ignore_eos": true})).await;
    assert_eq!(llama, vec![20; 8]);
    for p in [Engine::Vllm, Engine::Sglang] {
        let n = lengths(with_eos(p), json!({"min_tokens": 20})).await;
        assert_eq!(n, vec![20; 8], "{p:?}");
    }
}

// vLLM 0.33.0 serve/engine/serving.py:75-84.
#[tokio::test]
async fn vllm_answers_another_model_with_its_404() {
    let (s, v) = post(
        Engine::Vllm,
        "/v1/chat/completions",
        chat(json!({"model": "x"})),
    )
    .await;
    assert_eq!(s, 404);
    assert_eq!(
        v,
        json!({"error": {"message": "The model `x` does not exist. Valid aliases: sim-model.",
                         "type": "NotFoundError", "param": "model", "code": 404}})
    );
    // SGLang does not check it (it echoes it), nor llama.cpp.
    for p in [Engine::Sglang, Engine::Llamacpp] {
        let (s, _) = post(p, "/v1/chat/completions", chat(json!({"model": "x"}))).await;
        assert_eq!(s, 200, "{p:?}");
    }
}

// vLLM (completion/protocol.py:606) and TensorRT-LLM refuse stream_options without
// stream; SGLang takes it.
#[tokio::test]
async fn stream_options_without_stream() {
    let body = chat(json!({"stream_options": {"include_usage": true}}));
    let (s, v) = post(Engine::Vllm, "/v1/chat/completions", body.clone()).await;
    assert_eq!(s, 400, "{v}");
    let (s, v) = post(Engine::Trtllm, "/v1/chat/completions", body.clone()).await;
    assert_eq!(s, 400, "{v}");
    let (s, _) = post(Engine::Sglang, "/v1/chat/completions", body).await;
    assert_eq!(s, 200);
}

// Context windows: llama.cpp refuses only a prompt that fills the slot's context and cuts
// a longer request (server-context.cpp:3175-3192, 1860-1868); TGI's validation 422
// (validation.rs:999); vLLM-style 400 elsewhere.
#[tokio::test]
async fn context_window_refusals_per_engine() {
    let limit = 64;
    let prompt60 = prompt(60);
    let run = |p: Engine, prompt_text: String, max: u32| async move {
        let mut c = engine(p);
        c.engine.max_model_len = limit;
        let h = start(c).await;
        let r = post_json(
            &client(),
            &format!("{}/v1/completions", h.base_url()),
            &json!({"model": "sim-model", "prompt": prompt_text, "max_tokens": max}),
        )
        .await;
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
        r
    };
    let (s, v) = run(Engine::Llamacpp, prompt60.clone(), 10).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["usage"]["completion_tokens"], 3, "cut at 64 - 60 - 1");
    assert_eq!(v["choices"][0]["finish_reason"], "length");
    let (s, v) = run(Engine::Llamacpp, prompt(64), 10).await;
    assert_eq!(s, 400);
    assert_eq!(
        v,
        json!({"error": {"code": 400,
                         "message": "request (64 tokens) exceeds the available context size \
                                     (64 tokens), try increasing it",
                         "type": "exceed_context_size_error", "n_prompt_tokens": 64,
                         "n_ctx": 64}})
    );
    let (s, v) = run(Engine::Tgi, prompt60.clone(), 10).await;
    assert_eq!(s, 422);
    // `InferError::ValidationError`'s Display prefixes the message (infer/mod.rs:414-415).
    assert_eq!(
        v,
        json!({"error": "Input validation error: `inputs` tokens + `max_new_tokens` must be \
                         <= 64. Given: 60 `inputs` tokens and 10 `max_new_tokens`",
               "error_type": "validation"})
    );
    let (s, v) = run(Engine::Sglang, prompt60, 10).await;
    assert_eq!(s, 400);
    assert_eq!(v["object"], "error");
    assert_eq!(v["type"], "BadRequestError");
}

// Malformed bodies: TGI's axum Json extractor answers 422 in plain text; SGLang 400 in
// its flat error shape, type "Bad Request" (http_server.py:635-690).
#[tokio::test]
async fn malformed_bodies_per_engine() {
    for (p, status) in [(Engine::Tgi, 422), (Engine::Sglang, 400)] {
        let h = start(engine(p)).await;
        let resp = client()
            .post(format!("{}/v1/completions", h.base_url()))
            .header("content-type", "application/json")
            .body("{\"prompt\": ")
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(resp.status().as_u16(), status, "{p:?}");
        let text = resp.text().await.unwrap_or_default();
        match p {
            Engine::Tgi => assert!(
                text.starts_with("Failed to deserialize the JSON body into the target type"),
                "{text}"
            ),
            _ => {
                let v: Value = serde_json::from_str(&text).unwrap_or_default();
                assert_eq!(v["type"], "Bad Request", "{text}");
                assert_eq!(v["object"], "error");
            }
        }
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

// TGI answers a streamed request it refuses with HTTP 200, an OpenAI error event
// `{"error":{"message","http_status_code":422}}` and `[DONE]` (db931fcf infer/mod.rs:445-461,
// server.rs:890,981,1241-1244): a validation error, and a request beyond
// `--max-concurrent-requests` (128, "Model is overloaded", infer/mod.rs:84,110-120). Before:
// the simulator answered both with an HTTP 422 or 429 body.
#[tokio::test]
async fn tgi_refuses_a_streamed_request_inside_the_stream() {
    let mut c = engine(Engine::Tgi);
    c.engine.max_model_len = 64;
    c.engine.decode_base_ms = 100.0;
    let h = start(c).await;
    let url = format!("{}/v1/completions", h.base_url());
    let body = |prompt_text: String, max: u32| json!({"model": "sim-model", "prompt": prompt_text, "max_tokens": max, "stream": true});
    let r = client()
        .post(&url)
        .json(&body(prompt(60), 10))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.status().as_u16(), 200);
    let t = r.text().await.unwrap_or_default();
    assert_eq!(
        t,
        "data: {\"error\":{\"message\":\"Input validation error: `inputs` tokens + \
         `max_new_tokens` must be <= 64. Given: 60 `inputs` tokens and 10 `max_new_tokens`\",\
         \"http_status_code\":422}}\n\ndata: [DONE]\n\n"
    );
    // 128 streams in flight, then one more.
    let held: Vec<_> = (0..128)
        .map(|_| {
            let (url, b) = (url.clone(), body(prompt(4), 50));
            tokio::spawn(async move {
                let r = client().post(&url).json(&b).send().await;
                match r {
                    Ok(r) => r.text().await.unwrap_or_default(),
                    Err(e) => e.to_string(),
                }
            })
        })
        .collect();
    let t0 = std::time::Instant::now();
    while h.stats().in_flight < 128 && t0.elapsed() < std::time::Duration::from_secs(20) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(h.stats().in_flight, 128);
    let r = client()
        .post(&url)
        .json(&body(prompt(4), 8))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.status().as_u16(), 200);
    let t = r.text().await.unwrap_or_default();
    assert_eq!(
        t,
        "data: {\"error\":{\"message\":\"Model is overloaded\",\"http_status_code\":422}}\n\n\
         data: [DONE]\n\n"
    );
    for j in held {
        let t = j.await.unwrap_or_default();
        assert!(
            t.ends_with("data: [DONE]\n\n") && !t.contains("\"error\""),
            "{t}"
        );
    }
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
