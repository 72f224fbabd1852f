//! A second real engine end to end: Hugging Face `transformers serve` 5.24.0 on the CPU,
//! serving the tiny random-weight Llama that `scripts/setup-transformers` makes, launched,
//! verified from its own log and measured by `servebench run`, with servebench's per-request
//! token counts checked against the server's own `usage`.
//!
//! The model's tokenizer is whole-word (every token streams as one content chunk) and the
//! model can never generate a special token, so every output runs to `max_tokens` and the
//! client's count of content chunks is exact. Its chat template adds a fixed number of tokens
//! to a one-message prompt (the set-up writes it to `servebench-tiny-lm.json`).
//!
//! Needs `scripts/setup-transformers` (a cached venv and model). Under CI (`CI` set) a missing
//! set-up fails the test; on a developer machine it says how to set up and returns.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{self, read_json, repo, result_file, sb, scratch};

const VARS: [&str; 4] = [
    "TRANSFORMERS_SERVE",
    "TRANSFORMERS_MODEL",
    "TRANSFORMERS_MODEL_DIR",
    "TRANSFORMERS_TOKENIZER",
];

/// The set-up's variables, from the environment or the set-up's env file; `None` when the
/// set-up is missing (a path it names does not exist).
pub(crate) fn transformers_env() -> Option<BTreeMap<String, String>> {
    let mut vars = BTreeMap::new();
    for k in VARS {
        if let Ok(v) = std::env::var(k) {
            vars.insert(k.to_owned(), v);
        }
    }
    if vars.len() < VARS.len() {
        let cache = std::env::var("SERVEBENCH_TRANSFORMERS_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|_| {
                PathBuf::from(std::env::var("HOME").unwrap_or_default())
                    .join(".cache/servebench/transformers")
            });
        let text = std::fs::read_to_string(cache.join("env")).ok()?;
        for line in text.lines() {
            if let Some((k, v)) = line.split_once('=') {
                vars.insert(k.trim().to_owned(), v.trim().to_owned());
            }
        }
    }
    let paths = [
        "TRANSFORMERS_SERVE",
        "TRANSFORMERS_MODEL_DIR",
        "TRANSFORMERS_TOKENIZER",
    ];
    let ok = paths
        .iter()
        .all(|k| vars.get(*k).is_some_and(|p| Path::new(p).exists()))
        && vars
            .get("TRANSFORMERS_MODEL")
            .is_some_and(|m| m == "tiny-lm");
    ok.then_some(vars)
}

pub(crate) fn require_transformers() -> Option<BTreeMap<String, String>> {
    match transformers_env() {
        Some(v) => Some(v),
        None if std::env::var_os("CI").is_some() => panic!(
            "transformers serve is not set up: CI must run scripts/setup-transformers before the tests"
        ),
        None => {
            eprintln!(
                "NOT RUN: transformers serve is not set up here; run scripts/setup-transformers (about 6 minutes once: 3 GB of wheels from PyPI)"
            );
            None
        }
    }
}

/// The committed spec, made small: `edits` are (from, to) replacements, each of which must
/// apply (so a change to the spec cannot silently leave the test running something else).
fn small_spec(edits: &[(&str, &str)]) -> String {
    let mut text =
        std::fs::read_to_string(repo().join("specs/transformers-cpu-continuous-batching.yaml"))
            .expect("spec");
    for (from, to) in edits {
        assert!(text.contains(from), "the spec no longer contains {from:?}");
        text = text.replace(from, to);
    }
    text
}

/// Runs `spec_text` in a fresh folder; returns the result and its request lines.
fn run_spec(env: &BTreeMap<String, String>, name: &str, spec_text: &str) -> (Value, Vec<Value>) {
    let dir = scratch("transformers_e2e", name);
    let spec = common::write_spec(&dir, spec_text);
    let out = sb(&dir)
        .envs(env)
        .args(["run", "--no-bars"])
        .arg(&spec)
        .arg("--set")
        .arg(format!(
            "target.tokenizer_path={}",
            env["TRANSFORMERS_TOKENIZER"]
        ))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "servebench run failed:\n{stderr}");
    let file = result_file(&dir);
    let r = read_json(&file);
    let lines = common::faults::sidecar_lines(
        &file.with_file_name(r["requests_file"].as_str().expect("sidecar")),
    );
    (r, lines)
}

/// Tokens the model's chat template adds to a one-message prompt, as the set-up measured it.
fn template_tokens(env: &BTreeMap<String, String>) -> u64 {
    let info =
        read_json(&Path::new(&env["TRANSFORMERS_MODEL_DIR"]).join("servebench-tiny-lm.json"));
    info["chat_template_tokens"]
        .as_u64()
        .expect("chat_template_tokens")
}

