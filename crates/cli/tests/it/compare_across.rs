//! `servebench compare BASELINE_RESULT CANDIDATE_RESULT` end to end: a baseline from another
//! run is always stale-baseline; a run with other workload values is not-comparable with the
//! differing fields listed; an imported result says what it could not check.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use assert_cmd::Command;
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn sb() -> Command {
    Command::cargo_bin("servebench").expect("binary")
}

/// Run `spec` into `dir/results`; the new result file.
fn run(dir: &Path, spec: &Path) -> PathBuf {
    let results = dir.join("results");
    let before = list(&results);
    sb().current_dir(dir)
        .args(["run", "--quiet", "--no-bars", "--results-dir"])
        .arg(&results)
        .arg(spec)
        .assert()
        .code(0);
    let mut new: Vec<PathBuf> = list(&results)
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(new.len(), 1, "{new:?}");
    let path = new.remove(0);
    without_host_probe(&path);
    path
}

/// The run's host probes taken out. These tests are about workload values and the stale
/// baseline; the probe, run while other tests load both cores, can read two runs of one
/// spec as two hosts (its own tests are in compare's `fingerprint` and `host_probe`), and a
/// run without the probe never differs by it.
fn without_host_probe(path: &Path) {
    let text = std::fs::read_to_string(path).expect("result");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    if let Some(o) = v.as_object_mut() {
        o.remove("host_probe");
    }
    for s in v["servers"].as_array_mut().into_iter().flatten() {
        if let Some(o) = s.as_object_mut() {
            o.remove("host_probe");
        }
    }
    std::fs::write(path, serde_json::to_string_pretty(&v).expect("json")).expect("write");
}

fn list(results: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for spec_dir in std::fs::read_dir(results).into_iter().flatten().flatten() {
        for e in std::fs::read_dir(spec_dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out
}

struct Runs {
    dir: PathBuf,
    first: PathBuf,
    second: PathBuf,
    other_workload: PathBuf,
}

/// Two runs of the same spec and one with other `requests` and `seed`, shared by the tests.
fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        // Kept for the tests sharing it (a static is never dropped): under target/tmp.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("tmp")
            .keep();
        let spec = repo().join("crates/cli/tests/specs/compare-across.yaml");
        let text = std::fs::read_to_string(&spec).expect("spec");
        let changed = text
            .replace("    requests: 8\n", "    requests: 10\n")
            .replace("    seed: 1\n", "    seed: 2\n");
        assert_ne!(text, changed);
        let other = dir.join("other.yaml");
        std::fs::write(&other, changed).expect("write spec");
        Runs {
            first: run(&dir, &spec),
            second: run(&dir, &spec),
            other_workload: run(&dir, &other),
            dir,
        }
    })
}

fn compare(args: &[&str], code: i32) -> (Value, String) {
    let out = sb()
        .arg("compare")
        .args(args)
        .arg("--json")
        .assert()
        .code(code);
    let json = serde_json::from_slice(&out.get_output().stdout).expect("json");
    (
        json,
        String::from_utf8_lossy(&out.get_output().stderr).into(),
    )
}

