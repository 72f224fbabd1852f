//! SGLang 0.5.17's refusals and admissions (`sglang/transcripts/0.5.17/`) against the
//! SGLang dialect: status, error object and words, and what it admits that vLLM refuses.

use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::json;

use super::http::{RECORDED_PROMPT as PROMPT, body, json_shape};
use super::sglang::{dummy, file, object};
use crate::Engine;
use crate::dialect::ErrorNote;
use crate::dialect::request::Api;

/// Refusals whose `message` the dialect does not write as 0.5.17 did: FastAPI's
/// `str(RequestValidationError)` (0.5.17 entrypoints/http_server.py:597-603, `{exc} {errors}`),
/// which holds pydantic's wording of the JSON parser's error and FastAPI's endpoint context,
/// the file and line of the installed `openai_v1_completions` (`File ".../http_server.py",
/// line 1694`): the simulator has neither, and writes its own parser's error with the same
/// `type` ("Bad Request") and `code`. Each must still differ (the list is kept true).
const MESSAGE_NOT_SIMULATED: &[&str] = &["completions-not-json.http"];

/// A refusal: its status, its `object`, `type`, `param` and `code`, its body's shape, and
/// its `message` unless listed in [`MESSAGE_NOT_SIMULATED`].
fn assert_refusal(status: StatusCode, got: &str, name: &str) {
    let (want_status, want) = file(name);
    assert_eq!(status, want_status, "{name}: {got}");
    assert_eq!(
        json_shape(got, name),
        json_shape(&want, name),
        "{name}: {got}"
    );
    let (g, w) = (object(got, name), object(&want, name));
    for key in ["object", "type", "param", "code"] {
        assert_eq!(g[key], w[key], "{name}: {key}: {got}");
    }
    match MESSAGE_NOT_SIMULATED.contains(&name) {
        true => assert_ne!(
            g["message"], w["message"],
            "{name} is listed in MESSAGE_NOT_SIMULATED but its message is 0.5.17's: remove it"
        ),
        false => assert_eq!(g["message"], w["message"], "{name}: message"),
    }
}

/// The dialect's answer to a generation request: its refusal restyled, or `None` when
/// admitted.
async fn refusal(api: Api, body_text: &str) -> Option<(StatusCode, String)> {
    let d = crate::of(Engine::Sglang);
    let e = d.admit(api, body_text.as_bytes(), &dummy()).err()?;
    let r = e.into_response();
    let note = r.extensions().get::<ErrorNote>().expect("a note").clone();
    Some(body(d.restyle(&note)).await)
}

#[tokio::test]
async fn sglang_refusals_are_those_of_0_5_17() {
    // 6000 words of the model's vocabulary, one token each.
    let long = vec![PROMPT; 300].join(" ");
    let cases = [
        (
            json!({"model": "qwen3moe-dummy", "prompt": long, "max_tokens": 8}).to_string(),
            "completions-context-overflow.http",
        ),
        (
            json!({"model": "qwen3moe-dummy", "prompt": PROMPT, "max_tokens": 100_000}).to_string(),
            "completions-max-tokens-overflow.http",
        ),
        ("{not json".to_owned(), "completions-not-json.http"),
    ];
    for (req, name) in cases {
        let (status, got) = refusal(Api::Completions, &req).await.expect(name);
        assert_refusal(status, &got, name);
    }
    // Admitted (200): an unknown field, another model's name.
    let chat = json!([{"role": "user", "content": PROMPT}]);
    for (api, req, name) in [
        (
            Api::Completions,
            json!({"model": "qwen3moe-dummy", "prompt": PROMPT, "max_tokens": 4,
                   "servebench_unknown": 1}),
            "completions-unknown-field.http",
        ),
        (
            Api::Completions,
            json!({"model": "no-such-model", "prompt": PROMPT, "max_tokens": 4}),
            "completions-bad-model.http",
        ),
        (
            Api::Chat,
            json!({"model": "no-such-model", "messages": chat, "max_tokens": 4}),
            "chat-bad-model.http",
        ),
    ] {
        assert_eq!(file(name).0, StatusCode::OK, "{name}");
        assert_eq!(refusal(api, &req.to_string()).await, None, "{name}");
    }
    // The name echoed is the request's.
    let d = crate::of(Engine::Sglang);
    assert_eq!(
        d.chunk_model(Some("no-such-model"), "qwen3moe-dummy"),
        "no-such-model"
    );
    let (_, want) = file("chat-bad-model.http");
    assert_eq!(
        object(&want, "chat-bad-model.http")["model"],
        "no-such-model"
    );
}
