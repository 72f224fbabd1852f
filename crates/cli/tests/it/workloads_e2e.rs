//! The workloads of real traffic end to end on the simulator (docs/workloads.md): a
//! shared-prefix A/B of the simulator's prefix cache off vs on comes out improved on TTFT,
//! the cached tokens are in the request records, and the hit ratio is in the trial summaries,
//! the end-of-run table and the report.
//!
//! The effect is large by construction (a 512-token prefix at 0.05 ms a token: ≈26 ms of
//! prefill cold, ≈1 ms cached) so the verdict does not depend on machine load.

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

use crate::common::faults::sidecar;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn sb() -> Command {
    Command::cargo_bin("servebench").expect("binary")
}

/// Runs `crates/cli/tests/specs/<name>.yaml`; its result file and the run's stdout.
fn run_spec(name: &str, dir: &std::path::Path) -> (PathBuf, String) {
    let spec = repo().join(format!("crates/cli/tests/specs/{name}.yaml"));
    let out = sb()
        .current_dir(dir)
        .args(["run", "--no-bars", "--results-dir"])
        .arg(dir.join("results"))
        .arg(&spec)
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let folder = dir.join("results").join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .expect("results folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    (files.remove(0), stdout)
}

#[test]
fn a_shared_prefix_ab_of_the_prefix_cache_is_improved_on_ttft() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, stdout) = run_spec("shared-prefix-cache", dir.path());
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("result")).expect("json");

    // Trial summaries: the cached variant reports its hits, the cold one none.
    for t in result["trials"].as_array().expect("trials") {
        assert_eq!(t["status"], "ok", "{t}");
        let tokens = &t["summary"]["tokens"];
        match t["variant"].as_str() {
            Some("cached") => {
                let cached = tokens["cached_prompt_tokens"].as_f64().expect("cached");
                let total = tokens["cache_reported_prompt_tokens"]
                    .as_f64()
                    .expect("total");
                // 24 prompts of 528 tokens in 4 groups: at best only the first of each group
                // misses its 512-token prefix (32 blocks of 16): 20·512 / (24·528) ≈ 0.808.
                let ratio = cached / total;
                assert!(
                    (0.4..=20.0 * 512.0 / (24.0 * 528.0)).contains(&ratio),
                    "hit ratio {ratio}"
                );
            }
            _ => assert!(
                tokens.get("cached_prompt_tokens").is_none(),
                "no cache, no report: {tokens}"
            ),
        }
    }

    // Request records keep what the server said; every prompt is exactly 528 tokens.
    let lines = sidecar(&path);
    let measured: Vec<&Value> = lines
        .iter()
        .filter(|l| l["warmup"] == false && l["variant"] == "cached")
        .collect();
    assert_eq!(measured.len(), 4 * 24);
    let mut hits = 0;
    for l in &measured {
        let r = *l; // the record's fields are flattened into the line
        assert_eq!(r["usage"]["prompt_tokens"], 528, "{r}");
        assert_eq!(r["expected_input_tokens"], 528);
        let c = r["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .expect("cached tokens");
        hits += usize::from(c >= 512);
    }
    assert!(hits >= 4 * 12, "{hits} of 96 requests found their prefix");

    // The end-of-run table shows the ratio.
    assert!(stdout.contains("cache_hit_ratio"), "{stdout}");

    // Compare: TTFT improved with the cache.
    let out = sb()
        .arg("compare")
        .arg(&path)
        .arg("--json")
        .assert()
        .code(0);
    let cmp: Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    let c = &cmp["comparisons"][0];
    assert_eq!(c["candidate"]["variant"], "cached");
    for metric in ["ttft_p50", "ttft_mean"] {
        let m = c["metrics"]
            .as_array()
            .expect("metrics")
            .iter()
            .find(|m| m["metric"] == metric)
            .expect("metric");
        for p in m["points"].as_array().expect("points") {
            assert_eq!(p["verdict"], "improved", "{metric}: {p}");
        }
    }

    // The report carries the hit-ratio table.
    let report = dir.path().join("report");
    sb().arg("report")
        .arg(&path)
        .arg("-o")
        .arg(&report)
        .assert()
        .code(0);
    let md = std::fs::read_to_string(report.join("report.md")).expect("report.md");
    assert!(md.contains("Prefix-cache hit ratio"), "{md}");
}

