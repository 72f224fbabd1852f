//! `servebench export`: a result's trials and request records as CSV tables for dataframes,
//! checked against the result they come from (a committed simulator run: 2 variants × 3
//! trials at one point, with its request sidecar), and docs/export.md's pandas snippet run on
//! them (pandas from `scripts/setup-pandas`; required under CI).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;
use common::{read_json, repo, scratch};

pub(crate) fn fixture() -> PathBuf {
    std::fs::read_dir(repo().join("crates/cli/tests/fixtures/rerun/results/sim-rerun"))
        .expect("committed sim result")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p.to_string_lossy().ends_with(".requests.json")
        })
        .expect("a result file")
}

pub(crate) fn export(result: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let out = common::sb(&repo())
        .arg("export")
        .arg(result)
        .args(extra)
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Rows of a CSV without quoted fields (the fixture has none) as header → cell maps.
pub(crate) fn rows(csv: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().expect("a header").split(',').collect();
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            assert_eq!(cells.len(), head.len(), "ragged row: {l}");
            head.iter()
                .zip(cells)
                .map(|(h, c)| ((*h).to_owned(), c.to_owned()))
                .collect()
        })
        .collect()
}

#[test]
fn export_trials_has_every_trial_and_every_catalogue_metric() {
    let path = fixture();
    let result = read_json(&path);
    let (code, csv, err) = export(&path, &[]);
    assert_eq!(code, Some(0), "{err}");
    let head: Vec<&str> = csv.lines().next().expect("header").split(',').collect();
    let catalogue: Value = serde_json::from_str(&String::from_utf8_lossy(
        &common::sb(&repo())
            .args(["schema", "metrics"])
            .output()
            .expect("runs")
            .stdout,
    ))
    .expect("catalogue json");
    for m in catalogue.as_array().expect("a list") {
        let name = m["name"].as_str().expect("a name");
        assert!(head.contains(&name), "no column {name}: {head:?}");
    }
    let rows = rows(&csv);
    let trials = result["trials"].as_array().expect("trials");
    assert_eq!(rows.len(), trials.len());
    for (row, t) in rows.iter().zip(trials) {
        assert_eq!(row["variant"], t["variant"].as_str().expect("variant"));
        assert_eq!(row["trial"], t["trial"].to_string());
        assert_eq!(row["status"], "ok");
        assert_eq!(row["point_label"], "c=2 rate=inf in=32 out=16");
        // A closed-loop point: its concurrency is its load, it has no request rate.
        assert_eq!(row["max_concurrency"], "2");
        assert_eq!(row["request_rate"], "");
        let all = &t["summary"]["all"];
        assert_eq!(row["completed"], all["completed"].to_string());
        // Numbers round-trip exactly (shortest form).
        let f = |k: &str| row[k].parse::<f64>().expect(k);
        assert_eq!(f("ttft_mean"), all["ttft"]["mean"].as_f64().expect("ttft"));
        assert_eq!(f("e2e_p99"), all["e2e"]["p99"].as_f64().expect("e2e"));
        assert_eq!(
            f("output_throughput"),
            all["output_throughput"].as_f64().expect("tput")
        );
    }
}

#[test]
fn export_requests_gives_back_each_trials_counts_and_mean_ttft() {
    let path = fixture();
    let result = read_json(&path);
    let dir = scratch("export", "requests");
    let out = dir.join("requests.csv");
    let (code, stdout, err) = export(
        &path,
        &["--table", "requests", "-o", &out.display().to_string()],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        stdout.is_empty(),
        "-o writes the file, not stdout: {stdout}"
    );
    let csv = std::fs::read_to_string(&out).expect("written");
    let sidecar = std::fs::read_to_string(path.with_extension("requests.jsonl")).expect("sidecar");
    let rows = rows(&csv);
    assert_eq!(
        rows.len(),
        sidecar.lines().filter(|l| !l.is_empty()).count()
    );
    for t in result["trials"].as_array().expect("trials") {
        let seq = t["seq"].to_string();
        let mine: Vec<_> = rows
            .iter()
            .filter(|r| r["seq"] == seq && r["warmup"] == "false" && r["error"].is_empty())
            .collect();
        let all = &t["summary"]["all"];
        assert_eq!(mine.len() as u64, all["completed"].as_u64().expect("n"));
        let mean = mine
            .iter()
            .map(|r| r["ttft_ms"].parse::<f64>().expect("ttft"))
            .sum::<f64>()
            / mine.len() as f64;
        let want = all["ttft"]["mean"].as_f64().expect("mean");
        assert!((mean - want).abs() <= 1e-9 * want, "{mean} vs {want}");
        let out_tokens: u64 = mine
            .iter()
            .map(|r| r["output_tokens"].parse::<u64>().expect("tokens"))
            .sum();
        assert_eq!(out_tokens, all["output_tokens"].as_u64().expect("tokens"));
    }
}

#[test]
fn export_requests_of_a_result_without_a_sidecar_says_so() {
    let dir = scratch("export", "no-sidecar");
    let path = dir.join("r.json");
    std::fs::copy(fixture(), &path).expect("copy");
    let (code, _, err) = export(&path, &["--table", "requests"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("has no request records"), "{err}");
    assert!(err.contains("--table trials"), "{err}");
    // The trials table needs no sidecar.
    assert_eq!(export(&path, &[]).0, Some(0));
}

/// The venv's python from `scripts/setup-pandas`, if it has been run.
pub(crate) fn pandas_python() -> Option<PathBuf> {
    let cache = std::env::var("SERVEBENCH_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/servebench")
        });
    let py = cache.join("pandas/bin/python");
    let ok = std::process::Command::new(&py)
        .args(["-c", "import pandas, pyarrow"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(py)
}

#[test]
fn export_pandas_snippet() {
    let Some(py) = pandas_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "pandas and pyarrow are not set up: CI must run scripts/setup-pandas before the tests"
        );
        eprintln!("NOT RUN: pandas and pyarrow are not set up (scripts/setup-pandas)");
        return;
    };
    let doc = std::fs::read_to_string(repo().join("docs/export.md")).expect("docs/export.md");
    let snippet = doc
        .split("```python\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("a python block in docs/export.md");
    let dir = scratch("export", "pandas");
    let (trials, requests) = (dir.join("trials.csv"), dir.join("requests.csv"));
    let path = fixture();
    for (file, table) in [(&trials, "trials"), (&requests, "requests")] {
        let o = file.display().to_string();
        let (code, _, err) = export(&path, &["--table", table, "-o", &o]);
        assert_eq!(code, Some(0), "{err}");
    }
    // The snippet as written, then checks of what it computed.
    let checks = r#"
assert len(trials) == 6, len(trials)
assert set(trials["variant"]) == {"fast", "slow"}, set(trials["variant"])
for (variant, point, trial), row in per_trial.iterrows():
    t = trials[(trials["variant"] == variant) & (trials["point"] == point) & (trials["trial"] == trial)]
    assert len(t) == 1, (variant, point, trial)
    assert row["count"] == t["completed"].iloc[0], (row["count"], t["completed"].iloc[0])
    assert abs(row["mean"] - t["ttft_mean"].iloc[0]) <= 1e-9 * t["ttft_mean"].iloc[0]
assert len(per_trial) == 6, len(per_trial)
print("CHECKED")
"#;
    let script = dir.join("snippet.py");
    std::fs::write(&script, format!("{snippet}{checks}")).expect("write");
    let out = std::process::Command::new(py)
        .arg(&script)
        .arg(&trials)
        .arg(&requests)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("output_throughput"), "{stdout}");
    assert!(stdout.contains("CHECKED"), "{stdout}");
}
