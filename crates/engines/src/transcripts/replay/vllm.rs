//! vLLM 0.26.0 as it really answered on an H100 (`vllm/transcripts/0.26.0/`, README.md there
//! says how) against the vLLM dialect: its metrics, routes, refusals, chunks and profiler.

use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{Value, json};

use super::http::{
    RECORDED_PROMPT as PROMPT, answer, body, events, get, host, http, json_shape, keys, parsed,
    post, post_on, strip,
};
use super::metrics::check_metrics;
use super::{served, snapshot};
use crate::Engine;
use crate::dialect::request::Api;
use crate::dialect::{ErrorNote, Served};

const DIR: &str = "vllm/transcripts/0.26.0";

/// The recorded server: `qwen3moe-dummy` served from its path, 4096 tokens of context.
fn dummy() -> Served {
    let mut c = served(Engine::Vllm, "qwen3moe-dummy");
    c.max_model_len = 4096;
    c.wire.model_path = Some("/tmp/servebench-vllm/model".into());
    c
}

fn file(name: &str) -> (StatusCode, String) {
    http(&format!("{DIR}/{name}"))
}

#[test]
fn vllm_metrics_have_the_families_of_0_26_0() {
    check_metrics(
        Engine::Vllm,
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
fn vllm_metrics_have_0_26_0s_created_gauges_and_content_type() {
    // One API server: prometheus_client's default registry, a `_created` gauge beside each
    // counter the dialect writes.
    let text = crate::of(Engine::Vllm).metrics_text("m", &snapshot(1, 0, 1, 0), &dummy().wire);
    let (_, real) = file("metrics-under-load.http");
    for counter in text.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
        let Some(name) = counter.strip_suffix("_total counter") else {
            continue;
        };
        let head = format!("# TYPE {name}_created gauge\n");
        assert!(real.contains(&head), "{head}");
        assert!(text.contains(&head), "the dialect lacks {head}");
    }
    let whole = crate::transcripts::read(&format!("{DIR}/metrics-before.http"));
    let header = format!(
        "content-type: {}\r\n",
        crate::of(Engine::Vllm).metrics_content_type()
    );
    assert!(whole.contains(&header), "{header}");
}

#[tokio::test]
async fn vllm_info_routes_answer_as_0_26_0_did() {
    for (path, name) in [
        ("/v1/models", "models.http"),
        ("/version", "version.http"),
        ("/load", "load.http"),
    ] {
        let (status, got) = get(dummy(), path).await;
        let (want_status, want) = file(name);
        assert_eq!(status, want_status, "{path}");
        assert_eq!(json_shape(&got, path), json_shape(&want, name), "{got}");
    }
    // `/health`: 200 and no body.
    assert_eq!(get(dummy(), "/health").await, file("health.http"));
}

#[tokio::test]
async fn vllm_tokenize_answers_as_0_26_0_did() {
    let chat = json!([{"role": "user", "content": PROMPT}]);
    for (req, name) in [
        (
            json!({"model": "qwen3moe-dummy", "prompt": PROMPT}),
            "tokenize-prompt.http",
        ),
        (
            json!({"model": "qwen3moe-dummy", "messages": chat}),
            "tokenize-messages.http",
        ),
        (
            json!({"model": "qwen3moe-dummy", "messages": chat, "add_generation_prompt": true}),
            "tokenize-messages-generation-prompt.http",
        ),
    ] {
        let (status, got) = post(dummy(), "/tokenize", &req).await;
        let (want_status, want) = file(name);
        assert_eq!(status, want_status, "{name}: {got}");
        assert_eq!(keys(&got), keys(&want), "{name}: {got}");
    }
    // Another model: refused by the route, restyled as every refusal is.
    let bad = json!({"model": "no-such-model", "prompt": PROMPT});
    let (status, _) = post(dummy(), "/tokenize", &bad).await;
    let e = crate::vllm::dialect::check_model(Some("no-such-model"), "qwen3moe-dummy")
        .expect_err("another model");
    let note = e
        .into_response()
        .extensions()
        .get::<ErrorNote>()
        .cloned()
        .expect("a note");
    let (restyled, got) = body(crate::of(Engine::Vllm).restyle(&note)).await;
    assert_eq!(status, restyled);
    assert_refusal(status, &got, "tokenize-bad-model.http");
}

/// A refusal: its status, and its error's `type`, `param` and `code` and the shape of its
/// body as recorded.
fn assert_refusal(status: StatusCode, got: &str, name: &str) {
    let (want_status, want) = file(name);
    assert_eq!(status, want_status, "{name}: {got}");
    assert_eq!(
        json_shape(got, name),
        json_shape(&want, name),
        "{name}: {got}"
    );
    let (g, w): (Value, Value) = (
        serde_json::from_str(got).expect("json"),
        serde_json::from_str(&want).expect("json"),
    );
    for key in ["type", "param", "code"] {
        assert_eq!(g["error"][key], w["error"][key], "{name}: {key}: {got}");
    }
}

/// The dialect's answer to a generation request: its refusal restyled, or `None` when
/// admitted.
async fn refusal(api: Api, body_text: &str) -> Option<(StatusCode, String)> {
    let d = crate::of(Engine::Vllm);
    let e = d.admit(api, body_text.as_bytes(), &dummy()).err()?;
    let r = e.into_response();
    let note = r.extensions().get::<ErrorNote>().expect("a note").clone();
    Some(body(d.restyle(&note)).await)
}

#[tokio::test]
async fn vllm_refusals_are_those_of_0_26_0() {
    let long = vec![PROMPT; 205].join(" ");
    let chat = json!([{"role": "user", "content": PROMPT}]);
    let cases = [
        (
            Api::Completions,
            json!({"model": "no-such-model", "prompt": PROMPT, "max_tokens": 4}).to_string(),
            "completions-bad-model.http",
        ),
        (
            Api::Chat,
            json!({"model": "no-such-model", "messages": chat, "max_tokens": 4}).to_string(),
            "chat-bad-model.http",
        ),
        (
            Api::Completions,
            json!({"model": "qwen3moe-dummy", "prompt": long, "max_tokens": 8}).to_string(),
            "completions-context-overflow.http",
        ),
        (
            Api::Completions,
            json!({"model": "qwen3moe-dummy", "prompt": PROMPT, "max_tokens": 100_000}).to_string(),
            "completions-max-tokens-overflow.http",
        ),
        (
            Api::Completions,
            "{not json".to_owned(),
            "completions-not-json.http",
        ),
    ];
    for (api, req, name) in cases {
        let (status, got) = refusal(api, &req).await.expect(name);
        assert_refusal(status, &got, name);
    }
    // An unknown field is accepted (200 in completions-unknown-field.http).
    assert_eq!(file("completions-unknown-field.http").0, StatusCode::OK);
    let unknown = json!({"model": "qwen3moe-dummy", "prompt": PROMPT, "max_tokens": 4,
                         "servebench_unknown": 1});
    assert_eq!(refusal(Api::Completions, &unknown.to_string()).await, None);
}

#[tokio::test]
async fn vllm_routes_it_lacks_are_fastapis_404() {
    // `/v1/tokenize`, `/server_info`, `/get_server_info`: not mounted in 0.26.0; the
    // simulator's fallback 404 (`no route for PATH`) restyled by the dialect.
    for (path, name) in [
        ("/v1/tokenize", "tokenize-v1.http"),
        ("/server_info", "server-info.http"),
        ("/get_server_info", "get-server-info.http"),
    ] {
        let note = ErrorNote {
            status: StatusCode::NOT_FOUND,
            message: format!("no route for {path}"),
            validation: false,
            context: None,
        };
        let got = body(crate::of(Engine::Vllm).restyle(&note)).await;
        assert_eq!(got, file(name), "{path}");
    }
}

/// Keys the dialect writes because 0.33.0 does and 0.26.0 did not (`*`: every element of an
/// array): chunks' `kv_transfer_params` (0.33.0 openai/chat_completion/serving.py:821,
/// completion/serving.py:463), choices' `weight_versions` (chat_completion/protocol.py:
/// 129,181, completion/protocol.py:702,743), the chat message's `tool_calls: []` without tools
/// (chat_completion/protocol.py:83). Each must still be found in the dialect's answer.
const ONLY_0_33_0: &[(&str, &[&str])] = &[
    (
        "stream",
        &["kv_transfer_params", "choices/*/weight_versions"],
    ),
    (
        "whole",
        &["choices/*/weight_versions", "choices/*/message/tool_calls"],
    ),
];

/// The dialect's answer without 0.33.0's own keys (`kind`: `stream` or `whole`), counting
/// in `found` how many of each it removed.
fn as_0_26_0(mut vs: Vec<Value>, kind: &str, found: &mut Vec<(String, usize)>) -> Vec<Value> {
    let paths = ONLY_0_33_0.iter().find(|(k, _)| *k == kind).expect(kind).1;
    for p in paths {
        let parts: Vec<&str> = p.split('/').collect();
        let n: usize = vs.iter_mut().map(|v| strip(v, &parts)).sum();
        found.push((format!("{kind}: {p}"), n));
    }
    vs
}

#[test]
fn vllm_chunks_and_bodies_have_the_keys_of_0_26_0() {
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
        let chunks: Vec<String> = as_0_26_0(parsed(&stream), "stream", &mut found)
            .iter()
            .map(|v| match v.as_str() {
                Some("[DONE]") => "data: [DONE]\n\n".to_owned(),
                _ => format!("data: {v}\n\n"),
            })
            .collect();
        let (_, want) = file(stream_file);
        assert_eq!(
            events(&chunks.concat(), "dialect"),
            events(&want, stream_file),
            "{stream_file}: {stream}"
        );
        let whole = serde_json::from_str(&whole).expect("json");
        let whole = as_0_26_0(vec![whole], "whole", &mut found).remove(0);
        let (_, want) = file(whole_file);
        assert_eq!(
            json_shape(&whole.to_string(), "dialect"),
            json_shape(&want, whole_file),
            "{whole}"
        );
    }
    // Each key listed as 0.33.0's is still written somewhere: the list is kept true.
    for (key, _) in &found {
        assert!(
            found.iter().any(|(k, n)| k == key && *n > 0),
            "`{key}` listed as 0.33.0's but not written: remove it from ONLY_0_33_0"
        );
    }
}

#[tokio::test]
async fn vllm_profiler_routes_answer_and_write_as_0_26_0_did() {
    // The test's own scratch folder, under the workspace's target/tmp.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/tmp/engines-vllm-replay-profiler");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    // The recorded server's --profiler-config (README.md).
    let mut c = dummy();
    c.wire.profiler.vllm_config = Some(
        json!({"profiler": "torch", "torch_profiler_dir": dir, "torch_profiler_with_stack": false,
               "ignore_frontend": true})
        .to_string(),
    );
    let server = host(c);
    for (path, name) in [
        ("/start_profile", "start-profile.http"),
        ("/stop_profile", "stop-profile.http"),
    ] {
        let got = post_on(&server, path, &json!({})).await;
        assert_eq!(got, file(name), "{path}");
    }
    // The files, their digits blanked: one worker's gzipped trace and its table, no API
    // process trace (`ignore_frontend`), as trace-dir-listing.txt lists them.
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