/// Every measured request succeeded, and servebench's counts equal the server's usage:
/// output tokens (one content chunk a token) and the prompt (servebench's exact count of the
/// text, plus `template` tokens of chat template). Returns the number of measured requests.
fn check_counts(lines: &[Value], out_tokens: u64, in_tokens: u64, template: u64) -> usize {
    let mut measured = 0;
    for l in lines.iter().filter(|l| l["warmup"] == false) {
        measured += 1;
        assert!(l["error"].is_null(), "a failed request: {l}");
        let usage = &l["usage"];
        let n_out = usage["completion_tokens"].as_u64().expect("usage");
        let events: u64 = l["events"]
            .as_array()
            .expect("events")
            .iter()
            .map(|e| e[1].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(
            events, n_out,
            "content chunks vs usage.completion_tokens: {l}"
        );
        assert_eq!(n_out, out_tokens, "outputs run to max_tokens: {l}");
        assert_eq!(l["max_tokens"], out_tokens);
        // The engine's profile fixes the length (generation_config) instead of ignore_eos.
        assert_eq!(l["output_target"], out_tokens, "{l}");
        assert_eq!(l["finish_reason"], "length", "{l}");
        assert_eq!(l["expected_input_tokens"], in_tokens, "{l}");
        assert_eq!(
            usage["prompt_tokens"].as_u64(),
            Some(in_tokens + template),
            "usage.prompt_tokens vs servebench's count + the chat template: {l}"
        );
    }
    measured
}

/// Each server start passed its verify rule, and the evidence is the server's own log line.
fn check_verified(r: &Value) {
    let servers = r["servers"].as_array().expect("servers");
    assert!(!servers.is_empty());
    for s in servers {
        let cb = if s["variant"] == "batching" {
            "True"
        } else {
            "False"
        };
        let verify = s["verify"].as_array().expect("verify");
        assert_eq!(verify.len(), 1, "{s}");
        assert_eq!(verify[0]["passed"], true, "{s}");
        let detail = verify[0]["detail"].as_str().unwrap_or("");
        assert!(
            detail.contains(&format!("[Request received] Model: tiny-lm, CB: {cb}")),
            "evidence: {detail}"
        );
    }
}

fn trials_clean(r: &Value) {
    for t in r["trials"].as_array().expect("trials") {
        let s = &t["summary"];
        let limit = r["points"][t["point"].as_u64().unwrap_or(0) as usize]["max_concurrency"]
            .as_u64()
            .expect("limit");
        assert!(
            s["all"]["peak_concurrency"]
                .as_u64()
                .is_some_and(|p| p <= limit),
            "{t}"
        );
        assert!(s["errors"].as_object().is_some_and(|e| e.is_empty()), "{t}");
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

#[test]
fn continuous_batching_ab_counts_match_the_servers_usage() {
    let _serial = common::REAL_ENGINE
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let Some(env) = require_transformers() else {
        return;
    };
    // 2 interleaved trials × 2 variants (4 server starts) × c = 1 and 4, 8 requests of
    // 64 → 32 tokens.
    let text = small_spec(&[
        ("count: 5", "count: 2"),
        ("requests: 16", "requests: 8"),
        (
            "input_tokens: 128, output_tokens: 64",
            "input_tokens: 64, output_tokens: 32",
        ),
    ]);
    let (r, lines) = run_spec(&env, "ab", &text);
    assert_eq!(r["status"], "complete", "{}", r["error"]);
    check_verified(&r);
    assert_eq!(r["servers"].as_array().map_or(0, Vec::len), 4);
    let measured = check_counts(&lines, 32, 64, template_tokens(&env));
    assert_eq!(measured, 2 * 2 * 2 * 8);
    trials_clean(&r);
    // The known effect: at concurrency 4 the sequential server makes each request wait for
    // the ones before it; with batching they start together.
    let ttft = |variant: &str| {
        let v: Vec<f64> = r["trials"]
            .as_array()
            .expect("trials")
            .iter()
            .filter(|t| t["variant"] == variant && t["point"] == 1)
            .map(|t| f(&t["summary"]["all"]["ttft"]["p50"]))
            .collect();
        assert_eq!(v.len(), 2, "{variant}");
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (seq, cb) = (ttft("sequential"), ttft("batching"));
    assert!(
        seq > 2.0 * cb,
        "TTFT p50 at c=4: sequential {seq:.1} ms vs batching {cb:.1} ms"
    );
}

#[test]
fn the_completions_api_counts_match_the_servers_usage() {
    let _serial = common::REAL_ENGINE
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let Some(env) = require_transformers() else {
        return;
    };
    // The legacy completions route: no chat template, so the prompt count is the server's
    // exactly. One trial of the batching variant alone (one server start), c = 2.
    let text = small_spec(&[
        ("api: openai-chat", "api: openai-completions"),
        (
            "    - name: sequential\n      baseline: true\n      vars: {cb: \"False\"}\n",
            "",
        ),
        (
            "    - name: batching\n",
            "    - name: batching\n      baseline: true\n",
        ),
        ("count: 5", "count: 1"),
        ("requests: 16", "requests: 6"),
        ("max_concurrency: [1, 4]", "max_concurrency: [2]"),
        (
            "input_tokens: 128, output_tokens: 64",
            "input_tokens: 48, output_tokens: 24",
        ),
    ]);
    let (r, lines) = run_spec(&env, "completions", &text);
    assert_eq!(r["status"], "complete", "{}", r["error"]);
    check_verified(&r);
    assert_eq!(r["servers"].as_array().map_or(0, Vec::len), 1);
    let measured = check_counts(&lines, 24, 48, 0);
    assert_eq!(measured, 6);
    for l in lines.iter().filter(|l| l["warmup"] == false) {
        assert_eq!(l["input_tokens_exact"], true, "{l}");
    }
    trials_clean(&r);
}

/// A `transformers serve` started by the test (the spec's batching variant), stopped when
/// dropped.
struct Server {
    child: std::process::Child,
    url: String,
    log: PathBuf,
}

impl Server {
    fn start(env: &BTreeMap<String, String>, dir: &Path) -> Server {
        let log = dir.join("server.log");
        let out = std::fs::File::create(&log).expect("log");
        let err = out.try_clone().expect("log");
        // Port 0: uvicorn binds a free port and prints it.
        let child = std::process::Command::new(&env["TRANSFORMERS_SERVE"])
            .args([
                "tiny-lm",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--device",
                "cpu",
            ])
            .args(["--continuous-batching", "--cb-num-blocks", "64"])
            .args(["--cb-max-batch-tokens", "1024"])
            .env("OMP_NUM_THREADS", "1")
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("start transformers serve");
        let mut server = Server {
            child,
            url: String::new(),
            log,
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
        while server.url.is_empty() {
            let text = std::fs::read_to_string(&server.log).unwrap_or_default();
            if let Some(rest) = text.split("Uvicorn running on ").nth(1) {
                server.url = rest.split_whitespace().next().unwrap_or("").to_owned();
            } else if std::time::Instant::now() > deadline
                || server.child.try_wait().ok().flatten().is_some()
            {
                panic!("transformers serve did not start:\n{text}");
            } else {
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
        }
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `servebench probe --json` of `url` with `args`; its exit code and report.
fn probe(dir: &Path, url: &str, args: &[&str]) -> (i32, Value) {
    let out = sb(dir)
        .args(["probe", url, "--json"])
        .args(args)
        .output()
        .expect("probe");
    let text = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "probe printed no JSON ({e}):\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

fn outcome<'a>(report: &'a Value, guarantee: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["guarantee"] == guarantee))
        .map_or(&Value::Null, |c| &c["outcome"])
}

#[test]
fn probe_finds_every_guarantee_the_spec_needs_on_a_batching_server() {
    let _serial = common::REAL_ENGINE
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let Some(env) = require_transformers() else {
        return;
    };
    let dir = scratch("transformers_e2e", "probe");
    let server = Server::start(&env, &dir);
    let spec = repo().join("specs/transformers-cpu-continuous-batching.yaml");
    let log = server.log.to_string_lossy().into_owned();
    let spec_arg = spec.to_string_lossy().into_owned();
    // With the spec: every guarantee it relies on holds, and its verify rule picks the
    // batching variant from the server's own log.
    let (code, report) = probe(&dir, &server.url, &["--spec", &spec_arg, "--log", &log]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["needed_fails"], false, "{report:#}");
    assert_eq!(report["engine"]["engine"], "transformers", "{report:#}");
    for g in [
        "model_served",
        "streaming",
        "usage",
        "output_length",
        "verify",
    ] {
        assert_eq!(outcome(&report, g), "holds", "{g}: {report:#}");
    }
    let verify = report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["guarantee"] == "verify"))
        .expect("verify check");
    assert!(
        verify["detail"]
            .as_str()
            .is_some_and(|d| d.contains("`batching`")),
        "{verify}"
    );
    // Without a spec: the engine is detected from what the server answers.
    let (_, report) = probe(&dir, &server.url, &["--api", "openai-chat"]);
    assert_eq!(report["engine"]["engine"], "transformers", "{report:#}");
    assert_ne!(report["engine"]["source"], "spec", "{report:#}");
    assert_eq!(outcome(&report, "streaming"), "holds", "{report:#}");
    drop(server);
}
