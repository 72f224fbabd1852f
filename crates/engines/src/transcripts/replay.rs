//! The transcripts played through the simulator's dialects (found with [`crate::of`], driven
//! through [`Dialect`](crate::dialect::Dialect)): each check compares the dialect's answer with the transcript's
//! SHAPE (metric families, their `# TYPE`, sample names and label keys; status codes, SSE
//! events and JSON keys with their value types), not its values.
//!
//! Replayed through the client only (`servebench-runner`), the dialect not speaking them:
//! * `llamacpp/transcripts/b11434-router/*`: llama.cpp's router mode (several models,
//!   `/props` and `/metrics` per `?model=`) is not simulated: the dialect is one model's
//!   server. Its `metrics-model.txt` (a child server's own text) is replayed below.
//! * `sglang/transcripts/0.5.23/metrics-priority.txt`: priority scheduling (`priority`
//!   label) is not simulated.
//! * `transformers/transcripts/5.24.0/responses-stream.http`: the Responses API is not
//!   simulated; `startup-*.log`: the dialect prints no transformers start-up log;
//!   the 404s (`metrics-404.http`, …) are answered by the simulator's own fallback route
//!   (servebench-sim): only their restyling by the dialect is replayed here.
//!
//! Where the dialect and a transcript disagree, the difference is listed in [`KNOWN`]: the
//! test that finds it fails when a listed difference is gone as well as when a
//! new one appears, so the list is kept to what is true.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use super::read;
use crate::Engine;
use crate::dialect::finish::{Finish, FinishReason, Timings};
use crate::dialect::request::Api;
use crate::dialect::{self, ApiError, Ctx, ErrorNote, Host, Live, Served, Snapshot, Tok};

/// Dialect/transcript differences found by these tests and reported (the metrics text is
/// written in `dialect/metrics.rs`): a transcript and the start of each difference found
/// against it. A fix removes its line.
///
/// * prometheus_client's multiprocess collector names a counter's family with its `_total`
///   (`# TYPE sglang:num_retracted_requests_total counter`, rendered by SGLang's own
///   collector); the dialects write `# TYPE sglang:num_retracted_requests counter`.
/// * A `Gauge` of the default multiprocess mode (`all`) gets a `pid` label: SGLang's
///   `sglang:num_retracted_reqs`, TensorRT-LLM's running, waiting and KV gauges.
/// * A labelled counter has no sample (so no family) until it is first incremented: SGLang
///   writes no `sglang:num_retracted_requests_total` before a retraction; the dialect writes 0.
/// * TensorRT-LLM's `trtllm_num_paused_requests` is set only from `inflightBatchingStats`
///   (collector.py:827-829 at 050f80de); the transcript, written from `log_iteration_stats`,
///   does not show it.
const KNOWN: &[(&str, &[&str])] = &[
    (
        "sglang/transcripts/0.5.23/metrics-dp-attention.txt",
        &[RETRACTED_PID, RETRACTED_BEFORE],
    ),
    (
        "sglang/transcripts/0.5.23/metrics-tp-all-schedulers.txt",
        &[RETRACTED_PID, RETRACTED_BEFORE],
    ),
    (
        "sglang/transcripts/0.5.23/metrics-retract-before.txt",
        &[RETRACTED_PID, RETRACTED_BEFORE],
    ),
    (
        "sglang/transcripts/0.5.23/metrics-retract-after.txt",
        &[
            RETRACTED_PID,
            "`# TYPE sglang:num_retracted_requests counter` in the dialect, \
             `# TYPE sglang:num_retracted_requests_total counter` in the transcript",
        ],
    ),
    (
        "trtllm/transcripts/050f80de/prometheus-metrics-perf-only.txt",
        &[TRT_SUCCESS, TRT_PROMPT, TRT_GENERATION],
    ),
    (
        "trtllm/transcripts/050f80de/prometheus-metrics-iter-stats.txt",
        &[
            TRT_SUCCESS,
            TRT_PROMPT,
            TRT_GENERATION,
            "`trtllm_kv_cache_utilization`: label keys {[\"engine_type\", \"model_name\"]} in the \
             dialect, {[\"engine_type\", \"model_name\", \"pid\"]}",
            "`trtllm_num_requests_running`: label keys {[\"engine_type\", \"model_name\"]} in the \
             dialect, {[\"engine_type\", \"model_name\", \"pid\"]}",
            "`trtllm_num_requests_waiting`: label keys {[\"engine_type\", \"model_name\"]} in the \
             dialect, {[\"engine_type\", \"model_name\", \"pid\"]}",
            "the dialect writes [\"trtllm_num_paused_requests\"]",
        ],
    ),
];
const RETRACTED_PID: &str = "`sglang:num_retracted_reqs`: label keys";
const RETRACTED_BEFORE: &str = "the dialect writes [\"sglang:num_retracted_requests_total\"]";
const TRT_SUCCESS: &str = "`# TYPE trtllm_request_success counter` in the dialect, \
                           `# TYPE trtllm_request_success_total counter`";
