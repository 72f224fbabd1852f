//! SGLang 0.5.17 as it really answered on an H100 (`sglang/transcripts/0.5.17/`, README.md
//! there says how) against the SGLang dialect: its metrics, routes, tokenizer, refusals,
//! chunks and profiler. The dialect is 0.5.23's: what 0.5.23 writes and 0.5.17 did not is
//! listed in [`ONLY_0_5_23`], what 0.5.17 wrote and the simulator cannot in
//! [`NOT_SIMULATED`], the refusals whose words it does not write in
//! `sglang_refusals::MESSAGE_NOT_SIMULATED`, each entry still found (the lists are kept true).

use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use super::http::{
    RECORDED_PROMPT as PROMPT, answer, body, events, get, host, http, json_shape, keys, parsed,
    post, post_on, strip,
};
use super::metrics::check_metrics;
use super::{served, snapshot};
use crate::Engine;
use crate::dialect::request::Api;
use crate::dialect::{ErrorNote, Served};

const DIR: &str = "sglang/transcripts/0.5.17";

/// The recorded server: `qwen3moe-dummy` served from its path, 4096 tokens of context, one
/// GPU, `--enable-metrics`.
pub(super) fn dummy() -> Served {
    let mut c = served(Engine::Sglang, "qwen3moe-dummy");
    c.max_model_len = 4096;
    c.wire.model_path = Some("/tmp/servebench-sglang/model".into());
    c
}

pub(super) fn file(name: &str) -> (StatusCode, String) {
    http(&format!("{DIR}/{name}"))
}

pub(super) fn object(text: &str, what: &str) -> Map<String, Value> {
    match serde_json::from_str(text) {
        Ok(Value::Object(o)) => o,
        other => panic!("{what}: not a JSON object: {other:?}: {text}"),
    }
}

/// Keys the dialect writes because 0.5.23 does and 0.5.17 did not (`*`: every element of
/// an array), by answer. 0.5.23's lines, then 0.5.17's:
/// * `/model_info`: 0.5.23 adds `served_model_name`, `load_format`, `reasoning_parser`,
///   `tool_call_parser`, `disaggregation_mode` (entrypoints/http_server.py:812-841;
///   0.5.17 :733-750 writes none of them);
/// * `/server_info`: 0.5.23 adds `launch_command` (utils/common.py:3590) and `frontend`
///   (entrypoints/http_server.py:889; 0.5.17 :792-806 has neither);
/// * usage: 0.5.23's `completion_tokens_details`, `null` without reasoning tokens
///   (entrypoints/openai/protocol.py:229; 0.5.17's `UsageInfo`, protocol.py:197-203, has
///   only the top-level `reasoning_tokens`), in a chat stream's usage chunk and each whole
///   body (the completions usage chunk drops `None`s).
///
/// Each must still be found in the dialect's answer.
const ONLY_0_5_23: &[(&str, &[&str])] = &[
    (
        "model_info",
        &[
            "served_model_name",
            "load_format",
            "reasoning_parser",
            "tool_call_parser",
            "disaggregation_mode",
        ],
    ),
    ("server_info", &["launch_command", "frontend"]),
    ("stream", &["usage/completion_tokens_details"]),
    ("whole", &["usage/completion_tokens_details"]),
];

/// Keys 0.5.17 wrote that the dialect leaves out, by answer: `/model_info`'s `embedding`,
/// the resolved embedding plan of the model's `embedding_model_spec` (0.5.17
/// entrypoints/http_server.py:751-757, 0.5.23 :843-849: both versions write it when the
/// model config has a spec, which needs the model's config.json; the simulator has none).
const NOT_SIMULATED: &[(&str, &[&str])] = &[("model_info", &["embedding"])];

