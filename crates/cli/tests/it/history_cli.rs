//! `servebench history` end to end on histories made from one simulator result
//! (crates/history/tests/fixtures/run.json, levels set per run): the text, `--json`,
//! `--fail-on step`, the report folder, and the series view `compare` adds across runs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{read_json, sb, scratch};

const FIXTURE: &str = include_str!("../../../history/tests/fixtures/run.json");

/// Write run `i` (from 0) at `level` (output throughput × level) into `dir`.
fn write_run(dir: &Path, i: usize, level: f64) -> PathBuf {
    let mut v: Value = serde_json::from_str(FIXTURE).expect("fixture");
    let id = format!("202611{:02}T100000Z-{i:04x}", i + 1);
    v["run_id"] = id.clone().into();
    v["created_at"] = format!("2026-11-{:02}T10:00:00Z", i + 1).into();
    v["requests_file"] = format!("{id}.requests.jsonl").into();
    let spread = [0.99, 1.01, 1.0, 0.985, 1.015, 1.005, 0.995];
    for (t, trial) in v["trials"]
        .as_array_mut()
        .expect("trials")
        .iter_mut()
        .enumerate()
    {
        let noise = spread[(3 * i + t) % spread.len()];
        trial["summary"]["all"]["output_throughput"] = (6000.0 * level * noise).into();
        trial["summary"]["all"]["tpot"]["p50"] = (2.0 / level / noise).into();
    }
    std::fs::create_dir_all(dir).expect("mkdir");
    let path = dir.join(format!("{id}.json"));
    std::fs::write(&path, v.to_string()).expect("write");
    path
}

fn write_levels(dir: &Path, levels: &[f64]) -> Vec<PathBuf> {
    levels
        .iter()
        .enumerate()
        .map(|(i, &l)| write_run(dir, i, l))
        .collect()
}