const TRT_PROMPT: &str = "`# TYPE trtllm_prompt_tokens counter` in the dialect, \
                          `# TYPE trtllm_prompt_tokens_total counter`";
const TRT_GENERATION: &str = "`# TYPE trtllm_generation_tokens counter` in the dialect, \
                              `# TYPE trtllm_generation_tokens_total counter`";

// ---------------------------------------------------------------------------------------
// Prometheus text: families by `# TYPE`, each with its sample names and label-key sets.

#[derive(Debug, Default, PartialEq)]
struct Family {
    kind: String,
    samples: BTreeMap<String, BTreeSet<Vec<String>>>,
}

/// The label keys of `{k="v",…}` (values may hold `,` `}` and escaped quotes).
fn label_keys(labels: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut rest = labels;
    while let Some(eq) = rest.find("=\"") {
        keys.push(rest[..eq].trim_start_matches(',').trim().to_owned());
        let mut escaped = false;
        let mut end = rest.len();
        for (i, c) in rest[eq + 2..].char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = eq + 2 + i + 1;
                    break;
                }
                _ => escaped = false,
            }
        }
        rest = &rest[end..];
    }
    keys.sort();
    keys
}

fn families(text: &str) -> BTreeMap<String, Family> {
    let mut out: BTreeMap<String, Family> = BTreeMap::new();
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("# TYPE ") {
            let (name, kind) = t.split_once(' ').unwrap_or((t, ""));
            out.entry(name.to_owned()).or_default().kind = kind.to_owned();
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let end = line.find(['{', ' ']).unwrap_or(line.len());
        let name = &line[..end];
        let keys = match line[end..].strip_prefix('{') {
            Some(l) => label_keys(&l[..l.rfind('}').unwrap_or(l.len())]),
            None => Vec::new(),
        };
        let fam = ["", "_total", "_created", "_bucket", "_sum", "_count"]
            .iter()
            .filter_map(|s| name.strip_suffix(s))
            .find(|f| out.contains_key(*f))
            .unwrap_or(name)
            .to_owned();
        let f = out.entry(fam).or_default();
        f.samples.entry(name.to_owned()).or_default().insert(keys);
    }
    out
}

/// How the dialect's metrics text differs from the transcript's: every family, sample name
/// and label-key set the dialect writes is in the transcript; the series the client reads
/// (`read`) that the transcript has, the dialect writes.
fn metric_differences(transcript: &str, dialect: &str, read: &[&str]) -> Vec<String> {
    let (t, d) = (families(transcript), families(dialect));
    let mut out = Vec::new();
    for (name, f) in &d {
        // The family of the same samples, where the TYPE line names it otherwise.
        let same = t
            .iter()
            .find(|(_, tf)| f.samples.keys().any(|s| tf.samples.contains_key(s)));
        let tf = match (t.get(name), same) {
            (Some(tf), _) => tf,
            (None, Some((tname, tf))) => {
                out.push(format!(
                    "`# TYPE {name} {}` in the dialect, `# TYPE {tname} {}` in the transcript",
                    f.kind, tf.kind
                ));
                tf
            }
            (None, None) => {
                let names: Vec<&String> = f.samples.keys().collect();
                out.push(format!(
                    "the dialect writes {names:?} (`# TYPE {name}`), the transcript none"
                ));
                continue;
            }
        };
        if f.kind != tf.kind {
            out.push(format!(
                "`{name}`: TYPE {} in the dialect, {} in the transcript",
                f.kind, tf.kind
            ));
        }
        for (s, keys) in &f.samples {
            match tf.samples.get(s) {
                None => out.push(format!(
                    "`{name}`: the dialect writes sample `{s}`, the transcript none"
                )),
                Some(tk) if tk != keys => out.push(format!(
                    "`{s}`: label keys {keys:?} in the dialect, {tk:?} in the transcript"
                )),
                Some(_) => {}
            }
        }
    }
    let samples = |m: &BTreeMap<String, Family>| -> BTreeSet<String> {
        m.values().flat_map(|f| f.samples.keys().cloned()).collect()
    };
    let (ts, ds) = (samples(&t), samples(&d));
    for r in read {
        if ts.contains(*r) && !ds.contains(*r) {
            out.push(format!(
                "the client reads `{r}`: in the transcript, not in the dialect"
            ));
        }
    }
    out
}

