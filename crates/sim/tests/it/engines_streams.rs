//! Each personality's streamed chunks against what that engine's source writes (the file
//! and version of each shape are in `crates/engines/src/<engine>/dialect` and
//! docs/simulator.md). Ids, times and token words are normalised (`common::engines`);
//! keys, nulls, the order of chunks and the counts are compared exactly.

use crate::common;

use common::engines::{engine, shapes};
use common::*;
use serde_json::{Value, json};
use servebench_engines::Engine;

const DONE: &str = "[DONE]";

async fn events(p: Engine, path: &str, body: Value) -> (Vec<Value>, Streamed) {
    let h = start(engine(p)).await;
    let s = stream(&client(), &format!("{}{path}", h.base_url()), &body).await;
    assert_eq!(s.status, 200, "{:?}", s.events);
    assert!(s.error.is_none(), "{:?}", s.error);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    (shapes(&s.events), s)
}

fn completion(usage: bool) -> Value {
    json!({"model": "sim-model", "prompt": "a b c", "max_tokens": 2, "stream": true,
           "stream_options": {"include_usage": usage}})
}

fn chat(usage: bool) -> Value {
    json!({"model": "sim-model", "messages": [{"role": "user", "content": "a b"}],
           "max_tokens": 2, "stream": true, "stream_options": {"include_usage": usage}})
}

/// The fingerprint of a chunk, checked against `prefix` + 8 hex digits, then blanked.
fn blank_fingerprint(v: &mut [Value], prefix: &str) {
    for c in v {
        if let Some(fp) = c.get_mut("system_fingerprint") {
            let s = fp.as_str().unwrap_or_default().to_owned();
            let hex = s.strip_prefix(prefix).unwrap_or_default();
            assert!(
                hex.len() == 8 && hex.chars().all(|c| c.is_ascii_hexdigit()),
                "fingerprint {s:?}"
            );
            *fp = json!("<fp>");
        }
    }
}

// vLLM 0.33.0: openai/completion/serving.py:437-546.
#[tokio::test]
async fn vllm_completions_chunks_and_usage_chunk() {
    let (mut got, _) = events(Engine::Vllm, "/v1/completions", completion(true)).await;
    blank_fingerprint(&mut got, "vllm-0.33.0-");
    let choice = |finish: Value| {
        json!({"index": 0, "text": "<tok>", "logprobs": null, "finish_reason": finish,
               "stop_reason": null, "prompt_token_ids": null, "token_ids": null,
               "weight_versions": null})
    };
    let chunk = |finish: Value| {
        json!({"id": "<id>", "object": "text_completion", "created": 0, "model": "sim-model",
               "choices": [choice(finish)], "kv_transfer_params": null})
    };
    assert_eq!(
        got,
        vec![
            chunk(Value::Null),
            chunk(json!("length")),
            json!({"id": "<id>", "object": "text_completion", "created": 0,
                   "model": "sim-model", "choices": [],
                   "usage": {"prompt_tokens": 3, "total_tokens": 5, "completion_tokens": 2},
                   "system_fingerprint": "<fp>"}),
            json!(DONE),
        ]
    );
}

// vLLM 0.33.0: openai/chat_completion/serving.py:480-930, delta generate/base/protocol.py.
#[tokio::test]
async fn vllm_chat_role_chunk_tokens_fingerprint_on_the_last_without_usage() {
    let (mut got, s) = events(Engine::Vllm, "/v1/chat/completions", chat(false)).await;
    blank_fingerprint(&mut got, "vllm-0.33.0-");
    let head = |choices: Value| {
        json!({"id": "<id>", "object": "chat.completion.chunk", "created": 0,
               "model": "sim-model", "choices": choices})
    };
    let mut role = head(
        json!([{"index": 0, "delta": {"role": "assistant", "content": ""},
                                "logprobs": null, "finish_reason": null}]),
    );
    role["prompt_token_ids"] = Value::Null;
    role["prompt_text"] = Value::Null;
    let mut token = head(
        json!([{"index": 0, "delta": {"content": "<tok>"}, "logprobs": null,
                                 "finish_reason": null, "token_ids": null}]),
    );
    token["kv_transfer_params"] = Value::Null;
    let mut last = head(
        json!([{"index": 0, "delta": {"content": "<tok>"}, "logprobs": null,
                                "finish_reason": "length", "stop_reason": null,
                                "token_ids": null, "weight_versions": null}]),
    );
    last["system_fingerprint"] = json!("<fp>");
    last["kv_transfer_params"] = Value::Null;
    assert_eq!(got, vec![role, token, last, json!(DONE)]);
    // pydantic's field order: `system_fingerprint` before `kv_transfer_params`.
    let raw = &s.events[2].data;
    assert!(
        raw.find("system_fingerprint") < raw.find("kv_transfer_params"),
        "{raw}"
    );
}