/// The measured lines of a result's sidecar, by (trial, point), in send order.
fn measured_by_trial(path: &std::path::Path) -> std::collections::BTreeMap<(u64, u64), Vec<Value>> {
    let mut out: std::collections::BTreeMap<(u64, u64), Vec<Value>> = Default::default();
    for l in sidecar(path).into_iter().filter(|l| l["warmup"] == false) {
        let key = (
            l["trial"].as_u64().expect("trial"),
            l["point"].as_u64().expect("point"),
        );
        out.entry(key).or_default().push(l);
    }
    for v in out.values_mut() {
        v.sort_by_key(|l| l["index"].as_u64());
    }
    out
}

#[test]
fn a_plain_trace_is_replayed_on_its_clock_at_each_speed() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, _) = run_spec("trace-plain", dir.path());
    let trace: Vec<Value> =
        std::fs::read_to_string(repo().join("crates/runner/tests/fixtures/trace-plain.jsonl"))
            .expect("fixture")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("result")).expect("json");
    let labels: Vec<&str> = result["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| p["label"].as_str().expect("label"))
        .collect();
    assert!(
        labels[0].contains("speed=1x") && labels[1].contains("speed=2x"),
        "{labels:?}"
    );
    let trials = measured_by_trial(&path);
    assert_eq!(trials.len(), 4, "2 trials × 2 speeds");
    for ((_, point), lines) in &trials {
        let speed = if *point == 0 { 1.0 } else { 2.0 };
        assert_eq!(lines.len(), trace.len(), "the whole trace");
        for (l, t) in lines.iter().zip(&trace) {
            // Due at the trace's time over the speed; input and output lengths as traced.
            let due = t["timestamp"].as_f64().expect("ts") * 1e6 / speed;
            let intended = l["intended_ns"].as_f64().expect("intended");
            assert!((intended - due).abs() <= 1.0, "{intended} vs {due}");
            assert_eq!(l["usage"]["prompt_tokens"], t["input_tokens"]);
            assert_eq!(l["max_tokens"], t["output_tokens"]);
            assert!(l["error"].is_null(), "{l}");
        }
    }
    for t in result["trials"].as_array().expect("trials") {
        let s = &t["summary"];
        // Loose on purpose (a shared 2-core CI machine); bench/trace-lateness measures it.
        let p99 = s["send_lateness"]["p99"]
            .as_f64()
            .expect("lateness recorded");
        assert!(p99 < 50.0, "p99 lateness {p99} ms");
        assert!(s["scheduled_rate"].as_f64().expect("scheduled") > 100.0);
        assert!(s.get("limit_held_fraction").is_none(), "open loop");
    }
}

#[test]
fn a_mooncake_trace_shares_its_hash_id_blocks() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, _) = run_spec("trace-mooncake", dir.path());
    let trace: Vec<Value> =
        std::fs::read_to_string(repo().join("crates/runner/tests/fixtures/trace-mooncake.jsonl"))
            .expect("fixture")
            .lines()
            .take(24)
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
    let trials = measured_by_trial(&path);
    let lines = trials.values().next().expect("one trial");
    assert_eq!(lines.len(), 24, "the window's requests");
    let mut seen: std::collections::BTreeSet<u64> = Default::default();
    for (l, t) in lines.iter().zip(&trace) {
        assert_eq!(l["usage"]["prompt_tokens"], t["input_length"], "{l}");
        let ids: Vec<u64> = t["hash_ids"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|v| v.as_u64().expect("id"))
            .collect();
        // Leading blocks sent before (by an earlier request that has ended: the fixture's
        // gaps are far longer than a request) are found in the simulator's cache.
        let known = ids
            .iter()
            .take_while(|h| seen.contains(h))
            .count()
            .min(ids.len() - 1);
        let cached = l["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap_or(0);
        assert!(
            cached >= 16 * known as u64,
            "{cached} cached, {known} blocks known: {l}"
        );
        seen.extend(ids);
    }
}

#[test]
fn a_trace_going_backwards_is_refused_before_any_server_starts() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = std::fs::read_to_string(repo().join("crates/cli/tests/specs/trace-plain.yaml"))
        .expect("spec")
        .replace("trace-plain.jsonl", "trace-backwards.jsonl");
    // The trace path made absolute: the spec is written to a temporary folder.
    let spec = spec.replace(
        "../../../runner/tests/fixtures/",
        &format!("{}/", repo().join("crates/runner/tests/fixtures").display()),
    );
    let path = dir.path().join("trace-backwards.yaml");
    std::fs::write(&path, spec).expect("write");
    let out = sb()
        .current_dir(dir.path())
        .args(["run", "--no-bars", "--results-dir"])
        .arg(dir.path().join("results"))
        .arg(&path)
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr
            .contains("trace-backwards.jsonl:3: error: timestamp 10 is earlier than 20 on line 2"),
        "{stderr}"
    );
    assert!(!stderr.contains("starting server"), "{stderr}");
}