/// The series the client reads for `engine` (its profile's running, waiting, KV and
/// preemption series).
fn read_series(engine: Engine) -> Vec<&'static str> {
    let m = crate::profile(engine)
        .and_then(|p| p.metrics)
        .expect("metrics facts");
    let mut v = vec![m.running, m.waiting];
    v.extend(m.kv_usage);
    v.extend(m.preemptions.map(|p| p.name));
    v
}

fn snapshot(running: u64, waiting: u64, finished: u64, preemptions: u64) -> Snapshot {
    Snapshot {
        running,
        waiting,
        decoding: running,
        kv_usage: 0.25,
        kv_used_tokens: 1024,
        preemptions,
        prompt_tokens: 128,
        generation_tokens: 64,
        steps: 70,
        requests: finished + running + waiting,
        finished,
    }
}

fn served(engine: Engine, model: &str) -> Served {
    let mut c = Served {
        model: model.into(),
        ..Served::default()
    };
    c.wire.engine = engine;
    c.wire.enable_metrics = true;
    c
}

/// Replays each (transcript, dialect text) pair; the differences found must be [`KNOWN`]'s.
fn check_metrics(engine: Engine, cases: &[(String, Served, Snapshot)]) {
    let read = read_series(engine);
    let mut found = Vec::new();
    for (file, config, snap) in cases {
        let text = crate::of(engine).metrics_text(&config.model, snap, &config.wire);
        assert!(!text.is_empty() || snap.finished == 0, "{file}: no text");
        for d in metric_differences(&super::read(file), &text, &read) {
            found.push((file.to_string(), d));
        }
    }
    compare_known(engine, &found);
}

fn compare_known(engine: Engine, found: &[(String, String)]) {
    let prefix = format!("{}/", crate::dialect::engine_name(engine));
    let known: Vec<(&str, &str)> = KNOWN
        .iter()
        .filter(|(f, _)| f.starts_with(&prefix))
        .flat_map(|(f, ds)| ds.iter().map(move |d| (*f, *d)))
        .collect();
    let listed =
        |(f, d): &(String, String)| known.iter().any(|(kf, kd)| kf == f && d.starts_with(kd));
    let new: Vec<_> = found.iter().filter(|x| !listed(x)).collect();
    let gone: Vec<_> = known
        .iter()
        .filter(|(kf, kd)| !found.iter().any(|(f, d)| f == kf && d.starts_with(kd)))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "the dialect of {engine:?} against its transcripts:\nnew differences (fix the dialect \
         or, if the transcript is wrong, the transcript with its source line):\n{new:#?}\n\
         listed in KNOWN but no longer found (remove them):\n{gone:#?}"
    );
}

#[test]
fn sglang_metrics_have_the_shape_of_its_own_collector() {
    let e = Engine::Sglang;
    let dir = "sglang/transcripts/0.5.23";
    let ranks = |tp: u32, dp: u32| {
        let mut c = served(e, "m");
        (c.wire.tp_size, c.wire.dp_size) = (tp, dp);
        c
    };
    check_metrics(
        e,
        &[
            (
                format!("{dir}/metrics-dp-attention.txt"),
                ranks(4, 4),
                snapshot(16, 7, 0, 0),
            ),
            (
                format!("{dir}/metrics-tp-all-schedulers.txt"),
                ranks(2, 1),
                snapshot(4, 2, 0, 0),
            ),
            (
                format!("{dir}/metrics-retract-before.txt"),
                ranks(1, 1),
                snapshot(7, 1, 0, 0),
            ),
            (
                format!("{dir}/metrics-retract-after.txt"),
                ranks(1, 1),
                snapshot(7, 1, 0, 5),
            ),
        ],
    );
}