// SGLang 0.5.23: entrypoints/openai/serving_completions.py:225-500, protocol.py:546-581.
#[tokio::test]
async fn sglang_completions_usage_null_on_chunks_and_reasoning_tokens_in_usage() {
    let (got, _) = events(Engine::Sglang, "/v1/completions", completion(true)).await;
    let chunk = |finish: Value| {
        json!({"id": "<id>", "object": "text_completion", "created": 0, "model": "sim-model",
               "choices": [{"index": 0, "text": "<tok>", "logprobs": null,
                            "finish_reason": finish, "matched_stop": null}],
               "usage": null})
    };
    assert_eq!(
        got,
        vec![
            chunk(Value::Null),
            chunk(json!("length")),
            json!({"id": "<id>", "object": "text_completion", "created": 0,
                   "model": "sim-model", "choices": [],
                   "usage": {"prompt_tokens": 3, "total_tokens": 5, "completion_tokens": 2,
                             "reasoning_tokens": 0}}),
            json!(DONE),
        ]
    );
}

// SGLang 0.5.23: serving_chat.py:2441-2805, sse_utils.py:13-99.
#[tokio::test]
async fn sglang_chat_empty_first_content_separate_finish_chunk_then_usage() {
    let (got, s) = events(Engine::Sglang, "/v1/chat/completions", chat(true)).await;
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "<id>", "object": "chat.completion.chunk", "created": 0,
               "model": "sim-model",
               "choices": [{"index": 0, "delta": delta, "logprobs": null,
                            "finish_reason": finish, "matched_stop": null}]})
    };
    let content = json!({"reasoning_content": null, "content": "<tok>"});
    assert_eq!(
        got,
        vec![
            chunk(
                json!({"reasoning_content": null, "role": "assistant", "content": ""}),
                Value::Null
            ),
            chunk(content.clone(), Value::Null),
            chunk(content, Value::Null),
            chunk(json!({"reasoning_content": null}), json!("length")),
            json!({"id": "<id>", "object": "chat.completion.chunk", "created": 0,
                   "model": "sim-model", "choices": [],
                   "usage": {"prompt_tokens": 5, "total_tokens": 7, "completion_tokens": 2,
                             "prompt_tokens_details": null, "reasoning_tokens": 0,
                             "completion_tokens_details": null}}),
            json!(DONE),
        ]
    );
    // msgspec writes `reasoning_content` first, always.
    assert!(
        s.events[1]
            .data
            .contains(r#""delta":{"reasoning_content":null,"content":"#),
        "{}",
        s.events[1].data
    );
}

// SGLang echoes the request's model, "default" when it names none.
#[tokio::test]
async fn sglang_chunks_echo_the_requested_model() {
    let mut body = completion(false);
    body["model"] = json!("whatever-the-client-says");
    let (got, _) = events(Engine::Sglang, "/v1/completions", body).await;
    assert_eq!(got[0]["model"], "whatever-the-client-says");
    let mut body = completion(false);
    body.as_object_mut().map(|o| o.remove("model"));
    let (got, _) = events(Engine::Sglang, "/v1/completions", body).await;
    assert_eq!(got[0]["model"], "default");
}

fn llama_timings() -> Value {
    json!({"cache_n": 0, "prompt_n": 0, "prompt_ms": 0, "prompt_per_token_ms": 0,
           "prompt_per_second": 0, "predicted_n": 0, "predicted_ms": 0,
           "predicted_per_token_ms": 0, "predicted_per_second": 0})
}