fn flag_ids(c: &Value) -> Vec<String> {
    c["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .flat_map(|m| m["flags"].as_array().cloned().unwrap_or_default())
        .map(|f| f["id"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn a_baseline_from_another_run_is_stale() {
    let r = runs();
    let (j, _) = compare(&[s(&r.first), s(&r.second)], 0);
    let c = &j["comparisons"][0];
    assert_eq!(c["mode"], "across-runs");
    assert_eq!(c["same_run"], false);
    assert_eq!(c["interleaved"], false);
    // By default the baseline variant against the same-named variant of the second run.
    assert_eq!(c["baseline"]["variant"], "base");
    assert_eq!(c["candidate"]["variant"], "base");
    assert_ne!(c["baseline"]["run_id"], c["candidate"]["run_id"]);
    assert!(
        c["fingerprint_differences"]
            .as_array()
            .is_some_and(Vec::is_empty),
        "{}",
        c["fingerprint_differences"]
    );
    let ids = flag_ids(c);
    assert!(ids.iter().any(|i| i == "stale-baseline"), "{ids:?}");
    assert!(!ids.iter().any(|i| i == "not-comparable"), "{ids:?}");

    // Picking the candidate variant; a stale baseline trips --fail-on suspicious.
    let (j, _) = compare(
        &[
            s(&r.first),
            s(&r.second),
            "--candidate-variant",
            "cand",
            "--fail-on",
            "suspicious",
        ],
        1,
    );
    assert_eq!(j["comparisons"][0]["candidate"]["variant"], "cand");
    assert_eq!(j["gate"]["tripped"], true);
    let reasons = j["gate"]["reasons"].to_string();
    assert!(reasons.contains("stale-baseline"), "{reasons}");
}

#[test]
fn other_workload_values_are_not_comparable_and_listed() {
    let r = runs();
    let (j, _) = compare(&[s(&r.first), s(&r.other_workload)], 0);
    let c = &j["comparisons"][0];
    let fields: Vec<&str> = c["fingerprint_differences"]
        .as_array()
        .expect("differences")
        .iter()
        .map(|d| d["field"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(fields, ["workload.requests", "workload.seed"]);
    let d = &c["fingerprint_differences"][0];
    assert_eq!(
        (d["baseline"].as_str(), d["candidate"].as_str()),
        (Some("8"), Some("10"))
    );
    let ids = flag_ids(c);
    assert!(ids.iter().any(|i| i == "not-comparable"), "{ids:?}");
    assert!(ids.iter().any(|i| i == "stale-baseline"), "{ids:?}");

    let out = sb()
        .arg("compare")
        .arg(&r.first)
        .arg(&r.other_workload)
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("NOT COMPARABLE"), "{text}");
    assert!(
        text.contains("workload.seed: baseline `1`, candidate `2`"),
        "{text}"
    );
    assert!(text.contains("[re-baseline] not-comparable"), "{text}");
}

#[test]
fn an_imported_result_says_what_it_could_not_check() {
    let r = runs();
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&r.second).expect("read")).expect("json");
    doc["origin"] = "imported".into();
    if let Some(obj) = doc.as_object_mut() {
        obj.remove("host");
    }
    doc["accelerators"] = Value::Array(Vec::new());
    let imported = r.dir.join("imported.json");
    std::fs::write(&imported, doc.to_string()).expect("write");
    let (j, _) = compare(&[s(&r.first), s(&imported)], 0);
    let c = &j["comparisons"][0];
    assert_eq!(c["candidate"]["origin"], "imported");
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("the candidate result is imported"),
        "{notes}"
    );
    assert!(notes.contains("lacks host"), "{notes}");
    let fields = c["fingerprint_differences"].to_string();
    assert!(!fields.contains("host"), "{fields}");
}

#[test]
fn an_unknown_variant_across_runs_is_a_usage_error() {
    let r = runs();
    sb().arg("compare")
        .arg(&r.first)
        .arg(&r.second)
        .args(["--baseline-variant", "missing"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("variant `missing` is not in"));
}

/// Issue 41, item 3: a NOT COMPARABLE comparison leads with that, and its verdicts are not
/// counted as findings; two runs at different request rates share no point, and `compare`
/// says why nothing was compared and exits 1 (it printed empty tables, "verdicts (0 metric
/// × point): " and exited 0).
#[test]
fn the_most_serious_thing_comes_first() {
    let r = runs();
    let out = sb()
        .arg("compare")
        .arg(&r.first)
        .arg(&r.other_workload)
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].starts_with(
            "NOT COMPARABLE — 2 fingerprint field(s) differ (workload.requests, workload.seed)"
        ),
        "{text}"
    );
    let verdicts = lines
        .iter()
        .position(|l| l.starts_with("verdicts ("))
        .expect("a count");
    assert!(verdicts < 4, "the answer right after: {text}");
    assert!(
        lines[verdicts].contains("not findings: the arms are not comparable"),
        "{text}"
    );

    // Another request rate: no point in both files.
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&r.second).expect("read")).expect("json");
    doc["spec"]["spec"]["workload"]["request_rate"] = 4.0.into();
    for p in doc["points"].as_array_mut().expect("points") {
        let label = p["label"]
            .as_str()
            .expect("label")
            .replace("rate=inf", "rate=4");
        p["label"] = label.into();
        p["request_rate"] = 4.0.into();
    }
    let other_rate = r.dir.join("other-rate.json");
    std::fs::write(&other_rate, doc.to_string()).expect("write");
    let out = sb()
        .arg("compare")
        .arg(&r.first)
        .arg(&other_rate)
        .assert()
        .code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let second = text.lines().nth(1).unwrap_or("");
    assert!(
        second.starts_with("NOTHING COMPARED — no sweep point is in both files — the workloads differ in workload.request_rate"),
        "{text}"
    );
    assert!(!text.contains("verdicts (0 metric × point)"), "{text}");
}
