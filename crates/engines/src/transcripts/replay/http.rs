//! The dialects' HTTP answers against the transcripts': TGI's streamed refusals and `/info`,
//! transformers serve's routes, refusals and chunks.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use super::{served, snapshot};
use crate::Engine;
use crate::dialect::finish::{Finish, FinishReason, Timings};
use crate::dialect::request::Api;
use crate::dialect::tests::Ready;
use crate::dialect::{self, ApiError, Ctx, ErrorNote, Host, Served, Tok};
use crate::transcripts::read;

// ---------------------------------------------------------------------------------------
// HTTP: the dialect's routes, its stream refusals and its chunks.

/// `GET path` on the dialect's routes (its own and its metrics).
pub(super) async fn get(config: Served, path: &str) -> (StatusCode, String) {
    let host = host(config);
    let app = dialect::routes(host.dialect()).with_state(host);
    let req = Request::get(path).body(Body::empty()).expect("request");
    body(app.oneshot(req).await.expect("infallible")).await
}

/// `POST path` with the JSON `json` on the dialect's routes.
pub(super) async fn post(config: Served, path: &str, json: &Value) -> (StatusCode, String) {
    post_on(&host(config), path, json).await
}

/// A ready server of `config`, to send several requests to.
pub(super) fn host(config: Served) -> Arc<Host> {
    let d = crate::of(config.wire.engine);
    Arc::new(Host::new(
        d,
        config,
        0,
        Arc::new(Ready(snapshot(1, 0, 1, 0))),
    ))
}

/// `POST path` with the JSON `json` to `host`.
pub(super) async fn post_on(host: &Arc<Host>, path: &str, json: &Value) -> (StatusCode, String) {
    let app = dialect::routes(host.dialect()).with_state(host.clone());
    let req = Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json.to_string()))
        .expect("request");
    body(app.oneshot(req).await.expect("infallible")).await
}

pub(super) async fn body(r: Response) -> (StatusCode, String) {
    let status = r.status();
    let b = axum::body::to_bytes(r.into_body(), usize::MAX)
        .await
        .expect("body");
    (status, String::from_utf8(b.to_vec()).expect("utf-8"))
}