// llama.cpp (llama-cpp-python 0.3.36): server-task.cpp:320-412, 1073-1109.
#[tokio::test]
async fn llamacpp_completions_always_end_with_usage_and_timings() {
    let (got, s) = events(Engine::Llamacpp, "/v1/completions", completion(false)).await;
    let partial = json!({"choices": [{"text": "<tok>", "index": 0, "logprobs": null,
                                      "finish_reason": null}],
                         "created": 0, "model": "sim-model",
                         "system_fingerprint": "b0-unknown", "object": "text_completion",
                         "id": "<id>"});
    let last = json!({"choices": [{"text": "", "index": 0, "logprobs": null,
                                   "finish_reason": "length"}],
                      "created": 0, "model": "sim-model", "system_fingerprint": "b0-unknown",
                      "object": "text_completion",
                      "usage": {"completion_tokens": 2, "prompt_tokens": 3, "total_tokens": 5,
                                "prompt_tokens_details": {"cached_tokens": 0}},
                      "id": "<id>", "timings": llama_timings()});
    assert_eq!(got, vec![partial.clone(), partial, last, json!(DONE)]);
    // ordered_json keeps insertion order: `choices` first.
    assert!(s.events[0].data.starts_with(r#"{"choices":[{"text":"#));
    let t = s.events[2].json().unwrap_or_default();
    assert_eq!(t["timings"]["predicted_n"], 2);
    assert_eq!(t["timings"]["prompt_n"], 3);
}

// llama.cpp: server-task.cpp:462-526, 1111-1163; usage only with include_usage.
#[tokio::test]
async fn llamacpp_chat_role_null_content_then_finish_then_usage() {
    let head = |choices: Value| {
        json!({"choices": choices, "created": 0, "id": "<id>", "model": "sim-model",
               "system_fingerprint": "b0-unknown", "object": "chat.completion.chunk"})
    };
    let role = head(json!([{"finish_reason": null, "index": 0,
                            "delta": {"role": "assistant", "content": null}}]));
    let token = head(json!([{"finish_reason": null, "index": 0, "delta": {"content": "<tok>"}}]));
    let finish = head(json!([{"finish_reason": "length", "index": 0, "delta": {}}]));
    let (got, _) = events(Engine::Llamacpp, "/v1/chat/completions", chat(true)).await;
    let mut usage = head(json!([]));
    usage["usage"] = json!({"completion_tokens": 2, "prompt_tokens": 5, "total_tokens": 7,
                            "prompt_tokens_details": {"cached_tokens": 0}});
    usage["timings"] = llama_timings();
    assert_eq!(
        got,
        vec![
            role.clone(),
            token.clone(),
            token.clone(),
            finish.clone(),
            usage,
            json!(DONE)
        ]
    );
    let (got, _) = events(Engine::Llamacpp, "/v1/chat/completions", chat(false)).await;
    let mut finish = finish;
    finish["timings"] = llama_timings();
    assert_eq!(got, vec![role, token.clone(), token, finish, json!(DONE)]);
}

// TGI db931fcf: router/src/server.rs:857-875 — `finish_reason: ""` on non-final chunks.
#[tokio::test]
async fn tgi_completions_send_an_empty_finish_reason_until_the_end() {
    let (got, s) = events(Engine::Tgi, "/v1/completions", completion(true)).await;
    assert_eq!(
        got,
        vec![
            json!({"object": "text_completion", "id": "", "created": 0,
                   "choices": [{"index": 0, "text": "<tok>", "logprobs": null,
                                "finish_reason": ""}],
                   "model": "sim-model", "system_fingerprint": "3.3.6-dev0-native"}),
            json!({"object": "text_completion", "id": "", "created": 0, "model": "sim-model",
                   "system_fingerprint": "3.3.6-dev0-native",
                   "choices": [{"index": 0, "text": "<tok>", "logprobs": null,
                                "finish_reason": "length"}],
                   "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}),
            json!(DONE),
        ]
    );
    assert!(
        s.events[0]
            .data
            .starts_with(r#"{"object":"text_completion","id":"""#)
    );
}

// TGI db931fcf: chat.rs:67-299 — role in every delta, usage chunk with include_usage.
#[tokio::test]
async fn tgi_chat_role_in_every_delta_and_usage_chunk() {
    let (got, _) = events(Engine::Tgi, "/v1/chat/completions", chat(true)).await;
    let chunk = |finish: Value| {
        json!({"object": "chat.completion.chunk", "id": "", "created": 0, "model": "sim-model",
               "system_fingerprint": "3.3.6-dev0-native",
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": "<tok>"},
                            "logprobs": null, "finish_reason": finish}],
               "usage": null})
    };
    assert_eq!(
        got,
        vec![
            chunk(Value::Null),
            chunk(json!("length")),
            json!({"object": "chat.completion.chunk", "id": "", "created": 0,
                   "model": "sim-model", "system_fingerprint": "3.3.6-dev0-native",
                   "choices": [],
                   "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}),
            json!(DONE),
        ]
    );
}

// TensorRT-LLM: postprocess_handlers.py completion_stream_post_processor, as the search index
// holds it newest (2026): `_ensure_stream_metadata` gives the stream one id, `cmpl-<request
// id>`, and the usage chunk is a `CompletionStreamResponse` (`text_completion`). Older
// versions drew a new id per chunk and sent a `chat.completion.chunk`, which this test
// asserted before issue 49.
#[tokio::test]
async fn trtllm_completions_one_id_per_stream_and_a_text_completion_usage_chunk() {
    let (got, s) = events(Engine::Trtllm, "/v1/completions", completion(true)).await;
    let chunk = |finish: Value| {
        json!({"id": "<id>", "object": "text_completion", "created": 0, "model": "sim-model",
               "choices": [{"index": 0, "text": "<tok>", "token_ids": null, "logprobs": null,
                            "finish_reason": finish, "stop_reason": null,
                            "avg_decoded_tokens_per_iter": null}],
               "usage": null})
    };
    assert_eq!(
        got,
        vec![
            chunk(Value::Null),
            chunk(json!("length")),
            json!({"id": "<id>", "object": "text_completion", "created": 0,
                   "model": "sim-model", "choices": [],
                   "usage": {"prompt_tokens": 3, "total_tokens": 5, "completion_tokens": 2,
                             "prompt_tokens_details": {"cached_tokens": 0}}}),
            json!(DONE),
        ]
    );
    let ids: Vec<Value> = s.events[..3]
        .iter()
        .filter_map(|e| e.json().map(|v| v["id"].clone()))
        .collect();
    assert!(ids[0] == ids[1] && ids[1] == ids[2], "{ids:?}");
    assert!(ids[0].as_str().is_some_and(|i| i.starts_with("cmpl-")));
}

// TensorRT-LLM: chat_stream_post_processor — `data: {…} \n\n`, exclude_none deltas.
#[tokio::test]
async fn trtllm_chat_first_chunk_space_and_reasoning_content_in_deltas() {
    let (got, s) = events(Engine::Trtllm, "/v1/chat/completions", chat(false)).await;
    let head = |choice: Value| {
        json!({"id": "<id>", "object": "chat.completion.chunk", "created": 0,
               "model": "sim-model", "choices": [choice]})
    };
    assert_eq!(
        got,
        vec![
            head(json!({"index": 0, "delta": {"role": "assistant"}})),
            head(json!({"index": 0, "delta": {"content": "<tok>", "reasoning_content": ""}})),
            head(
                json!({"index": 0, "delta": {"content": "<tok>", "reasoning_content": ""},
                        "finish_reason": "length"})
            ),
            json!(DONE),
        ]
    );
    assert!(s.events[0].data.ends_with("} "), "{:?}", s.events[0].data);
}

// transformers 5.24.0: cli/serving/chat_completion.py:173-256 — no [DONE].
#[tokio::test]
async fn transformers_chat_usage_in_the_final_chunk_and_no_done() {
    let (got, s) = events(Engine::Transformers, "/v1/chat/completions", chat(false)).await;
    let chunk = |delta: Value| {
        json!({"id": "<id>", "choices": [{"delta": delta, "index": 0}], "created": 0,
               "model": "sim-model", "object": "chat.completion.chunk",
               "system_fingerprint": ""})
    };
    let mut last = chunk(json!({}));
    last["choices"][0]["finish_reason"] = json!("length");
    last["usage"] = json!({"completion_tokens": 2, "prompt_tokens": 5, "total_tokens": 7});
    assert_eq!(
        got,
        vec![
            chunk(json!({"role": "assistant"})),
            chunk(json!({"content": "<tok>"})),
            chunk(json!({"content": "<tok>"})),
            last
        ]
    );
    assert!(!s.done());
}

// transformers 5.24.0: cli/serving/completion.py:112-170, 233-262.
#[tokio::test]
async fn transformers_completions_text_chunks_then_usage_no_done() {
    let (got, s) = events(Engine::Transformers, "/v1/completions", completion(true)).await;
    let chunk = json!({"id": "<id>", "choices": [{"index": 0, "text": "<tok>"}],
                       "created": 0, "model": "sim-model", "object": "text_completion"});
    let last = json!({"id": "<id>",
                      "choices": [{"finish_reason": "length", "index": 0, "text": ""}],
                      "created": 0, "model": "sim-model", "object": "text_completion",
                      "usage": {"completion_tokens": 2, "prompt_tokens": 3,
                                "total_tokens": 5}});
    assert_eq!(got, vec![chunk.clone(), chunk, last]);
    assert!(!s.done());
}

// transformers serve sends the role chunk before the model produced anything.
#[tokio::test]
async fn transformers_role_chunk_goes_out_before_the_first_token() {
    let mut c = engine(Engine::Transformers);
    c.engine.prefill_ms_per_token = 40.0; // a 5-token prompt: 200 ms to the first token
    let h = start(c).await;
    let s = stream(
        &client(),
        &format!("{}/v1/chat/completions", h.base_url()),
        &chat(false),
    )
    .await;
    let role_at = s.events[0].at;
    let first_token_at = s.events[1].at;
    assert!(
        role_at.as_millis() < 100 && first_token_at.as_millis() >= 190,
        "role {role_at:?}, first token {first_token_at:?}"
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// `--held-back-rate`: the stream `transformers serve` sent on an H200 with a byte-level
// tokenizer: the role chunk, then the finish with usage counting every token.
#[tokio::test]
async fn held_back_streams_have_no_content_chunk_but_usage_counts_the_tokens() {
    let mut c = engine(Engine::Transformers);
    c.wire.held_back_rate = 1.0;
    let h = start(c).await;
    let mut body = chat(false);
    body["max_tokens"] = json!(6);
    let s = stream(
        &client(),
        &format!("{}/v1/chat/completions", h.base_url()),
        &body,
    )
    .await;
    let got = shapes(&s.events);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0]["choices"][0]["delta"], json!({"role": "assistant"}));
    assert_eq!(got[1]["choices"][0]["delta"], json!({}));
    assert_eq!(got[1]["choices"][0]["finish_reason"], "length");
    assert_eq!(got[1]["usage"]["completion_tokens"], 6);
    assert_eq!(h.stats().held_back_streams, 1);
    assert_eq!(h.stats().tokens_generated, 6);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// llama.cpp's `:` keep-alive comment after sse_ping_interval of silence
// (server-context.cpp:4455-4461); 30 ms here, steps of 120 ms.
#[tokio::test]
async fn llamacpp_pings_a_silent_stream() {
    let mut c = engine(Engine::Llamacpp);
    c.engine.decode_base_ms = 120.0;
    c.wire.sse_ping_ms = Some(30);
    let h = start(c).await;
    let s = stream(
        &client(),
        &format!("{}/v1/completions", h.base_url()),
        &completion(false),
    )
    .await;
    let pings = s.events.iter().filter(|e| e.data == ":").count();
    assert!(pings >= 4, "{pings} pings in {:?}", s.events);
    assert!(s.done());
    assert_eq!(s.token_events().len(), 2);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