#[test]
fn a_multi_turn_run_carries_the_history_and_records_each_turn() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, _) = run_spec("multi-turn", dir.path());
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("result")).expect("json");
    for (_, lines) in measured_by_trial(&path) {
        assert_eq!(lines.len(), 5 * 3, "every turn of every conversation");
        let mut by_conv: std::collections::BTreeMap<u64, Vec<&Value>> = Default::default();
        for l in &lines {
            assert!(l["error"].is_null(), "{l}");
            let c = l["turn"]["conversation"].as_u64().expect("conversation");
            by_conv.entry(c).or_default().push(l);
        }
        assert_eq!(by_conv.len(), 5);
        for turns in by_conv.values() {
            for (k, pair) in turns.windows(2).enumerate() {
                let (a, b) = (pair[0], pair[1]);
                assert_eq!(a["turn"]["turn"], k as u64);
                assert_eq!(b["turn"]["turn"], k as u64 + 1);
                // The server saw the history: the next prompt holds the previous prompt and
                // its answer.
                let prompt = |l: &Value| l["usage"]["prompt_tokens"].as_u64().expect("usage");
                let answer = a["usage"]["completion_tokens"].as_u64().expect("usage");
                // (+ the 16-token user message; the chat template adds a few more).
                assert!(prompt(b) >= prompt(a) + answer + 16, "{a}\n{b}");
                // Sent after the answer arrived and the think time passed.
                let end = a["end_ns"].as_u64().expect("end");
                let send = b["send_ns"].as_u64().expect("send");
                assert!(send >= end + 10_000_000, "sent {send} after end {end}");
            }
        }
    }
    for t in result["trials"].as_array().expect("trials") {
        let s = &t["summary"];
        // The limit counts conversations: never more than 2 requests in flight.
        assert!(s["all"]["peak_concurrency"].as_u64().expect("peak") <= 2);
        let turns = s["turns"].as_array().expect("per-turn summaries");
        assert_eq!(turns.len(), 3);
        let mut last = 0.0;
        for (k, ts) in turns.iter().enumerate() {
            assert_eq!(ts["turn"], k as u64);
            assert_eq!(ts["completed"], 5);
            assert!(ts["ttft"]["p50"].as_f64().expect("ttft") > 0.0);
            let p = ts["mean_prompt_tokens"].as_f64().expect("prompt");
            assert!(p > last, "prompts grow with the turn: {turns:?}");
            last = p;
        }
    }
}

#[test]
fn requests_longer_than_the_server_takes_are_refused_unsent_with_what_to_change() {
    // The simulator takes at most 256 tokens a request (its /v1/models says so); the workload
    // asks for 300-token prompts: each trial is recorded as failed before anything is sent.
    let dir = tempfile::tempdir().expect("tmp");
    let spec = dir.path().join("too-long.yaml");
    std::fs::write(
        &spec,
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: too-long}
spec:
  server:
    command: ["${servebench}", sim]
    args: [--port, "${port}", --preset, fast, --max-model-len, "256"]
    readiness: {http: {path: /health}, interval: 20ms, timeout: 20s}
  target: {api: openai-completions, model: sim-model, tokenizer: server}
  variants:
    - {name: a, baseline: true}
  workload:
    dataset: {kind: random, input_tokens: 300, output_tokens: 16}
    requests: 8
    warmup_requests: 1
    max_concurrency: 2
  trials: {count: 1}
"#,
    )
    .expect("spec");
    let out = sb()
        .current_dir(dir.path())
        .args(["run", "--no-bars", "--results-dir"])
        .arg(dir.path().join("results"))
        .arg(&spec)
        .assert()
        .code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned()
        + &String::from_utf8_lossy(&out.get_output().stderr);
    let path = crate::common::result_file(dir.path());
    let result = crate::common::read_json(&path);
    let trial = &result["trials"][0];
    assert_eq!(trial["status"], "failed", "{trial}");
    let why = trial["failure"].as_str().expect("a reason");
    assert!(
        why.contains("9 of 9 requests need more tokens than the server takes")
            && why.contains("300 prompt + 16 output = 316 tokens")
            && why.contains("limit is 256 (`max_model_len` of sim-model in /v1/models)")
            && why.contains("--max-model-len"),
        "{why}"
    );
    assert!(
        text.contains("need more tokens than the server takes"),
        "{text}"
    );
    // Nothing was sent: no request record (the sidecar is absent or empty).
    let side = path.with_file_name(result["requests_file"].as_str().unwrap_or("none"));
    assert!(
        !side.exists() || crate::common::faults::sidecar_lines(&side).is_empty(),
        "no request records"
    );
}
