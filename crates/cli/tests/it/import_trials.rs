//! `servebench import … --as-trials`: a peer's repeated runs of one workload as the trials of
//! one arm, so an imported baseline gets an interval and a verdict (three single-trial
//! results could only say `too-few-trials`); runs of different workloads are refused.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;
use common::repo;

fn fixture(name: &str) -> PathBuf {
    repo().join("crates/cli/tests/fixtures/import").join(name)
}

fn import(dir: &Path, files: &[PathBuf], extra: &[&str], code: i32) -> (Vec<PathBuf>, String) {
    let out = common::sb(&repo())
        .args(["import", "vllm"])
        .args(files)
        .arg("--results-dir")
        .arg(dir)
        .args(extra)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(code), "{err}");
    let files = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("imported: "))
        .map(PathBuf::from)
        .collect();
    (files, err)
}

fn measured() -> PathBuf {
    std::fs::read_dir(repo().join("crates/cli/tests/fixtures/rerun/results/sim-rerun"))
        .expect("committed sim result")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a result")
}

fn compare(imported: &Path) -> Value {
    let out = common::sb(&repo())
        .arg("compare")
        .arg(imported)
        .arg(measured())
        .args(["--json", "--metric", "output_throughput"])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

const LENGTHS: [&str; 6] = [
    "--input-tokens",
    "32",
    "--output-tokens",
    "16",
    "--variant",
    "fast",
];

#[test]
fn repeated_runs_become_trials_of_one_arm_with_an_interval() {
    let dir = common::scratch("import_trials", "pooled");
    let file = fixture("vllm-repeated.jsonl");
    // Without --as-trials: three one-trial results, each a point without an interval.
    let (singles, _) = import(
        &dir.join("singles"),
        std::slice::from_ref(&file),
        &LENGTHS,
        0,
    );
    assert_eq!(singles.len(), 3);
    let single = compare(&singles[0]);
    let p = &single["comparisons"][0]["metrics"][0]["points"][0];
    assert_eq!(p["n_baseline"], 1);
    assert!(
        p["baseline"]["ci"].is_null(),
        "one trial: no interval: {p:#}"
    );
    assert_eq!(p["verdict"], "not-computed", "{p:#}");

    let mut args = LENGTHS.to_vec();
    args.push("--as-trials");
    let (pooled, _) = import(&dir.join("pooled"), &[file], &args, 0);
    assert_eq!(pooled.len(), 1);
    let r = common::read_json(&pooled[0]);
    let trials = r["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 3);
    let seq: Vec<u64> = trials.iter().filter_map(|t| t["trial"].as_u64()).collect();
    assert_eq!(seq, [1, 2, 3]);
    assert_eq!(r["spec"]["spec"]["trials"]["count"], 3);
    assert!(
        r["run_id"].as_str().is_some_and(|id| id.ends_with("-x3")),
        "{}",
        r["run_id"]
    );
    let notes = r["import"]["notes"].to_string();
    assert!(
        notes.contains("3 runs of the tool pooled as 3 trials"),
        "{notes}"
    );
    assert!(
        notes.contains("trial 3: ") && notes.contains(":3"),
        "{notes}"
    );
    // Against the servebench run: an interval on both arms, and a verdict.
    let c = compare(&pooled[0]);
    let p = &c["comparisons"][0]["metrics"][0]["points"][0];
    assert_eq!(p["n_baseline"], 3);
    assert!(
        p["baseline"]["ci"].is_object() && p["effect"]["ci"].is_object(),
        "three trials a side: intervals: {p:#}"
    );
    assert_ne!(p["verdict"], "not-computed", "{p:#}");
}

#[test]
fn runs_of_different_workloads_are_not_pooled() {
    let dir = common::scratch("import_trials", "refused");
    let (_, err) = import(
        &dir,
        &[
            fixture("vllm-repeated.jsonl"),
            fixture("vllm-append-result.jsonl"),
        ],
        &["--as-trials"],
        2,
    );
    assert!(err.contains("cannot pool this run"), "{err}");
    assert!(err.contains("vllm-append-result.jsonl:1"), "{err}");
    assert!(err.contains("its workload is"), "{err}");
}
