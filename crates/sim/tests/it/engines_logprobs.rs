//! Log-probabilities and token ids, asked for the way each engine reads them and answered
//! in its shape (sources in `crates/engines/src/dialect/logprobs.rs` and each engine's
//! module).

use crate::common;

use common::engines::engine;
use common::*;
use serde_json::{Value, json};
use servebench_engines::Engine;

fn chat(extra: Value) -> Value {
    let mut b = json!({"model": "sim-model", "messages": [{"role": "user", "content": "a b"}],
                       "max_tokens": 3, "stream": true});
    merge(&mut b, extra);
    b
}

fn completion(extra: Value) -> Value {
    let mut b = json!({"model": "sim-model", "prompt": "a b", "max_tokens": 3, "stream": true});
    merge(&mut b, extra);
    b
}

fn merge(b: &mut Value, extra: Value) {
    if let (Some(m), Value::Object(e)) = (b.as_object_mut(), extra) {
        m.extend(e);
    }
}

/// The token chunks of a stream: events whose first choice carries text.
fn token_chunks(s: &Streamed) -> Vec<(String, Value)> {
    s.events
        .iter()
        .filter(|e| !e.text().is_empty())
        .filter_map(|e| e.json().map(|v| (e.data.clone(), v)))
        .collect()
}

/// The keys of the first log-probability entry, in the order the raw JSON writes them.
fn entry_keys(raw: &str) -> Vec<&'static str> {
    let Some(start) = raw.find(r#""logprobs":{"content":[{"#) else {
        return Vec::new();
    };
    let rest = &raw[start..];
    let mut found: Vec<(usize, &'static str)> = ["id", "token", "logprob", "bytes", "top_logprobs"]
        .into_iter()
        .filter_map(|k| rest.find(&format!("\"{k}\":")).map(|at| (at, k)))
        .collect();
    found.sort_unstable();
    found.into_iter().map(|(_, k)| k).collect()
}

async fn streamed(p: Engine, path: &str, body: &Value) -> Streamed {
    let h = start(engine(p)).await;
    let s = stream(&client(), &format!("{}{path}", h.base_url()), body).await;
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.status, 200, "{p:?}: {:?}", s.events);
    s
}

