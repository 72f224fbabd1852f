//! Each engine's request bodies and streams, replayed by small in-test servers (127.0.0.1,
//! port 0) as the engine's source writes them (the version and file are named at each),
//! against the profile-driven request body and the stream reader; tokenize routes and
//! detection are in `engine_wire.rs`. Each of these failed before the engine profiles
//! existed.

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use servebench_engines::Engine;
use servebench_engines::profile;
use servebench_runner::loadgen::{ApiKind, MinTokens, run_trial};

use crate::engine_wire::{serve, target};
use crate::loadgen_support::{config, prompts};

/// A transformers serve chat endpoint as 5.24.0 writes it: cli/serving/utils.py:1183-1187
/// answers 422 `{"detail": "Unexpected fields in the request: {…}"}` to a key outside
/// `TransformersCompletionCreateParamsStreaming` (chat_completion.py:63); `generation_config`
/// is a JSON string (utils.py:1246); the stream has a role chunk, content chunks, a final
/// chunk with `finish_reason` and `usage`, and no `[DONE]`. With `hold_back`, no content
/// chunk at all (seen on an H200 with 5.17.0 and a byte-level tokenizer).
async fn transformers_chat(
    axum::extract::State(hold_back): axum::extract::State<bool>,
    Json(body): Json<Value>,
) -> Response {
    const ALLOWED: [&str; 12] = [
        "model",
        "messages",
        "max_tokens",
        "stream",
        "stream_options",
        "temperature",
        "top_p",
        "seed",
        "generation_config",
        "chat_template_kwargs",
        "stop",
        "max_completion_tokens",
    ];
    if let Some(o) = body.as_object() {
        let unexpected: Vec<&str> = o
            .keys()
            .map(String::as_str)
            .filter(|k| !ALLOWED.contains(k))
            .collect();
        if !unexpected.is_empty() {
            let set = unexpected
                .iter()
                .map(|k| format!("'{k}'"))
                .collect::<Vec<_>>()
                .join(", ");
            return (
                StatusCode::UNPROCESSABLE_ENTITY,
                Json(json!({"detail": format!("Unexpected fields in the request: {{{set}}}")})),
            )
                .into_response();
        }
    }
    let max = body["max_tokens"].as_u64().unwrap_or(16);
    let n = body["generation_config"]
        .as_str()
        .and_then(|g| serde_json::from_str::<Value>(g).ok())
        .and_then(|g| g["min_new_tokens"].as_u64())
        .map_or(max.min(3), |m| m.min(max));
    let chunk = |delta: Value, fr: Option<&str>, usage: Option<Value>| {
        let mut c = json!({"id": "req-1", "choices": [{"delta": delta, "index": 0}], "created": 1, "model": "m", "object": "chat.completion.chunk"});
        if let Some(f) = fr {
            c["choices"][0]["finish_reason"] = json!(f);
        }
        if let Some(u) = usage {
            c["usage"] = u;
        }
        format!("data: {c}\n\n")
    };
    let mut out = chunk(json!({"role": "assistant"}), None, None);
    if !hold_back {
        for k in 0..n {
            out.push_str(&chunk(json!({"content": format!(" w{k}")}), None, None));
        }
    }
    let fr = if n == max { "length" } else { "stop" };
    out.push_str(&chunk(
        json!({}),
        Some(fr),
        Some(json!({"completion_tokens": n, "prompt_tokens": 5, "total_tokens": n + 5})),
    ));
    ([("content-type", "text/event-stream")], out).into_response()
}

#[tokio::test]
async fn transformers_serve_gets_a_body_it_takes_and_fixed_lengths() {
    let app = Router::new()
        .route("/v1/chat/completions", post(transformers_chat))
        .with_state(false);
    let base = serve(app).await;
    let t = target(&base, ApiKind::Chat);
    // The default body of before: `ignore_eos: true` → 422 on every request.
    let before = run_trial(&t, &config(2), &prompts(2, 8))
        .await
        .expect("ran");
    assert!(
        before
            .records
            .iter()
            .all(|r| r.error == Some(servebench_result::record::ErrorKind::Http { status: 422 })),
        "{:?}",
        before.records[0].error_detail
    );
    assert!(
        before.records[0]
            .error_detail
            .as_deref()
            .unwrap_or("")
            .contains("Unexpected fields")
    );
    // The transformers profile's plan: no ignore_eos, generation_config fixing the length.
    let plan = profile(Engine::Transformers)
        .expect("profile")
        .body_plan(true, true);
    let mut cfg = config(2);
    cfg.ignore_eos = plan.ignore_eos;
    cfg.min_tokens = if plan.min_tokens {
        MinTokens::MatchMax
    } else {
        MinTokens::Omit
    };
    cfg.stream_options = plan.stream_options;
    cfg.generation_config = plan.generation_config;
    let after = run_trial(&t, &cfg, &prompts(2, 8)).await.expect("ran");
    for r in &after.records {
        assert_eq!(r.error, None, "{:?}", r.error_detail);
        assert_eq!(
            r.usage.map(|u| u.completion_tokens),
            Some(8),
            "asked 8, got 8"
        );
        assert_eq!(r.output_target, Some(8));
        assert_eq!(r.events.len(), 8);
    }
    assert_eq!(after.summary.all.completed, 2, "no [DONE] is a normal end");
}

#[tokio::test]
async fn a_held_back_stream_is_counted_with_its_share() {
    let app = Router::new()
        .route("/v1/chat/completions", post(transformers_chat))
        .with_state(true);
    let base = serve(app).await;
    let t = target(&base, ApiKind::Chat);
    let plan = profile(Engine::Transformers)
        .expect("profile")
        .body_plan(true, false);
    let mut cfg = config(3);
    cfg.ignore_eos = plan.ignore_eos;
    cfg.generation_config = plan.generation_config;
    let o = run_trial(&t, &cfg, &prompts(3, 6)).await.expect("ran");
    assert_eq!(o.summary.all.completed, 3, "{:?}", o.summary.errors);
    assert!(
        o.summary.errors.is_empty(),
        "not no_content: {:?}",
        o.summary.errors
    );
    assert_eq!(
        o.summary
            .flags
            .get(&servebench_result::record::RequestFlag::ContentHeldBack),
        Some(&3)
    );
    assert!(
        o.records
            .iter()
            .all(|r| r.content_held_back && r.events.len() == 1)
    );
}

#[tokio::test]
async fn a_tgi_stream_cut_after_empty_finish_reasons_is_disconnected() {
    // TGI db931fcf router/src/server.rs:857-875: `"finish_reason": ""` on every completions
    // chunk but the last. A stream that ends before the last must not count as finished.
    use crate::loadgen_support::{Script, now, serve as serve_script};
    let mid = br#"data: {"object":"text_completion","id":"","created":1,"model":"m","system_fingerprint":"3.3.7-native","choices":[{"index":0,"text":" a","logprobs":null,"finish_reason":""}]}

"#;
    let s = serve_script(Script::Stream(vec![now(mid), now(mid)])).await;
    let o = run_trial(&s.target(ApiKind::Completions), &config(1), &prompts(1, 8))
        .await
        .expect("ran");
    assert_eq!(
        o.records[0].error,
        Some(servebench_result::record::ErrorKind::StreamDisconnected),
        "{:?}",
        o.records[0].error_detail
    );
}
