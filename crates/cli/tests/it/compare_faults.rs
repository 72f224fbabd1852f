//! Failed requests and failed trials are data for `servebench compare`: they raise
//! invalid-trial flags, stay in the error rate's denominator, and a point without values says
//! why instead of vanishing.

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

fn sb() -> Command {
    Command::cargo_bin("servebench").expect("binary")
}

fn metric<'a>(c: &'a Value, name: &str) -> &'a Value {
    c["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|m| m["metric"] == name)
        .expect("metric")
}

fn evidence_of(m: &Value, id: &str) -> Vec<String> {
    m["flags"]
        .as_array()
        .expect("flags")
        .iter()
        .filter(|f| f["id"] == id)
        .map(|f| f["evidence"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn failed_requests_and_failed_trials_become_flags() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/specs/compare-faults.yaml"
    ));
    // The run fails (the "dies" trials), but keeps everything it measured.
    sb().current_dir(dir.path())
        .args(["run", "--quiet", "--no-bars", "--results-dir", "results"])
        .arg(&spec)
        .assert()
        .code(1);
    let folder = dir.path().join("results/compare-faults");
    let result = std::fs::read_dir(&folder)
        .expect("results")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a result file");
    let out = sb()
        .arg("compare")
        .arg(&result)
        .arg("--json")
        .assert()
        .code(0);
    let r: Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    let comps = r["comparisons"].as_array().expect("comparisons");

    // flaky: half its requests fail; its error rate regressed and each trial is flagged.
    let flaky = &comps[0];
    assert_eq!(flaky["candidate"]["variant"], "flaky");
    let err = metric(flaky, "error_rate");
    assert_eq!(err["scale"], "arithmetic");
    let p = &err["points"][0];
    assert_eq!(p["verdict"], "regressed", "{p}");
    assert!(p["candidate"]["point"].as_f64().expect("mean") > 0.2, "{p}");
    assert_eq!(p["baseline"]["point"], 0.0);
    let invalid = evidence_of(metric(flaky, "output_throughput"), "invalid-trial");
    assert!(
        invalid.iter().any(|e| e.contains("failed request(s)")),
        "{invalid:?}"
    );

    // dies: every trial failed; no comparison, but the baseline's own mean and the reason.
    let dies = &comps[1];
    assert_eq!(dies["candidate"]["variant"], "dies");
    let tp = metric(dies, "output_throughput");
    let p = &tp["points"][0];
    assert_eq!(p["verdict"], "not-computed");
    assert_eq!(p["n_candidate"], 0);
    assert_eq!(p["failed_trials_candidate"], 5);
    assert!(p["baseline"]["point"].as_f64().is_some(), "{p}");
    assert!(p["error"].as_str().is_some_and(|e| !e.is_empty()), "{p}");
    let invalid = evidence_of(tp, "invalid-trial");
    assert!(
        invalid.iter().any(|e| e.contains("the trial failed")),
        "{invalid:?}"
    );
    let too_few = evidence_of(tp, "too-few-trials");
    assert!(!too_few.is_empty());
    // A CI gate on suspicious measurements trips.
    sb().arg("compare")
        .arg(&result)
        .args(["--fail-on", "suspicious"])
        .assert()
        .code(1);
}
