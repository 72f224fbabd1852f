//! Unit tests of the parent module.

use serde_json::json;

use super::*;
use crate::engine::FinishReason;

fn parse_event(b: &Bytes) -> Value {
    let s = std::str::from_utf8(b).unwrap_or_default();
    let json = s
        .strip_prefix("data: ")
        .and_then(|s| s.strip_suffix("\n\n"))
        .unwrap_or_default();
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {s}"))
}

fn finish() -> Finish {
    Finish {
        reason: FinishReason::Length,
        timings: Timings {
            queue_ms: 1.0,
            prompt_n: 3,
            prompt_ms: 2.0,
            ttft_ms: 3.0,
            predicted_n: 2,
            predicted_ms: 4.0,
            predicted_per_token_ms: Some(4.0),
            e2e_ms: 7.0,
            cached_n: None,
        },
    }
}

#[test]
fn token_events_are_valid_vllm_shaped_json() {
    let mut e = Encoder::new(
        Api::Completions,
        "cmpl-1".into(),
        5,
        "m\"odel",
        TokenText::sampled(1),
    );
    let v = parse_event(&e.token_event(0));
    assert_eq!(v["object"], "text_completion");
    assert_eq!(v["model"], "m\"odel");
    assert_eq!(v["choices"][0]["finish_reason"], Value::Null);
    let text = v["choices"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(text, e.token_text(0));

    let mut c = Encoder::new(
        Api::Chat,
        "chatcmpl-1".into(),
        5,
        "m",
        TokenText::sampled(1),
    );
    let v = parse_event(&c.token_event(3));
    assert_eq!(v["object"], "chat.completion.chunk");
    assert!(v["choices"][0]["delta"]["content"].is_string());
    let r = parse_event(&c.role_event());
    assert_eq!(r["choices"][0]["delta"]["role"], "assistant");
    let f = parse_event(&c.final_token_event(1, &finish()));
    assert_eq!(f["choices"][0]["finish_reason"], "length");
    assert_eq!(f["timings"]["predicted_n"], 2);
    let u = parse_event(&c.usage_event(&finish().timings));
    assert_eq!(u["usage"]["total_tokens"], 5);
    assert_eq!(u["choices"], json!([]));
}

#[test]
fn the_malformed_event_does_not_parse() {
    let e = Encoder::new(Api::Completions, "x".into(), 5, "m", TokenText::sampled(1));
    let b = e.malformed_event();
    let s = std::str::from_utf8(&b).unwrap_or_default();
    assert!(s.starts_with("data: {") && s.ends_with("\n\n"));
    assert!(serde_json::from_str::<Value>(&s[6..]).is_err());
}
