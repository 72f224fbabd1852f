//! The bench_serving-style summary of a one-variant run, on the console and in the report:
//! per point the throughputs and the mean, p50 and p99 of TTFT, TPOT, ITL and E2E; per turn
//! of a multi-turn point its TTFT and prompt length (stored before, never shown).

use crate::common;
use common::{repo, result_file, sb, write_spec};

#[test]
fn a_one_variant_run_prints_and_reports_the_summary_with_per_turn_ttft() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = std::fs::read_to_string(repo().join("crates/cli/tests/specs/multi-turn.yaml"))
        .expect("spec");
    let path = write_spec(dir.path(), &spec);
    let out = sb(dir.path())
        .args(["run", "--quiet"])
        .arg(&path)
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for want in [
        "c=2 rate=inf turns=3 user=16 out=8 — 2 trial(s), 30 requests",
        "request throughput (req/s)",
        "output token throughput (tok/s)",
        "total token throughput (tok/s)",
        "TTFT (ms)",
        "TPOT (ms)",
        "ITL (ms)",
        "E2E (ms)",
        "per turn (mean over trials",
    ] {
        assert!(text.contains(want), "missing `{want}` in:\n{text}");
    }
    // Three turns, each with 10 requests over the 2 trials, and prompts that grow with the
    // history the later turns carry.
    let turns: Vec<Vec<String>> = text
        .lines()
        .skip_while(|l| !l.contains("prompt tokens"))
        .skip(1)
        .take(3)
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect();
    assert_eq!(turns.len(), 3, "{text}");
    let prompt: Vec<f64> = turns
        .iter()
        .map(|r| r[4].parse().expect("a prompt length"))
        .collect();
    assert!(
        turns.iter().all(|r| r[1] == "10"),
        "10 requests a turn: {turns:?}"
    );
    assert!(prompt[0] < prompt[1] && prompt[1] < prompt[2], "{prompt:?}");
    // The report of the run has the same summary.
    let result = result_file(dir.path());
    let report = dir.path().join("report");
    sb(dir.path())
        .arg("report")
        .arg(&result)
        .arg("-o")
        .arg(&report)
        .assert()
        .code(0);
    let md = std::fs::read_to_string(report.join("report.md")).expect("report.md");
    assert!(md.contains("## Summary"), "{md}");
    assert!(md.contains("| TTFT |"), "{md}");
    assert!(md.contains("| turn | requests | TTFT mean (ms)"), "{md}");
}

/// Issue 51: the summary a bench_serving user reads — the duration, the request, input,
/// output and total throughputs, the goodput when the spec sets an SLO, and the percentiles
/// the spec asked for (`compare.metrics` naming `ttft_p95`), each with its interval over
/// trials, and a note where a trial had too few requests for a tail.
#[test]
fn a_one_variant_run_prints_duration_goodput_and_the_percentiles_asked_for() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec =
        std::fs::read_to_string(repo().join("crates/cli/tests/specs/tiny-ab.yaml")).expect("spec");
    let one = spec
        .replace(
            "    - name: cand\n      server: {args: [--label, cand, --decode-base-ms, \"1.5\", --decode-per-seq-ms, \"0.3\"]}\n      vars: {label: cand}\n",
            "",
        )
        .replace(
            "  trials: {count: 2}",
            "  slo: {ttft: 500ms}\n  compare: {metrics: [output_throughput, ttft_p95]}\n  trials: {count: 3}",
        )
        .replace("sweep: {max_concurrency: [1, 4]}", "sweep: {max_concurrency: [2]}");
    assert!(!one.contains("name: cand"), "{one}");
    let path = write_spec(dir.path(), &one);
    let out = sb(dir.path())
        .args(["run", "--quiet"])
        .arg(&path)
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for want in [
        "duration (s)",
        "request throughput (req/s)",
        "input token throughput (tok/s)",
        "output token throughput (tok/s)",
        "total token throughput (tok/s)",
        "goodput (req/s)",
        "p95",
        "note: p95 from 8 requests in a trial, fewer than the 90 it needs",
    ] {
        assert!(text.contains(want), "missing `{want}` in:\n{text}");
    }
    let header = text
        .lines()
        .find(|l| l.contains("mean") && l.contains("p50"))
        .expect("the latency header");
    let cols: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(cols, ["mean", "p50", "p95", "p99"], "{header}");
}