#[test]
fn text_json_and_the_gate() {
    let dir = scratch("history_cli", "gate");
    let results = dir.join("results");
    let mut levels = vec![1.0; 12];
    levels[4] = 0.75;
    levels.extend([0.85, 0.85]);
    write_levels(&results, &levels);
    std::fs::write(
        results.join("x.compare.json"),
        r#"{"format": "servebench-compare/2"}"#,
    )
    .expect("write");

    let out = sb(&dir)
        .args(["history", "--metric", "output_throughput", "results"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).expect("utf-8");
    assert!(
        text.contains("14 run(s) of 1 spec(s) from results; 1 file(s) skipped"),
        "{text}"
    );
    assert!(
        text.contains("skipped results/x.compare.json: a `servebench-compare/2` file"),
        "{text}"
    );
    assert!(text.contains("outlier run 5"), "{text}");
    assert!(text.contains("step -14.7% ["), "{text}");
    assert!(text.contains("re-baseline"), "{text}");

    let out = sb(&dir)
        .args(["history", "--json", "--fail-on", "step", "results"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let h: Value = serde_json::from_slice(&out).expect("JSON");
    assert_eq!(h["format"], "servebench-history/1");
    assert_eq!(h["gate"]["tripped"], true);
    let cells = h["specs"][0]["series"][0]["cells"]
        .as_array()
        .expect("cells");
    let metrics: Vec<&str> = cells.iter().filter_map(|c| c["metric"].as_str()).collect();
    assert_eq!(
        metrics,
        ["output_throughput", "tpot_p50"],
        "the spec's compare.metrics"
    );
    assert_eq!(cells[0]["change_points"][0]["first_run_after"]["index"], 12);

    // Since the run that confirmed it, the step is old: the gate passes.
    sb(&dir)
        .args([
            "history",
            "--fail-on",
            "step",
            "--since",
            "20261114T100000Z-000d",
            "results",
        ])
        .assert()
        .code(0);
    // An unknown gate is a usage error that says what to write.
    let err = sb(&dir)
        .args(["history", "--fail-on", "regressed", "results"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8_lossy(&err).contains("use `step`"));
}

#[test]
fn the_report_folder_has_a_trend_per_metric() {
    let dir = scratch("history_cli", "report");
    write_levels(
        &dir.join("results"),
        &[1.0, 1.0, 1.0, 1.0, 0.9, 0.9, 0.9, 0.9],
    );
    sb(&dir)
        .args(["history", "-o", "out", "results"])
        .assert()
        .code(0);
    for f in [
        "report.md",
        "report.html",
        "trend-history-bench-output_throughput-c16.svg",
        "trend-history-bench-tpot_p50-c16.svg",
    ] {
        let p = dir.join("out").join(f);
        assert!(p.exists(), "{} is written", p.display());
    }
    let md = std::fs::read_to_string(dir.join("out/report.md")).expect("read");
    assert!(
        md.contains("![output_throughput at c=16 across runs]"),
        "{md}"
    );
}

#[test]
fn compare_across_runs_cites_a_step_in_the_baselines_series() {
    let dir = scratch("history_cli", "compare");
    let results = dir.join("results");
    let files = write_levels(
        &results,
        &[1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.9, 0.9, 0.9, 0.9],
    );
    // Run 3 as the baseline of run 10: the series stepped at run 6, after it.
    let out = sb(&dir)
        .args(["compare", "--json", "--metric", "output_throughput"])
        .args([&files[2], &files[9]])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let report: Value = serde_json::from_slice(&out).expect("JSON");
    let c = &report["comparisons"][0];
    let series = &c["baseline_series"];
    assert_eq!(series["runs"], 10);
    assert_eq!(series["steps"][0]["first_run"], "20261106T100000Z-0005");
    let stale = c["metrics"][0]["flags"]
        .as_array()
        .expect("flags")
        .iter()
        .find(|f| f["id"] == "stale-baseline")
        .expect("stale-baseline");
    let evidence = stale["evidence"].as_str().expect("evidence");
    assert!(evidence.contains("20261106T100000Z-0005"), "{evidence}");
    assert!(evidence.contains("-10."), "{evidence}");

    // --no-history: the flag without the series' evidence.
    let out = sb(&dir)
        .args([
            "compare",
            "--json",
            "--no-history",
            "--metric",
            "output_throughput",
        ])
        .args([&files[2], &files[9]])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let report: Value = serde_json::from_slice(&out).expect("JSON");
    assert!(report["comparisons"][0]["baseline_series"].is_null());
    let _ = read_json(&files[0]);
}

#[test]
fn a_git_range_is_read_without_a_checkout() {
    let dir = scratch("history_cli", "git");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(&dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    let results = dir.join("results");
    for i in 0..8 {
        write_run(&results, i, if i < 4 { 1.0 } else { 0.9 });
        git(&["add", "."]);
        git(&["commit", "-q", "-m", &format!("run {}", i + 1)]);
    }
    // The working tree loses the files: the range still has them.
    std::fs::remove_dir_all(&results).expect("rm");
    let out = sb(&dir)
        .args(["history", "--json", "--metric", "output_throughput"])
        .args(["--git", "HEAD~3..HEAD", "results"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let h: Value = serde_json::from_slice(&out).expect("JSON");
    assert_eq!(h["sources"][0], "git HEAD~3..HEAD results");
    let runs = h["specs"][0]["series"][0]["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 8, "the newest commit holds every run");
    assert!(
        runs[7]["file"]
            .as_str()
            .expect("file")
            .contains(":results/")
    );
    assert!(runs[7]["commit"].is_string());
    // Outside a repository: an error naming the git command.
    let outside = tempfile::tempdir().expect("tempdir");
    let err = sb(outside.path())
        .args(["history", "--git", "HEAD", "results"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(
        String::from_utf8_lossy(&err).contains("git rev-list"),
        "{}",
        String::from_utf8_lossy(&err)
    );
}

/// Issue 41, item 6: the findings come first. Over the committed results (many specs, one
/// series with a step and an outlier run) the finding was at line 235 of 381; now the
/// first lines count and name it, and the series follow.
#[test]
fn the_findings_come_first_over_the_committed_results() {
    let repo = crate::common::repo();
    let out = sb(&repo).args(["history", "results/"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let head: Vec<&str> = text.lines().take(12).collect();
    let head = head.join("\n");
    assert!(head.contains("findings: "), "{head}");
    assert!(
        head.contains("history-example series 1: output_throughput c=16 `base`: step -7.3%"),
        "{head}"
    );
    assert!(head.contains("outlier run 5"), "{head}");
}
