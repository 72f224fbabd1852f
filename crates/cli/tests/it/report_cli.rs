//! `servebench report` end to end: a fresh simulator run reported into a folder with every
//! file; the committed example reported within one run and across two; the default output
//! folder; usage errors.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn sb() -> Command {
    Command::cargo_bin("servebench").expect("binary")
}

fn example() -> PathBuf {
    std::fs::read_dir(repo().join("docs/example-report"))
        .expect("docs/example-report exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("the example result file is committed")
}

const FILES: [&str; 8] = [
    "report.md",
    "report.html",
    "throughput.svg",
    "ratio-fast.svg",
    "ttft.svg",
    "tpot.svg",
    "cdf.svg",
    "trials.csv",
];

/// A small A/B on the simulator: 2 variants × 3 trials × 2 points of 16 requests.
const SPEC: &str = r#"
apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: report-e2e}
spec:
  server:
    command: ["${servebench}", sim]
    args: [--port, "${port}", --prefill-ms-per-token, "0.01", --jitter-cv, "0.02"]
    readiness: {http: {path: /health}, interval: 20ms, timeout: 20s}
    stop: {signal: SIGTERM, grace: 5s}
  target: {api: openai-completions, model: sim-model, tokenizer: server}
  variants:
    - {name: base, baseline: true, server: {args: [--decode-base-ms, "2"]}}
    - {name: fast, server: {args: [--decode-base-ms, "1.5"]}}
  workload:
    dataset: {kind: random, input_tokens: 16, output_tokens: 8}
    requests: 16
    warmup_requests: 1
    request_timeout: 20s
  sweep: {max_concurrency: [1, 16]}
  trials: {count: 3}
  compare: {metrics: [output_throughput, ttft_p50], threshold: 0.05}
"#;

fn assert_self_contained(html: &str) {
    for banned in ["http://", "https://", "<script", "<link", " src=", "url("] {
        assert!(!html.contains(banned), "report.html contains {banned:?}");
    }
}

#[test]
fn a_simulator_run_is_reported_with_every_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = dir.path().join("spec.yaml");
    std::fs::write(&spec, SPEC).expect("spec written");
    let results = dir.path().join("results");
    sb().current_dir(dir.path())
        .args(["run", "--quiet", "--no-bars", "--results-dir"])
        .arg(&results)
        .arg(&spec)
        .assert()
        .code(0);
    let result = std::fs::read_dir(results.join("report-e2e"))
        .expect("results folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a result file");
    let out = dir.path().join("out");
    let assert = sb()
        .arg("report")
        .arg(&result)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    for f in FILES {
        let path = out.join(f);
        assert!(path.is_file(), "{f} written");
        assert!(stdout.contains(&path.display().to_string()), "{f} listed");
    }
    let html = std::fs::read_to_string(out.join("report.html")).expect("html");
    assert_self_contained(&html);
    // Every plot written is inline: the five of FILES, and a telemetry plot per trial now
    // that the engine's metrics are scraped by default (issue 41).
    let svgs = std::fs::read_dir(&out)
        .expect("out")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "svg"))
        })
        .count();
    assert!(svgs > 5, "{svgs} plots");
    assert_eq!(html.matches("<svg").count(), svgs, "every plot inline");
    let md = std::fs::read_to_string(out.join("report.md")).expect("md");
    assert!(md.contains("### fast vs base (within one run, interleaved)"));
    assert!(md.contains("| `fast` | candidate | `--decode-base-ms 1.5` |"));
    let csv = std::fs::read_to_string(out.join("trials.csv")).expect("csv");
    assert_eq!(
        csv.lines().count(),
        1 + 2 * 3 * 2,
        "header and one row per trial"
    );
}

#[test]
fn the_default_folder_is_beside_the_result() {
    let dir = tempfile::tempdir().expect("temp dir");
    let copy = dir.path().join("run-1.json");
    std::fs::copy(example(), &copy).expect("copied");
    sb().arg("report").arg(&copy).assert().code(0);
    let out = dir.path().join("run-1.report");
    assert!(out.join("report.html").is_file());
    assert!(out.join("ratio-cutedsl.svg").is_file());
}

fn with_run_id(dir: &Path, suffix: &str) -> PathBuf {
    let text = std::fs::read_to_string(example()).expect("example");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let id = v["run_id"].as_str().expect("run id").to_owned();
    v["run_id"] = serde_json::Value::String(format!("{id}{suffix}"));
    let path = dir.join(format!("candidate{suffix}.json"));
    std::fs::write(&path, serde_json::to_string(&v).expect("json")).expect("written");
    path
}

#[test]
fn two_result_files_make_an_across_run_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cand = with_run_id(dir.path(), "-b");
    let out = dir.path().join("out");
    sb().arg("report")
        .arg(example())
        .arg(&cand)
        .args(["--candidate-variant", "cutedsl", "--cdf-point", "c=4", "-o"])
        .arg(&out)
        .assert()
        .code(0);
    let md = std::fs::read_to_string(out.join("report.md")).expect("md");
    assert!(md.contains("### cutedsl vs cutlass (across two runs"));
    assert!(md.contains("`stale-baseline`"));
    assert!(md.contains("each latency at c=4, from the HDR histograms"));
    assert_self_contained(&std::fs::read_to_string(out.join("report.html")).expect("html"));
}

#[test]
fn usage_errors_exit_2_with_the_reason() {
    let dir = tempfile::tempdir().expect("temp dir");
    sb().arg("report")
        .arg(example())
        .args(["--cdf-point", "c=7", "-o"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--cdf-point \"c=7\" matches no sweep point",
        ))
        .stderr(predicate::str::contains("c=1, c=4, c=16, c=32"));
    sb().arg("report")
        .arg(example())
        .args(["--baseline-variant", "nope", "-o"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("variant `nope`"));
    sb().arg("report")
        .arg(dir.path().join("missing.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.json"));
}