#[tokio::test]
async fn chat_logprobs_in_each_engines_shape() {
    let cases: [(Engine, &[&str]); 6] = [
        // OpenAI's ChatCompletionLogProbsContent (vLLM 0.33.0 chat_completion/protocol.py:96-111).
        (
            Engine::Openai,
            &["token", "logprob", "bytes", "top_logprobs"],
        ),
        (Engine::Vllm, &["token", "logprob", "bytes", "top_logprobs"]),
        // SGLang 0.5.23 entrypoints/openai/protocol.py:157-172: bytes before logprob.
        (
            Engine::Sglang,
            &["token", "bytes", "logprob", "top_logprobs"],
        ),
        // llama.cpp server-task.cpp: the id first.
        (
            Engine::Llamacpp,
            &["id", "token", "bytes", "logprob", "top_logprobs"],
        ),
        // TGI router/src/lib.rs ChatCompletionLogprob: no bytes.
        (Engine::Tgi, &["token", "logprob", "top_logprobs"]),
        // TensorRT-LLM create_logprobs (postprocess_handlers.py).
        (
            Engine::Trtllm,
            &["token", "logprob", "bytes", "top_logprobs"],
        ),
    ];
    for (p, keys) in cases {
        let s = streamed(
            p,
            "/v1/chat/completions",
            &chat(json!({"logprobs": true, "top_logprobs": 2})),
        )
        .await;
        let chunks = token_chunks(&s);
        assert_eq!(chunks.len(), 3, "{p:?}: {:?}", s.events);
        for (raw, v) in &chunks {
            assert_eq!(entry_keys(raw), keys.to_vec(), "{p:?}: {raw}");
            let entry = &v["choices"][0]["logprobs"]["content"][0];
            let delta = &v["choices"][0]["delta"]["content"];
            assert_eq!(&entry["token"], delta, "{p:?}: {raw}");
            let top = entry["top_logprobs"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert_eq!(top.len(), 2, "{p:?}: {raw}");
            // The chosen token is the most likely one; logprobs are below 0 and fall.
            assert_eq!(top[0]["token"], entry["token"]);
            let lp = |e: &Value| e["logprob"].as_f64().unwrap_or(0.0);
            assert!(lp(entry) < 0.0 && lp(&top[1]) < lp(&top[0]), "{p:?}: {raw}");
        }
    }
    // transformers serve accepts and ignores logprobs.
    let s = streamed(
        Engine::Transformers,
        "/v1/chat/completions",
        &chat(json!({"logprobs": true, "top_logprobs": 2})),
    )
    .await;
    for (raw, v) in token_chunks(&s) {
        assert!(v["choices"][0]["logprobs"].is_null(), "{raw}");
    }
}

#[tokio::test]
async fn completion_logprobs_in_each_engines_shape() {
    let body = completion(json!({"logprobs": 2}));
    for p in [Engine::Openai, Engine::Vllm, Engine::Sglang] {
        let s = streamed(p, "/v1/completions", &body).await;
        let chunks = token_chunks(&s);
        assert_eq!(chunks.len(), 3, "{p:?}: {:?}", s.events);
        let mut expect_offset = 0;
        for (raw, v) in &chunks {
            let c = &v["choices"][0];
            let lp = &c["logprobs"];
            assert_eq!(lp["tokens"], json!([c["text"]]), "{p:?}: {raw}");
            assert_eq!(lp["token_logprobs"].as_array().map(Vec::len), Some(1));
            let top = lp["top_logprobs"][0]
                .as_object()
                .cloned()
                .unwrap_or_default();
            assert_eq!(top.len(), 2, "{p:?}: {raw}");
            let offset = lp["text_offset"][0].as_i64().unwrap_or(-2);
            if p == Engine::Sglang {
                // "Not supported yet" (entrypoints/openai/utils.py): always -1.
                assert_eq!(offset, -1, "{raw}");
            } else {
                // vLLM: characters of the text before the token.
                assert_eq!(offset, expect_offset, "{p:?}: {raw}");
                expect_offset += c["text"].as_str().map_or(0, |t| t.len() as i64);
            }
        }
    }
    // llama.cpp: its own `{"content": [...]}` on completions too.
    let s = streamed(Engine::Llamacpp, "/v1/completions", &body).await;
    for (raw, _) in token_chunks(&s) {
        assert_eq!(
            entry_keys(&raw),
            ["id", "token", "bytes", "logprob", "top_logprobs"],
            "{raw}"
        );
    }
    // TGI's and TensorRT-LLM's completion routes never fill logprobs; transformers ignores.
    for p in [Engine::Tgi, Engine::Trtllm, Engine::Transformers] {
        let s = streamed(p, "/v1/completions", &body).await;
        let chunks = token_chunks(&s);
        assert!(!chunks.is_empty(), "{p:?}");
        for (raw, v) in chunks {
            assert!(v["choices"][0]["logprobs"].is_null(), "{p:?}: {raw}");
        }
    }
}

#[tokio::test]
async fn vllm_names_tokens_by_id_and_returns_token_ids() {
    let s = streamed(
        Engine::Vllm,
        "/v1/chat/completions",
        &chat(json!({"logprobs": true, "return_tokens_as_token_ids": true,
                     "return_token_ids": true})),
    )
    .await;
    for (raw, v) in token_chunks(&s) {
        let c = &v["choices"][0];
        let id = c["token_ids"][0]
            .as_u64()
            .unwrap_or_else(|| panic!("{raw}"));
        assert_eq!(
            c["logprobs"]["content"][0]["token"],
            format!("token_id:{id}")
        );
        assert_eq!(c["logprobs"]["content"][0]["top_logprobs"], json!([]));
    }
    // SGLang: return_token_ids on completions; no return_tokens_as_token_ids field.
    let s = streamed(
        Engine::Sglang,
        "/v1/completions",
        &completion(json!({"logprobs": 1, "return_token_ids": true})),
    )
    .await;
    for (raw, v) in token_chunks(&s) {
        let c = &v["choices"][0];
        assert!(c["token_ids"][0].is_u64(), "{raw}");
        assert_eq!(c["logprobs"]["tokens"][0], c["text"], "{raw}");
    }
}

#[tokio::test]
async fn whole_answers_carry_every_tokens_logprobs() {
    for p in [Engine::Vllm, Engine::Sglang, Engine::Openai] {
        let h = start(engine(p)).await;
        let url = format!("{}/v1/chat/completions", h.base_url());
        let mut body = chat(json!({"logprobs": true, "top_logprobs": 1, "max_tokens": 5}));
        body["stream"] = json!(false);
        let (st, v) = post_json(&client(), &url, &body).await;
        assert_eq!(st, 200, "{v}");
        let content = v["choices"][0]["logprobs"]["content"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let text: String = content.iter().filter_map(|e| e["token"].as_str()).collect();
        let completion_tokens = v["usage"]["completion_tokens"].as_u64().unwrap_or(0);
        assert_eq!(content.len() as u64, completion_tokens, "{p:?}: {v}");
        assert_eq!(
            text,
            v["choices"][0]["message"]["content"].as_str().unwrap_or("")
        );
        // Completions: vLLM's legacy offsets count from 0.
        let url = format!("{}/v1/completions", h.base_url());
        let mut body = completion(json!({"logprobs": 1, "max_tokens": 4}));
        body["stream"] = json!(false);
        let (_, v) = post_json(&client(), &url, &body).await;
        let lp = &v["choices"][0]["logprobs"];
        assert_eq!(lp["tokens"].as_array().map(Vec::len), Some(4), "{p:?}: {v}");
        if p != Engine::Sglang {
            assert_eq!(lp["text_offset"][0], 0, "{v}");
        }
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

// llama.cpp reads `top_logprobs` with a default of 20 (server-common.cpp:1429-1438); vLLM
// with none (`top_logprobs: []`).
#[tokio::test]
async fn llamacpp_gives_twenty_top_logprobs_by_default() {
    for (p, n) in [(Engine::Llamacpp, 20), (Engine::Vllm, 0)] {
        let s = streamed(p, "/v1/chat/completions", &chat(json!({"logprobs": true}))).await;
        for (raw, v) in token_chunks(&s) {
            let top = &v["choices"][0]["logprobs"]["content"][0]["top_logprobs"];
            assert_eq!(top.as_array().map(Vec::len), Some(n), "{p:?}: {raw}");
        }
    }
}