/// A recorded `curl -i` response: its status and body.
pub(super) fn http(path: &str) -> (StatusCode, String) {
    let t = read(path);
    let status = t
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or_else(|| panic!("{path}: no status line"));
    let body = t
        .split_once("\r\n\r\n")
        .or_else(|| t.split_once("\n\n"))
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// A JSON value with its leaves replaced by their types: its shape.
fn shape(v: &Value) -> Value {
    match v {
        Value::Null => json!("null"),
        Value::Bool(_) => json!("bool"),
        Value::Number(_) => json!("number"),
        Value::String(_) => json!("string"),
        Value::Array(a) => Value::Array(a.iter().map(shape).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
    }
}

pub(super) fn json_shape(text: &str, what: &str) -> Value {
    shape(&serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: {e}: {text}")))
}

/// The events of an SSE body: each `data:` payload's shape (`[DONE]` as itself), runs of
/// one shape written once.
pub(super) fn events(body: &str, what: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for data in body
        .split("\n\n")
        .filter_map(|e| e.trim().strip_prefix("data: "))
    {
        let s = match data {
            "[DONE]" => json!("[DONE]"),
            d => json_shape(d, what),
        };
        if out.last() != Some(&s) {
            out.push(s);
        }
    }
    out
}

#[tokio::test]
async fn tgi_stream_refusals_are_200_an_error_event_and_done() {
    let tgi = crate::of(Engine::Tgi);
    let dir = "tgi/transcripts/db931fcf";
    let mut config = served(Engine::Tgi, "bigscience/bloom-560m");
    config.max_model_len = 4096;
    // Beyond --max-concurrent-requests, and a prompt past the context, streamed.
    let overloaded = tgi.over_limit(129).expect("refused beyond 128");
    let prompt = vec!["word"; 4000].join(" ");
    let long = json!({"model": "x", "prompt": prompt, "max_tokens": 512, "stream": true});
    let invalid = tgi
        .admit(Api::Completions, long.to_string().as_bytes(), &config)
        .expect_err("past the context");
    for (file, e) in [
        ("stream-overloaded.sse", overloaded),
        ("stream-validation.sse", invalid),
    ] {
        let want = read(&format!("{dir}/{file}"));
        let r = tgi
            .stream_error(e)
            .expect("TGI answers a refused stream itself");
        assert_eq!(
            r.headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
            Some("text/event-stream"),
            "{file}"
        );
        let (status, got) = body(r).await;
        assert_eq!(status, StatusCode::OK, "{file}");
        assert_eq!(
            events(&got, "dialect"),
            events(&want, file),
            "{file}: {got}"
        );
        // The message's own words, as the client shows them.
        let first = |b: &str| -> String {
            let d = b
                .split("\n\n")
                .next()
                .unwrap_or("")
                .trim_start_matches("data: ");
            let v: Value = serde_json::from_str(d).unwrap_or_default();
            let m = v["error"]["message"].as_str().unwrap_or("").to_owned();
            m.split(':').next().unwrap_or("").to_owned()
        };
        assert_eq!(first(&got), first(&want), "{file}");
    }
}

#[tokio::test]
async fn tgi_info_has_the_keys_of_its_info() {
    let (status, got) = get(served(Engine::Tgi, "bigscience/bloom-560m"), "/info").await;
    assert_eq!(status, StatusCode::OK);
    let want = read("tgi/transcripts/db931fcf/info.json");
    assert_eq!(
        json_shape(&got, "/info"),
        json_shape(&want, "info.json"),
        "{got}"
    );
}

const TF: &str = "transformers/transcripts/5.24.0";
const PROMPT: &str = "the of and to in is that it was for on are as with his they";

fn tiny() -> Served {
    served(Engine::Transformers, "tiny-lm")
}

#[tokio::test]
async fn transformers_routes_answer_as_recorded() {
    for (path, file) in [
        ("/health", "health.http"),
        ("/health", "cb-health.http"),
        ("/v1/models", "models.http"),
    ] {
        let (status, got) = get(tiny(), path).await;
        let (want_status, want) = http(&format!("{TF}/{file}"));
        assert_eq!(status, want_status, "{path}");
        assert_eq!(
            json_shape(&got, path),
            json_shape(&want, file),
            "{path}: {got}"
        );
    }
    // No metrics route.
    let t = crate::of(Engine::Transformers);
    assert_eq!(t.metrics_path(), None);
    // Every route it lacks: the simulator's fallback 404 (`no route for PATH`), restyled.
    for (path, file) in [
        ("/metrics", "metrics-404.http"),
        ("/tokenize", "tokenize-404.http"),
        ("/props", "props-404.http"),
        ("/version", "version-404.http"),
    ] {
        let note = ErrorNote {
            status: StatusCode::NOT_FOUND,
            message: format!("no route for {path}"),
            validation: false,
            context: None,
        };
        assert_eq!(
            body(t.restyle(&note)).await,
            http(&format!("{TF}/{file}")),
            "{path}"
        );
    }
}

#[tokio::test]
async fn transformers_refusals_are_the_recorded_bodies() {
    let t = crate::of(Engine::Transformers);
    let chat = |extra: Value| {
        let mut b = json!({"model": "tiny-lm", "messages": [{"role": "user", "content": PROMPT}],
                           "max_tokens": 8, "stream": true, "temperature": 0.0});
        b.as_object_mut()
            .expect("object")
            .extend(extra.as_object().cloned().unwrap_or_default());
        b
    };
    let cases = [
        (
            Api::Chat,
            chat(
                json!({"stream_options": {"include_usage": true}, "ignore_eos": true, "min_tokens": 8}),
            ),
            "chat-ignore-eos-422.http",
        ),
        (
            Api::Chat,
            chat(json!({"min_tokens": 8})),
            "chat-min-tokens-422.http",
        ),
        (
            Api::Chat,
            chat(json!({"model": "other-model", "max_tokens": 4})),
            "chat-wrong-model-400.http",
        ),
        (
            Api::Completions,
            json!({"model": "tiny-lm", "prompt": PROMPT, "max_tokens": 8, "stream": true, "ignore_eos": true}),
            "completions-ignore-eos-422.http",
        ),
    ];
    for (api, req, file) in cases {
        let e: ApiError = t
            .admit(api, req.to_string().as_bytes(), &tiny())
            .expect_err(file);
        let r = e.into_response();
        let note = r.extensions().get::<ErrorNote>().expect("a note").clone();
        let got = body(t.restyle(&note)).await;
        assert_eq!(got, http(&format!("{TF}/{file}")), "{file}");
    }
}

/// The dialect's stream of `n` tokens for `api` and its whole body, as transformers serve's
/// chunk shape writes them.
fn transformers_answer(api: Api, n: u32) -> (String, String) {
    answer(&tiny(), api, n, true)
}

/// The stream of `n` tokens (` word` each) for `api` and the whole body, as the dialect of
/// `config`'s engine writes them, usage asked for or not.
pub(super) fn answer(config: &Served, api: Api, n: u32, usage: bool) -> (String, String) {
    let ctx = Ctx {
        api,
        id: "0df11c94-eae0-42ba-acb1-c0f3d5fb3910".into(),
        created: 1_796_115_607,
        model: config.model.clone(),
        include_usage: usage,
        reasoning_tokens: 0,
        logprobs: false,
        tokens_as_ids: false,
        token_ids: false,
    };
    let mut s = crate::of(config.wire.engine)
        .shape(ctx, config)
        .expect("its own chunks");
    let finish = Finish {
        reason: FinishReason::Length,
        timings: Timings {
            queue_ms: 0.0,
            prompt_n: 21,
            prompt_ms: 1.0,
            ttft_ms: 1.0,
            predicted_n: n,
            predicted_ms: 8.0,
            predicted_per_token_ms: None,
            e2e_ms: 9.0,
            cached_n: None,
        },
    };
    let mut out = Vec::new();
    s.opening(&mut out);
    let toks: Vec<Tok<'_>> = (0..n)
        .map(|i| Tok {
            index: i,
            id: 7 + i,
            text: " word",
            lp: None,
        })
        .collect();
    for t in &toks[..toks.len() - 1] {
        s.token(t, &mut out);
    }
    s.last(toks.last(), &finish, &mut out);
    let stream: String = out
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect();
    let content = vec!["word"; n as usize].join(" ");
    let answer = dialect::Answer {
        reasoning: "",
        content: &content,
        scored: &[],
    };
    (stream, s.whole(&answer, &finish))
}

#[test]
fn transformers_chunks_have_the_recorded_keys() {
    for (api, stream_file, whole_file) in [
        (Api::Chat, "chat-stream.http", "chat.http"),
        (Api::Chat, "cb-chat-stream.http", "chat.http"),
        (Api::Chat, "chat-generation-config.http", "ready-probe.http"),
        (Api::Chat, "chat-stream.http", "cb-ready-probe.http"),
        (
            Api::Completions,
            "completions-stream.http",
            "completions.http",
        ),
    ] {
        let (stream, whole) = transformers_answer(api, 8);
        let (_, want) = http(&format!("{TF}/{stream_file}"));
        assert_eq!(
            events(&stream, "dialect"),
            events(&want, stream_file),
            "{stream_file}: {stream}"
        );
        assert!(
            !stream.contains("[DONE]"),
            "transformers serve sends no [DONE]"
        );
        let (_, want) = http(&format!("{TF}/{whole_file}"));
        assert_eq!(
            json_shape(&whole, "dialect"),
            json_shape(&want, whole_file),
            "{whole}"
        );
    }
}

/// The prompt of the recorded requests of the vLLM and SGLang transcripts (capture.sh there).
pub(super) const RECORDED_PROMPT: &str =
    "ka lo mi ner ta sul ve ro qui ban de fu zo pri mal ten gor li sa who";

/// The parsed `data:` events of an SSE body, `[DONE]` as a string.
pub(super) fn parsed(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter_map(|e| e.trim().strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap_or_else(|_| json!(d)))
        .collect()
}

/// Removes `path` from `v`; how many it removed.
pub(super) fn strip(v: &mut Value, path: &[&str]) -> usize {
    match (path, v) {
        ([last], Value::Object(o)) => usize::from(o.remove(*last).is_some()),
        (["*", rest @ ..], Value::Array(a)) => a.iter_mut().map(|x| strip(x, rest)).sum(),
        ([key, rest @ ..], Value::Object(o)) => o.get_mut(*key).map_or(0, |x| strip(x, rest)),
        _ => 0,
    }
}

/// A body's shape with each array as its first element's (token lists differ in length).
pub(super) fn keys(text: &str) -> Value {
    fn first(v: Value) -> Value {
        match v {
            Value::Array(a) => Value::Array(a.into_iter().take(1).map(first).collect()),
            Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, first(v))).collect()),
            v => v,
        }
    }
    first(json_shape(text, "body"))
}
