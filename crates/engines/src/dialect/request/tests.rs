//! Unit tests of the parent module.

use super::*;

fn parse(api: Api, body: &str) -> Result<GenRequest, ApiError> {
    parse_generation(api, body.as_bytes(), &Served::default(), &Rules::generic())
}

#[test]
fn completion_prompts_count_words_or_ids() {
    let r = parse(
        Api::Completions,
        r#"{"prompt":"a b c","max_tokens":5,"stream":true,
        "stream_options":{"include_usage":true},"temperature":0}"#,
    );
    let r = r.unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(
        (r.prompt_tokens, r.max_tokens, r.stream, r.include_usage),
        (3, 5, true, true)
    );
    let r = parse(Api::Completions, r#"{"prompt":[[1,2,3,4]],"max_tokens":1}"#);
    assert_eq!(r.map(|r| r.prompt_tokens).ok(), Some(4));
}

#[test]
fn chat_prompts_include_the_template() {
    let r = parse(
        Api::Chat,
        r#"{"messages":[{"role":"user","content":"one two"}],"max_completion_tokens":3}"#,
    );
    let r = r.unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!((r.prompt_tokens, r.max_tokens), (2 + 2 + 1, 3));
    let r = parse(
        Api::Chat,
        r#"{"messages":[{"role":"user","content":[{"type":"text","text":"x y z"}]}]}"#,
    );
    assert_eq!(
        r.map(|r| (r.prompt_tokens, r.max_tokens)).ok(),
        Some((6, 256))
    );
}

#[test]
fn bad_requests_say_why() {
    let cases = [
        (Api::Completions, "{", StatusCode::BAD_REQUEST),
        (
            Api::Completions,
            r#"{"max_tokens":3}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            Api::Completions,
            r#"{"prompt":"a","model":"other"}"#,
            StatusCode::NOT_FOUND,
        ),
        (
            Api::Completions,
            r#"{"prompt":"a","max_tokens":0}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            Api::Completions,
            r#"{"prompt":"a","max_tokens":9000}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            Api::Completions,
            r#"{"prompt":"a","min_tokens":5,"max_tokens":2}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            Api::Completions,
            r#"{"prompt":["a","b"]}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            Api::Completions,
            r#"{"prompt":[99999999]}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            Api::Completions,
            r#"{"prompt":"   "}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            Api::Completions,
            r#"{"prompt":"a","n":2}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            Api::Completions,
            r#"{"prompt":"a","stream_options":{"include_usage":true}}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            Api::Completions,
            r#"{"prompt":"a","max_tokens":-1}"#,
            StatusCode::BAD_REQUEST,
        ),
        (Api::Chat, r#"{"messages":[]}"#, StatusCode::BAD_REQUEST),
    ];
    for (api, body, status) in cases {
        match parse(api, body) {
            Ok(r) => panic!("{body} accepted as {r:?}"),
            Err(e) => assert_eq!(e.status, status, "{body}: {}", e.message),
        }
    }
}
