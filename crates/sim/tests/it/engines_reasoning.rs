//! `--reasoning-tokens N`: a chat answer's first N tokens in the engine's reasoning field,
//! then the answer; `usage.completion_tokens_details.reasoning_tokens` where the engine
//! sends it (sources in `crates/engines/src/<engine>/dialect`).

use crate::common;

use common::engines::{engine, shapes};
use common::*;
use serde_json::{Value, json};
use servebench_engines::Engine;

fn chat(stream: bool) -> Value {
    json!({"model": "sim-model", "messages": [{"role": "user", "content": "a b"}],
           "max_tokens": 4, "stream": stream,
           "stream_options": if stream { json!({"include_usage": true}) } else { Value::Null }})
}

/// The deltas of the token chunks (not the role chunk, the finish or the usage).
fn token_deltas(got: &[Value]) -> Vec<Value> {
    got.iter()
        .filter_map(|c| c["choices"].get(0).map(|ch| ch["delta"].clone()))
        .filter(|d| {
            ["content", "reasoning", "reasoning_content"]
                .iter()
                .any(|k| d[*k].as_str().is_some_and(|s| s == "<tok>"))
        })
        .collect()
}

#[tokio::test]
async fn reasoning_streams_first_in_each_engines_field() {
    let tok = json!("<tok>");
    let cases = [
        (
            Engine::Openai,
            json!({"reasoning_content": tok}),
            json!({"content": tok}),
            Some(2),
        ),
        // vLLM 0.33.0: DeltaMessage.reasoning; reasoning tokens reported with a parser.
        (
            Engine::Vllm,
            json!({"reasoning": tok}),
            json!({"content": tok}),
            Some(2),
        ),
        // SGLang 0.5.23: StreamDelta(reasoning_content=…), usage reasoning_tokens.
        (
            Engine::Sglang,
            json!({"reasoning_content": tok}),
            json!({"reasoning_content": null, "content": tok}),
            Some(2),
        ),
        // llama.cpp: diff.reasoning_content_delta; its usage has no details.
        (
            Engine::Llamacpp,
            json!({"reasoning_content": tok}),
            json!({"content": tok}),
            None,
        ),
        // TGI parses no reasoning: the thinking is part of the content.
        (
            Engine::Tgi,
            json!({"role": "assistant", "content": tok}),
            json!({"role": "assistant", "content": tok}),
            None,
        ),
        // TensorRT-LLM: both fields after its reasoning parser, the empty one "".
        (
            Engine::Trtllm,
            json!({"content": "", "reasoning_content": tok}),
            json!({"content": tok, "reasoning_content": ""}),
            None,
        ),
        // transformers serve: a ReasoningText item becomes reasoning_content.
        (
            Engine::Transformers,
            json!({"reasoning_content": tok}),
            json!({"content": tok}),
            None,
        ),
    ];
    for (p, reasoning, content, details) in cases {
        let mut c = engine(p);
        c.output.reasoning_tokens = 2;
        let h = start(c).await;
        let url = format!("{}/v1/chat/completions", h.base_url());
        let s = stream(&client(), &url, &chat(true)).await;
        assert_eq!(s.status, 200, "{p:?}: {:?}", s.events);
        let got = shapes(&s.events);
        let deltas = token_deltas(&got);
        assert_eq!(
            deltas,
            vec![reasoning.clone(), reasoning, content.clone(), content],
            "{p:?}: {got:?}"
        );
        let usage = got
            .iter()
            .rev()
            .find(|c| c["usage"].is_object())
            .map(|c| c["usage"].clone())
            .unwrap_or_default();
        assert_eq!(usage["completion_tokens"], 4, "{p:?}: {usage}");
        assert_eq!(
            usage["completion_tokens_details"]["reasoning_tokens"].as_u64(),
            details,
            "{p:?}: {usage}"
        );
        if p == Engine::Sglang {
            assert_eq!(usage["reasoning_tokens"], 2);
        }
        // Non-streamed: the reasoning in the message's reasoning field.
        let (s, v) = post_json(&client(), &url, &chat(false)).await;
        assert_eq!(s, 200, "{v}");
        let message = &v["choices"][0]["message"];
        let field = match p {
            Engine::Vllm => "reasoning",
            _ => "reasoning_content",
        };
        let content = message["content"].as_str().unwrap_or_default();
        match p {
            Engine::Tgi => assert_eq!(content.split_whitespace().count(), 4, "{v}"),
            _ => {
                assert_eq!(content.split_whitespace().count(), 2, "{p:?}: {v}");
                let r = message[field].as_str().unwrap_or_default();
                assert_eq!(r.split_whitespace().count(), 2, "{p:?}: {v}");
            }
        }
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

// Completions have no reasoning field: the text is all of it.
#[tokio::test]
async fn completions_carry_no_reasoning_split() {
    let mut c = engine(Engine::Vllm);
    c.output.reasoning_tokens = 2;
    let h = start(c).await;
    let (_, v) = post_json(
        &client(),
        &format!("{}/v1/completions", h.base_url()),
        &json!({"prompt": "a", "max_tokens": 4}),
    )
    .await;
    assert_eq!(
        v["choices"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .split_whitespace()
            .count(),
        4
    );
    assert!(v["usage"]["completion_tokens_details"].is_null(), "{v}");
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