/// `vs` without the keys `list` names for `kind`, counting in `found` how many of each it
/// removed.
fn without(
    list: &[(&str, &[&str])],
    mut vs: Vec<Value>,
    kind: &str,
    found: &mut Vec<(String, usize)>,
) -> Vec<Value> {
    let paths = list
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[][..], |e| e.1);
    for p in paths {
        let parts: Vec<&str> = p.split('/').collect();
        let n: usize = vs.iter_mut().map(|v| strip(v, &parts)).sum();
        found.push((format!("{kind}: {p}"), n));
    }
    vs
}

/// Each listed key was removed somewhere: the list is kept true.
fn all_listed_found(found: &[(String, usize)], list: &str) {
    for (key, _) in found {
        assert!(
            found.iter().any(|(k, n)| k == key && *n > 0),
            "`{key}` is listed in {list} but not found: remove it from {list}"
        );
    }
}

#[test]
fn sglang_metrics_have_the_families_of_0_5_17() {
    check_metrics(
        Engine::Sglang,
        &[
            (
                format!("{DIR}/metrics-before.http"),
                dummy(),
                snapshot(0, 0, 0, 0),
            ),
            (
                format!("{DIR}/metrics-under-load.http"),
                dummy(),
                snapshot(16, 0, 40, 0),
            ),
            (
                format!("{DIR}/metrics-after-load.http"),
                dummy(),
                snapshot(0, 0, 56, 0),
            ),
        ],
    );
}

#[test]
fn sglang_metrics_content_type_is_0_5_17s() {
    let whole = crate::transcripts::read(&format!("{DIR}/metrics-before.http"));
    let want = crate::of(Engine::Sglang).metrics_content_type();
    let got = whole
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(": ")?;
            k.eq_ignore_ascii_case("content-type").then_some(v.trim())
        })
        .expect("a content-type");
    assert_eq!(got, want);
}

#[tokio::test]
async fn sglang_info_routes_answer_as_0_5_17_did() {
    let (status, got) = get(dummy(), "/v1/models").await;
    let (want_status, want) = file("models.http");
    assert_eq!(status, want_status);
    assert_eq!(
        json_shape(&got, "/v1/models"),
        json_shape(&want, "models.http")
    );
    // `/health`: 200 and no body.
    assert_eq!(get(dummy(), "/health").await, file("health.http"));
    // `/model_info`: the same keys, 0.5.23's own left out, each value of the same shape
    // where neither is null (the simulator has no config.json to read).
    let (status, got) = get(dummy(), "/model_info").await;
    let (want_status, want) = file("model-info.http");
    assert_eq!(status, want_status);
    let (mut only, mut lacks) = (Vec::new(), Vec::new());
    let got = Value::Object(object(&got, "/model_info"));
    let got = without(ONLY_0_5_23, vec![got], "model_info", &mut only).remove(0);
    let want = Value::Object(object(&want, "model-info.http"));
    let want = without(NOT_SIMULATED, vec![want], "model_info", &mut lacks).remove(0);
    same_keys(&got, &want, "/model_info");
    all_listed_found(&only, "ONLY_0_5_23");
    all_listed_found(&lacks, "NOT_SIMULATED");
}

/// `got` and `want` have the same keys, and the same value shape where neither is null.
fn same_keys(got: &Value, want: &Value, what: &str) {
    let keys = |v: &Value| -> Vec<String> { v.as_object().expect(what).keys().cloned().collect() };
    assert_eq!(keys(got), keys(want), "{what}");
    for (k, g) in got.as_object().expect(what) {
        let w = &want[k];
        if !g.is_null() && !w.is_null() {
            let s = |v: &Value| json_shape(&v.to_string(), what);
            assert_eq!(s(g), s(w), "{what}: {k}");
        }
    }
}