#[test]
fn trtllm_metrics_have_the_shape_of_its_collector() {
    let e = Engine::Trtllm;
    let dir = "trtllm/transcripts/050f80de";
    let iter = |on: bool| {
        let mut c = served(e, "llama");
        c.wire.iter_perf_stats = on;
        c
    };
    check_metrics(
        e,
        &[
            (
                format!("{dir}/prometheus-metrics-perf-only.txt"),
                iter(false),
                snapshot(3, 1, 1, 0),
            ),
            (
                format!("{dir}/prometheus-metrics-iter-stats.txt"),
                iter(true),
                snapshot(3, 1, 1, 0),
            ),
        ],
    );
    // Before a request has finished the collector has recorded nothing, and prometheus_client
    // writes no family without samples: the dialect writes none either.
    let text = crate::of(e).metrics_text("llama", &snapshot(3, 1, 0, 0), &iter(true).wire);
    assert_eq!(text, "");
}

#[test]
fn llamacpp_metrics_have_the_families_of_a_model_server() {
    let e = Engine::Llamacpp;
    check_metrics(
        e,
        &[(
            "llamacpp/transcripts/b11434-router/metrics-model.txt".into(),
            served(e, "qwen3-0.6b"),
            snapshot(2, 1, 3, 0),
        )],
    );
}

// ---------------------------------------------------------------------------------------
// HTTP: the dialect's routes, its stream refusals and its chunks.

/// A server that is ready, with nothing in flight.
struct Ready(Snapshot);

impl Live for Ready {
    fn ready(&self) -> bool {
        true
    }
    fn serving(&self) -> bool {
        true
    }
    fn in_flight(&self) -> u64 {
        0
    }
    fn metrics(&self) -> Snapshot {
        self.0
    }
    fn info(&self) -> Value {
        json!({})
    }
}

/// `GET path` on the dialect's routes (its own and its metrics).
async fn get(config: Served, path: &str) -> (StatusCode, String) {
    let d = crate::of(config.wire.engine);
    let host = Arc::new(Host::new(config, 0, Arc::new(Ready(snapshot(1, 0, 1, 0)))));
    let app = dialect::routes(d).with_state(host);
    let req = Request::get(path).body(Body::empty()).expect("request");
    body(app.oneshot(req).await.expect("infallible")).await
}

async fn body(r: Response) -> (StatusCode, String) {
    let status = r.status();
    let b = axum::body::to_bytes(r.into_body(), usize::MAX)
        .await
        .expect("body");
    (status, String::from_utf8(b.to_vec()).expect("utf-8"))
}

/// A recorded `curl -i` response: its status and body.
fn http(path: &str) -> (StatusCode, String) {
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

fn json_shape(text: &str, what: &str) -> Value {
    shape(&serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: {e}: {text}")))
}

/// The events of an SSE body: each `data:` payload's shape (`[DONE]` as itself), runs of
/// one shape written once.
fn events(body: &str, what: &str) -> Vec<Value> {
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
    let ctx = Ctx {
        api,
        id: "0df11c94-eae0-42ba-acb1-c0f3d5fb3910".into(),
        created: 1_796_115_607,
        model: "tiny-lm".into(),
        include_usage: true,
        reasoning_tokens: 0,
        logprobs: false,
        tokens_as_ids: false,
        token_ids: false,
    };
    let mut s = crate::of(Engine::Transformers)
        .shape(ctx, &tiny())
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

#[test]
fn the_metrics_shape_reader_tells_families_apart() {
    // The checker itself: a renamed family, a changed TYPE and a new label key are found.
    let t = "# TYPE a_total counter\na_total{x=\"1\"} 1.0\n# TYPE g gauge\ng{x=\"a,}b\"} 2\n";
    assert!(metric_differences(t, t, &["g"]).is_empty());
    let d = "# TYPE a counter\na_total{x=\"1\"} 1.0\n# TYPE g counter\ng{x=\"1\",pid=\"2\"} 2\n";
    let diff = metric_differences(t, d, &["g"]);
    assert_eq!(diff.len(), 3, "{diff:#?}");
    assert_eq!(
        diff[0],
        "`# TYPE a counter` in the dialect, `# TYPE a_total counter` in the transcript"
    );
    assert!(
        diff[1].contains("`g`: TYPE counter in the dialect, gauge"),
        "{diff:#?}"
    );
    assert!(diff[2].contains("[\"pid\", \"x\"]"), "{diff:#?}");
    assert_eq!(
        metric_differences(t, "", &["g"]),
        ["the client reads `g`: in the transcript, not in the dialect"]
    );
}
