//! `plan --set` and `validate --set` take `run`'s overrides, and `plan` estimates how long a
//! run will take: from the workload where it fixes it, and from the spec's last result.

use serde_json::Value;

use crate::common;
use common::{read_json, repo, result_file, sb, write_spec};

fn tiny_spec() -> String {
    std::fs::read_to_string(repo().join("crates/cli/tests/specs/tiny-ab.yaml")).expect("tiny spec")
}

fn plan_json(dir: &std::path::Path, spec: &std::path::Path, extra: &[&str]) -> Value {
    let out = sb(dir)
        .args(["plan", "--json"])
        .args(extra)
        .arg(spec)
        .assert()
        .code(0);
    serde_json::from_slice(&out.get_output().stdout).expect("plan json")
}

fn secs(a: &str, b: &str) -> f64 {
    use time::OffsetDateTime;
    use time::format_description::well_known::Rfc3339;
    let p = |s: &str| OffsetDateTime::parse(s, &Rfc3339).expect("rfc3339");
    (p(b) - p(a)).as_seconds_f64()
}

#[test]
fn plan_and_validate_take_runs_overrides() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = write_spec(dir.path(), &tiny_spec());
    // 2 variants × 1 trial × 1 point; the hash is the one `run` would record.
    let p = plan_json(
        dir.path(),
        &spec,
        &["--requests", "5", "-c", "2", "--trials", "1"],
    );
    assert_eq!(p["trial_count"], 2);
    assert_eq!(p["points"].as_array().map(Vec::len), Some(1));
    let written = tiny_spec()
        .replace("requests: 8", "requests: 5")
        .replace("{max_concurrency: [1, 4]}", "{max_concurrency: [2]}")
        .replace("{count: 2}", "{count: 1}");
    let same = tempfile::tempdir().expect("tmp");
    let file = write_spec(same.path(), &written);
    assert_eq!(
        p["spec_hash"],
        plan_json(same.path(), &file, &[])["spec_hash"]
    );
    // validate checks the spec with the overrides, locating a bad one by its --set.
    sb(dir.path())
        .args(["validate", "--set", "workload.requests=5"])
        .arg(&spec)
        .assert()
        .code(0);
    let out = sb(dir.path())
        .args(["validate", "--set", "workload.requests=lots"])
        .arg(&spec)
        .assert()
        .code(1);
    let e = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(e.contains("set by `--set workload.requests=lots`"), "{e}");
    let out = sb(dir.path())
        .args(["plan", "--set", "workload.reqests=5"])
        .arg(&spec)
        .assert()
        .code(2);
    let e = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(e.contains("did you mean `requests`?"), "{e}");
}

#[test]
fn plan_estimates_from_the_last_result_and_scales_by_requests() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = write_spec(dir.path(), &tiny_spec());
    let before = plan_json(dir.path(), &spec, &["--trials", "1"]);
    assert!(
        before["estimate"].get("last_result").is_none(),
        "no result yet: {}",
        before["estimate"]
    );
    assert_eq!(before["estimate"]["workload"]["trials_unknown"], 4);
    sb(dir.path())
        .args(["run", "--quiet", "--trials", "1"])
        .arg(&spec)
        .assert()
        .code(0);
    let r = read_json(&result_file(dir.path()));
    // The run's wall time: first server start to the last trial's end.
    let start = r["servers"][0]["started_at"].as_str().expect("a start");
    let trials = r["trials"].as_array().expect("trials");
    let end = trials
        .iter()
        .filter_map(|t| t["ended_at"].as_str())
        .max()
        .expect("an end");
    let wall = secs(start, end);
    // The same plan at the last run's pace takes what the run took.
    let e = &plan_json(dir.path(), &spec, &["--trials", "1"])["estimate"]["last_result"];
    assert_eq!(e["same_spec"], true);
    assert_eq!(e["cells_matched"], 4);
    let total = e["total_s"].as_f64().expect("total");
    assert!(
        (total - wall).abs() < 1e-3,
        "estimate {total} s, run {wall} s"
    );
    // Twice the requests: twice the trials' time, the same per block.
    let doubled = &plan_json(dir.path(), &spec, &["--trials", "1", "--requests", "16"])["estimate"]
        ["last_result"];
    assert_eq!(doubled["same_spec"], false);
    let (t1, t2) = (
        e["trials_s"].as_f64().expect("trials"),
        doubled["trials_s"].as_f64().expect("trials"),
    );
    assert!((t2 - 2.0 * t1).abs() < 1e-6 * t1.max(1.0), "{t1} → {t2}");
    assert_eq!(doubled["per_block_s"], e["per_block_s"]);
    // A point the last run did not measure is estimated from its seconds per request.
    let wider =
        &plan_json(dir.path(), &spec, &["--trials", "1", "-c", "1,4,8"])["estimate"]["last_result"];
    assert_eq!(wider["cells_from_rate"], 2);
    // The text says where the figure came from.
    let out = sb(dir.path())
        .args(["plan", "--trials", "1"])
        .arg(&spec)
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("estimated duration:"), "{text}");
    assert!(
        text.contains("from the last run (results/tiny-ab/"),
        "{text}"
    );
}
