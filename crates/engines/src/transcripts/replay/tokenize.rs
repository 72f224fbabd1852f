//! The chat tokenize endpoints against the transcripts: TGI's `/chat_tokenize` (which drops
//! `chat_template_kwargs` as its generation does) and llama.cpp b11434's
//! `/v1/chat/completions/input_tokens`.

use axum::http::StatusCode;
use serde_json::json;

use super::http::{json_shape, post};
use super::served;
use crate::Engine;
use crate::transcripts::read;

fn chat(extra: serde_json::Value) -> serde_json::Value {
    let mut b = json!({
        "model": "m",
        "messages": [{"role": "system", "content": "be brief"},
                     {"role": "user", "content": "Hello there, how are you"}],
    });
    if let (Some(o), Some(e)) = (b.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    b
}

#[tokio::test]
async fn tgi_counts_a_chat_at_chat_tokenize_without_its_template_kwargs() {
    let config = served(Engine::Tgi, "bigscience/bloom-560m");
    let (status, got) = post(config.clone(), "/chat_tokenize", &chat(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    let want = read("tgi/transcripts/db931fcf/chat-tokenize.json");
    // The same keys, and each token of the same shape (the count is the prompt's own).
    let (g, w) = (
        json_shape(&got, "/chat_tokenize"),
        json_shape(&want, "chat-tokenize.json"),
    );
    let keys = |v: &serde_json::Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
    assert_eq!(keys(&g), keys(&w), "{got}");
    assert_eq!(
        g["tokenize_response"][0], w["tokenize_response"][0],
        "{got}"
    );
    assert_eq!(g["templated_text"], w["templated_text"], "{got}");
    // TGI's ChatRequest has no `chat_template_kwargs`: dropped, the same count.
    let kwargs = chat(json!({"chat_template_kwargs": {"enable_thinking": true}}));
    let (_, with) = post(config, "/chat_tokenize", &kwargs).await;
    assert_eq!(with, got);
}

#[tokio::test]
async fn llamacpp_counts_a_chat_at_input_tokens() {
    let config = served(Engine::Llamacpp, "qwen3-0.6b");
    let want = read("llamacpp/transcripts/b11434-router/chat-input-tokens.json");
    for path in [
        "/v1/chat/completions/input_tokens",
        "/chat/completions/input_tokens",
    ] {
        let (status, got) = post(config.clone(), path, &chat(json!({}))).await;
        assert_eq!(status, StatusCode::OK, "{path}: {got}");
        assert_eq!(
            json_shape(&got, path),
            json_shape(&want, "chat-input-tokens.json"),
            "{path}: {got}"
        );
    }
    let (status, _) = post(config, "/v1/chat/completions/input_tokens", &json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "'messages' is required");
}
