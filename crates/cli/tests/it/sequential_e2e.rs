//! Sequential trials (`trials.until_decided`) end to end on the simulator
//! (`crates/cli/tests/specs/sequential.yaml`: a baseline, an identical twin, a variant 40%
//! faster; first stage 3, budget 10). What is asserted does not depend on chance: every
//! round holds exactly the cells the look before it left open (and the baseline wherever a
//! candidate needs it), looks follow one another, a cell stops once, `compare` reads each
//! cell at its stopping look, and a run killed mid-round and resumed continues the same
//! sequence. Which round the twin stops in is random, and is not asserted.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{read_json, repo, sb, scratch, walk};
use serde_json::Value;

fn spec() -> PathBuf {
    repo().join("crates/cli/tests/specs/sequential.yaml")
}

/// Cells (variant, point) measured with repetition index `t`.
fn measured_at(result: &Value, t: u64) -> BTreeSet<(String, u64)> {
    result["trials"]
        .as_array()
        .expect("trials")
        .iter()
        .filter(|x| x["trial"].as_u64() == Some(t))
        .map(|x| {
            (
                x["variant"].as_str().unwrap_or_default().to_owned(),
                x["point"].as_u64().unwrap_or(u64::MAX),
            )
        })
        .collect()
}

/// The rounds a complete sequential result must show (module docs), checked against its
/// looks; returns the number of rounds.
fn check_sequence(result: &Value) -> u64 {
    assert_eq!(result["status"], "complete", "{}", result["error"]);
    let looks = result["looks"].as_array().expect("looks recorded");
    let (count, max) = (3, 10);
    for (k, l) in looks.iter().enumerate() {
        assert_eq!(
            l["after_trial"].as_u64(),
            Some(count + k as u64),
            "looks in order"
        );
    }
    let mut stopped: BTreeSet<(String, u64)> = BTreeSet::new();
    let mut open: BTreeSet<(String, u64)> = ["twin", "fast"]
        .iter()
        .flat_map(|v| [0, 1].map(|p| ((*v).to_owned(), p)))
        .collect();
    for (k, l) in looks.iter().enumerate() {
        let t = count + k as u64;
        if k > 0 {
            // Round t held exactly the cells open after the previous look, and the baseline
            // at each of their points.
            let points: BTreeSet<u64> = open.iter().map(|(_, p)| *p).collect();
            let mut expected = open.clone();
            expected.extend(points.iter().map(|p| ("base".to_owned(), *p)));
            assert_eq!(measured_at(result, t), expected, "round t={t}");
        }
        for c in l["cells"].as_array().expect("cells") {
            let cell = (
                c["variant"].as_str().unwrap_or_default().to_owned(),
                c["point"].as_u64().unwrap_or(u64::MAX),
            );
            assert!(
                open.contains(&cell),
                "look t={t} examined a closed cell {cell:?}"
            );
            assert!(c["z_boundary"].as_f64().is_some_and(|z| z > 1.9), "{c}");
            if !c["stopped"].is_null() {
                assert!(stopped.insert(cell.clone()), "{cell:?} stopped twice");
                open.remove(&cell);
            }
        }
    }
    let rounds = looks.len() as u64 - 1;
    // No trial after the last look, and nothing beyond the budget.
    assert!(measured_at(result, count + rounds + 1).is_empty());
    assert!(count + rounds <= max);
    assert!(
        open.is_empty() || count + rounds == max,
        "cells left open before the budget: {open:?}"
    );
    // The 40% faster variant is decided at its first look.
    for p in [0, 1] {
        assert!(stopped.contains(&("fast".to_owned(), p)), "fast at [{p}]");
    }
    let seqs: Vec<u64> = result["trials"]
        .as_array()
        .expect("trials")
        .iter()
        .filter_map(|t| t["seq"].as_u64())
        .collect();
    let unique: BTreeSet<u64> = seqs.iter().copied().collect();
    assert_eq!(unique.len(), seqs.len(), "a trial measured twice");
    assert_eq!(unique.iter().max().map(|m| m + 1), Some(seqs.len() as u64));
    rounds
}

fn only_result(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = walk(&dir.join("results"))
        .into_iter()
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("")
                    .starts_with('.')
        })
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