/// Where `got` has what `want` has not: each key of `got` (recursively; an array as its
/// first element) is in `want`, its leaf of the same JSON type where neither is null.
fn within(got: &Value, want: &Value, at: &str, out: &mut Vec<String>) {
    match (got, want) {
        (Value::Null, _) | (_, Value::Null) => {}
        (Value::Object(g), Value::Object(w)) => {
            for (k, gv) in g {
                match w.get(k) {
                    Some(wv) => within(gv, wv, &format!("{at}/{k}"), out),
                    None => out.push(format!("{at}/{k}: not in the transcript")),
                }
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            if let (Some(gv), Some(wv)) = (g.first(), w.first()) {
                within(gv, wv, &format!("{at}/*"), out);
            }
        }
        (g, w) => {
            let s = |v: &Value| json_shape(&v.to_string(), at);
            if s(g) != s(w) {
                out.push(format!("{at}: {g} in the dialect, {w} in the transcript"));
            }
        }
    }
}

#[tokio::test]
async fn sglang_server_info_holds_0_5_17s_server_args() {
    // The flat resolved arguments and scheduler info, of which the dialect writes those it
    // has values for: each is one 0.5.17 wrote, of the same type.
    let mut only = Vec::new();
    for (path, name) in [
        ("/server_info", "server-info.http"),
        ("/get_server_info", "get-server-info.http"),
    ] {
        let (status, got) = get(dummy(), path).await;
        let (want_status, want) = file(name);
        assert_eq!(status, want_status, "{path}");
        let got = Value::Object(object(&got, path));
        let got = without(ONLY_0_5_23, vec![got], "server_info", &mut only).remove(0);
        let mut out = Vec::new();
        within(&got, &Value::Object(object(&want, name)), "", &mut out);
        assert!(out.is_empty(), "{path} against {name}: {out:#?}");
    }
    all_listed_found(&only, "ONLY_0_5_23");
}

#[tokio::test]
async fn sglang_routes_it_lacks_are_fastapis_404() {
    // `/version`, `/load`: not mounted; the simulator's fallback 404 (`no route for PATH`)
    // restyled by the dialect as FastAPI answers it.
    for (path, name) in [("/version", "version.http"), ("/load", "load.http")] {
        let note = ErrorNote {
            status: StatusCode::NOT_FOUND,
            message: format!("no route for {path}"),
            validation: false,
            context: None,
        };
        let got = body(crate::of(Engine::Sglang).restyle(&note)).await;
        assert_eq!(got, file(name), "{path}");
    }
}

#[tokio::test]
async fn sglang_tokenize_answers_as_0_5_17_did() {
    let chat = json!([{"role": "user", "content": PROMPT}]);
    for (path, req, name) in [
        (
            "/tokenize",
            json!({"model": "qwen3moe-dummy", "prompt": PROMPT}),
            "tokenize-prompt.http",
        ),
        (
            "/tokenize",
            json!({"model": "qwen3moe-dummy", "prompt": PROMPT, "add_special_tokens": false}),
            "tokenize-prompt-no-special.http",
        ),
        (
            "/tokenize",
            json!({"model": "qwen3moe-dummy", "messages": chat}),
            "tokenize-messages.http",
        ),
        (
            "/tokenize",
            json!({"model": "qwen3moe-dummy", "messages": chat, "add_generation_prompt": true}),
            "tokenize-messages-generation-prompt.http",
        ),
        (
            "/v1/tokenize",
            json!({"model": "qwen3moe-dummy", "prompt": PROMPT}),
            "tokenize-v1.http",
        ),
        // Another model: SGLang never looks at the name.
        (
            "/tokenize",
            json!({"model": "no-such-model", "prompt": PROMPT}),
            "tokenize-bad-model.http",
        ),
        (
            "/detokenize",
            json!({"model": "qwen3moe-dummy", "tokens": [5, 6, 7]}),
            "detokenize.http",
        ),
    ] {
        let (status, got) = post(dummy(), path, &req).await;
        let (want_status, want) = file(name);
        assert_eq!(status, want_status, "{name}: {got}");
        assert_eq!(keys(&got), keys(&want), "{name}: {got}");
    }
}

#[test]
fn sglang_chunks_and_bodies_have_the_keys_of_0_5_17() {
    let mut found = Vec::new();
    for (api, usage, stream_file, whole_file) in [
        (Api::Chat, true, "chat-stream.http", "chat.http"),
        (
            Api::Completions,
            true,
            "completions-stream.http",
            "completions.http",
        ),
        (
            Api::Completions,
            false,
            "completions-stream-no-usage.http",
            "completions-unknown-field.http",
        ),
    ] {
        let (stream, whole) = answer(&dummy(), api, 8, usage);
        let chunks = without(ONLY_0_5_23, parsed(&stream), "stream", &mut found);
        let text: String = chunks
            .iter()
            .map(|v| match v.as_str() {
                Some("[DONE]") => "data: [DONE]\n\n".to_owned(),
                _ => format!("data: {v}\n\n"),
            })
            .collect();
        let (_, want) = file(stream_file);
        assert_eq!(
            events(&text, "dialect"),
            events(&want, stream_file),
            "{stream_file}: {text}"
        );
        // The first chunk's delta as it was: a chat stream's role-only opener.
        let w = parsed(&want);
        assert_eq!(
            chunks[0]["choices"][0]["delta"], w[0]["choices"][0]["delta"],
            "{stream_file}"
        );
        let whole = serde_json::from_str(&whole).expect("json");
        let whole = without(ONLY_0_5_23, vec![whole], "whole", &mut found).remove(0);
        let (_, want) = file(whole_file);
        assert_eq!(
            json_shape(&whole.to_string(), "dialect"),
            json_shape(&want, whole_file),
            "{whole}"
        );
        // `metadata.weight_version`, as the scheduler answered it.
        assert_eq!(whole["metadata"], object(&want, whole_file)["metadata"]);
    }
    all_listed_found(&found, "ONLY_0_5_23");
}

#[tokio::test]
async fn sglang_profiler_routes_answer_and_write_as_0_5_17_did() {
    // The test's own scratch folder, under the workspace's target/tmp.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/tmp/engines-sglang-replay-profiler");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let server = host(dummy());
    // The request capture-transcript.py sent (README.md), and `/stop_profile`'s `{}`.
    let start = json!({"output_dir": dir, "activities": ["CPU", "GPU"], "with_stack": false,
                       "record_shapes": false});
    for (path, req, name) in [
        ("/start_profile", start, "start-profile.http"),
        ("/stop_profile", json!({}), "stop-profile.http"),
    ] {
        let got = post_on(&server, path, &req).await;
        assert_eq!(got, file(name), "{path}");
    }
    // Plain text without a content-type, in the transcript and from the dialect.
    for name in ["start-profile.http", "stop-profile.http"] {
        let whole = crate::transcripts::read(&format!("{DIR}/{name}"));
        assert!(
            !whole.to_ascii_lowercase().contains("content-type"),
            "{name}"
        );
    }
    let app = crate::dialect::routes(crate::of(Engine::Sglang)).with_state(host(dummy()));
    let req = axum::http::Request::post("/start_profile")
        .body(axum::body::Body::from(
            json!({"output_dir": dir}).to_string(),
        ))
        .expect("request");
    let r = tower::ServiceExt::oneshot(app, req)
        .await
        .expect("infallible");
    assert_eq!(r.headers().get(axum::http::header::CONTENT_TYPE), None);
    // The file's name, its digits blanked: `<time.time()>-TP-0.trace.json.gz`.
    let blank = |n: &str| -> String {
        let mut out = String::new();
        for ch in n.chars() {
            match (ch.is_ascii_digit(), out.ends_with('N')) {
                (true, true) => {}
                (true, false) => out.push('N'),
                (false, _) => out.push(ch),
            }
        }
        out
    };
    let mut got: Vec<String> = std::fs::read_dir(&dir)
        .expect("the trace folder")
        .map(|e| blank(&e.expect("entry").file_name().to_string_lossy()))
        .collect();
    got.sort();
    let listing = crate::transcripts::read(&format!("{DIR}/trace-dir-listing.txt"));
    let mut want: Vec<String> = listing
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split('\t').nth(1))
        .map(blank)
        .collect();
    want.sort();
    assert_eq!(got, want);
    let _ = std::fs::remove_dir_all(&dir);
}