#[test]
fn rounds_hold_only_the_undecided_cells_and_compare_reads_each_at_its_stop() {
    let dir = scratch("sequential_e2e", "full");
    let out = sb(&dir)
        .args(["run", "--no-bars", "--results-dir"])
        .arg(dir.join("results"))
        .arg(spec())
        .assert()
        .code(0);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("look after t=3:"), "{stderr}");
    let path = only_result(&dir);
    let result = read_json(&path);
    let rounds = check_sequence(&result);
    if rounds > 0 {
        assert!(stderr.contains("round t=4:"), "{stderr}");
        assert!(stderr.contains("still undecided: twin"), "{stderr}");
    }
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("sequential trials (first stage 3, budget 10 per cell)"),
        "{stdout}"
    );

    let out = sb(&dir)
        .args(["compare", "--json"])
        .arg(&path)
        .assert()
        .code(0);
    let report: Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    for c in report["comparisons"].as_array().expect("comparisons") {
        let variant = c["candidate"]["variant"].as_str().unwrap_or_default();
        assert!(
            c["notes"].as_array().is_some_and(|n| n
                .iter()
                .any(|n| n.as_str().unwrap_or("").contains("sequential run"))),
            "{c}"
        );
        for m in c["metrics"].as_array().expect("metrics") {
            for p in m["points"].as_array().expect("points") {
                let s = &p["sequential"];
                let t = s["after_trial"].as_u64().expect("a stop look");
                // The cell is read on the trials up to its stop: both arms have t of them.
                assert_eq!(p["n_baseline"].as_u64(), Some(t), "{variant} {p}");
                assert_eq!(p["n_candidate"].as_u64(), Some(t), "{variant} {p}");
                if variant == "fast" && m["metric"] == "output_throughput" {
                    assert_eq!(p["verdict"], "improved", "{p}");
                    assert_eq!(s["stopped"], "decided");
                }
                if variant == "twin" {
                    assert!(
                        !matches!(p["verdict"].as_str(), Some("improved" | "regressed")),
                        "an identical twin: {p}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_run_killed_mid_round_resumes_the_same_sequence() {
    let dir = scratch("sequential_e2e", "killed");
    let bin = assert_cmd::cargo::cargo_bin("servebench");
    let mut child = std::process::Command::new(&bin)
        .args(["run", "--quiet", "--no-bars", "--results-dir"])
        .arg(dir.join("results"))
        .arg(spec())
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn run");
    // Wait for the first look and the first trial of round 4 on disk, then kill.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut killed_mid_round = false;
    let path = loop {
        assert!(Instant::now() < deadline, "no round began in 120 s");
        std::thread::sleep(Duration::from_millis(5));
        let Some(p) = walk(&dir.join("results")).into_iter().find(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("")
                    .starts_with('.')
        }) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&std::fs::read_to_string(&p).unwrap_or_default())
        else {
            continue;
        };
        if !measured_at(&v, 4).is_empty() {
            killed_mid_round = true;
            break p;
        }
        if v["status"] == "complete" {
            // Every cell stopped at the first look: nothing to resume.
            break p;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let before = read_json(&path);
    let kept = before["trials"].as_array().map_or(0, Vec::len);
    if before["status"] != "complete" {
        sb(&dir)
            .args(["run", "--quiet", "--no-bars", "--resume"])
            .arg(&path)
            .assert()
            .code(0);
    }
    let after = read_json(&path);
    check_sequence(&after);
    // The looks and trials recorded before the kill are unchanged.
    assert_eq!(
        after["trials"].as_array().expect("t")[..kept],
        before["trials"].as_array().expect("t")[..kept]
    );
    let looks_before = before["looks"].as_array().map_or(0, Vec::len);
    assert_eq!(
        after["looks"].as_array().expect("looks")[..looks_before],
        before["looks"].as_array().expect("looks")[..looks_before]
    );
    if killed_mid_round {
        assert!(looks_before >= 1);
    }
}

#[test]
fn bad_sequential_specs_are_refused_before_anything_runs() {
    let dir = scratch("sequential_e2e", "refused");
    let text = std::fs::read_to_string(spec()).expect("spec");
    for (edit, needle) in [
        ("max: 10,", "max: 2,"),
        ("metrics: [output_throughput]}", "metrics: [ttft_p50]}"),
        ("count: 3\n", "count: 3\n    server_restart: once\n"),
        ("count: 3\n", "count: 3\n    order: blocked\n"),
    ]
    .map(|(from, to)| (text.replace(from, to), to))
    {
        assert_ne!(edit, text, "{needle}");
        let p = dir.join("bad.yaml");
        std::fs::write(&p, &edit).expect("write");
        let out = sb(&dir).arg("validate").arg(&p).assert().code(1);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(stderr.contains("bad.yaml:"), "located: {stderr}");
        assert!(stderr.contains("hint:"), "says what to write: {stderr}");
        let out = sb(&dir)
            .args(["run", "--quiet", "--results-dir"])
            .arg(dir.join("results"))
            .arg(&p)
            .assert()
            .code(1);
        assert!(!out.get_output().stderr.is_empty());
        assert!(
            walk(&dir.join("results")).is_empty(),
            "nothing ran for {needle}"
        );
    }
}
