//! `servebench run --set KEY=VALUE` and its short forms end to end against the embedded
//! simulator: the result stores the resolved spec, the overrides and the resolved spec's
//! hash; `--resume` re-applies the stored overrides and refuses new ones; bad keys, values
//! and specs are refused before anything runs; `-q` prints errors and the table only.

use serde_json::Value;

use crate::common;
use common::{read_json, repo, result_file, sb, write_spec};

fn tiny_spec() -> String {
    std::fs::read_to_string(repo().join("crates/cli/tests/specs/tiny-ab.yaml")).expect("tiny spec")
}

/// The plan's hash of a spec text.
fn planned_hash(dir: &std::path::Path, text: &str) -> Value {
    let sub = dir.join("planned");
    std::fs::create_dir_all(&sub).expect("dir");
    let spec = write_spec(&sub, text);
    let out = sb(&sub)
        .args(["plan", "--json"])
        .arg(&spec)
        .assert()
        .code(0);
    let plan: Value = serde_json::from_slice(&out.get_output().stdout).expect("plan json");
    plan["spec_hash"].clone()
}

#[test]
fn overrides_are_run_stored_hashed_and_resumed() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = write_spec(dir.path(), &tiny_spec());
    sb(dir.path())
        .args(["run", "--quiet", "--set", "workload.requests=5"])
        .args(["-c", "2", "--trials", "1"])
        .arg(&spec)
        .assert()
        .code(0);
    let path = result_file(dir.path());
    let r = read_json(&path);
    assert_eq!(r["status"], "complete");
    assert_eq!(
        r["overrides"],
        serde_json::json!([
            "workload.requests=5",
            "sweep.max_concurrency=[2]",
            "trials.count=1"
        ])
    );
    assert_eq!(r["spec"]["spec"]["workload"]["requests"], 5);
    assert_eq!(
        r["spec"]["spec"]["sweep"]["max_concurrency"],
        serde_json::json!([2])
    );
    // 2 variants × 1 trial × 1 point, 5 requests each.
    let trials = r["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 2);
    // The hash is the one of the spec file written with these values.
    let written = tiny_spec()
        .replace("requests: 8", "requests: 5")
        .replace("{max_concurrency: [1, 4]}", "{max_concurrency: [2]}")
        .replace("{count: 2}", "{count: 1}");
    assert_eq!(r["spec_hash"], planned_hash(dir.path(), &written));
    assert_ne!(r["spec_hash"], planned_hash(dir.path(), &tiny_spec()));

    // `--resume` re-applies the stored overrides: the hash still matches.
    sb(dir.path())
        .args(["run", "--quiet", "--resume"])
        .arg(&path)
        .assert()
        .code(0);
    // …and takes no new ones.
    let out = sb(dir.path())
        .args(["run", "--resume"])
        .arg(&path)
        .args(["--requests", "9"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("takes no `--set`") && stderr.contains("start a new run"),
        "{stderr}"
    );
}

#[test]
fn bad_overrides_are_refused_before_the_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = write_spec(dir.path(), &tiny_spec());
    let run = |args: &[&str], code: i32| -> String {
        let out = sb(dir.path())
            .arg("run")
            .args(args)
            .arg(&spec)
            .assert()
            .code(code);
        String::from_utf8_lossy(&out.get_output().stderr).to_string()
    };
    // An unknown key: the keys at that level.
    let e = run(&["--set", "workload.reqests=5"], 2);
    assert!(e.contains("no key `reqests` in `spec.workload`"), "{e}");
    assert!(e.contains("did you mean `requests`?"), "{e}");
    assert!(e.contains("warmup_requests"), "{e}");
    // A value of the wrong type: validate's message, naming the --set.
    let e = run(&["--set", "workload.requests=lots"], 1);
    assert!(e.contains("must be a whole number"), "{e}");
    assert!(e.contains("set by `--set workload.requests=lots`"), "{e}");
    // A spec made invalid.
    let e = run(&["--set", "variants.base.baseline=false"], 1);
    assert!(e.contains("no variant is the baseline"), "{e}");
    // Not KEY=VALUE.
    let e = run(&["--set", "workload.requests"], 2);
    assert!(e.contains("needs KEY=VALUE"), "{e}");
    // Nothing ran.
    assert!(!dir.path().join("results").exists());
}

#[test]
fn a_plain_load_run_says_so_once_and_quiet_is_quiet() {
    let dir = tempfile::tempdir().expect("tmp");
    let one = tiny_spec().replace(
        "    - name: cand\n      server: {args: [--label, cand, --decode-base-ms, \"1.5\", --decode-per-seq-ms, \"0.3\"]}\n      vars: {label: cand}\n",
        "",
    );
    assert!(!one.contains("cand"), "the spec keeps one variant");
    let spec = write_spec(dir.path(), &one);
    let out = sb(dir.path())
        .args([
            "run",
            "--no-bars",
            "--trials",
            "1",
            "-c",
            "64",
            "--requests",
            "1000",
        ])
        .arg(&spec)
        .assert()
        .code(0);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    // 1,000 measured and 1 warm-up prompt: their preparation is announced and timed.
    assert!(stderr.contains("preparing 1001 prompts"), "{stderr}");
    assert!(stderr.contains("prepared 1001 prompts in"), "{stderr}");
    assert_eq!(
        stderr.matches("plain load measurement").count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("warning:"), "{stderr}");
    let out = sb(dir.path())
        .args([
            "run",
            "-q",
            "--trials",
            "1",
            "-c",
            "64",
            "--requests",
            "1000",
        ])
        .arg(&spec)
        .assert()
        .code(0);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.trim().is_empty(), "-q printed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    // One variant: bench_serving's summary is the table.
    assert!(
        stdout.contains("output token throughput (tok/s)") && stdout.contains("TTFT (ms)"),
        "{stdout}"
    );
}

/// Issue 51: with `trials.design: optimize` the command line's overrides reach the plan
/// and its hash (they were dropped when the design set `trials.count`): `-c 1
/// --requests 3` plans one point of 3 requests, and the hash differs from the file's.
#[test]
fn overrides_reach_an_optimized_design() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = tiny_spec().replace(
        "trials: {count: 2}",
        "trials:\n    design: optimize\n    optimize: {sd_between: 0.02, sd_within: 0.02, \
         start_seconds: 5, trial_seconds: 1}",
    );
    let spec = write_spec(dir.path(), &text);
    let plan = |extra: &[&str]| -> Value {
        let out = sb(dir.path())
            .args(["plan", "--json"])
            .args(extra)
            .arg(&spec)
            .assert()
            .code(0);
        serde_json::from_slice(&out.get_output().stdout).expect("plan json")
    };
    let file = plan(&[]);
    let set = plan(&["-c", "1", "--requests", "3"]);
    assert_eq!(file["points"].as_array().map(Vec::len), Some(2), "{file}");
    assert_eq!(set["points"].as_array().map(Vec::len), Some(1), "{set}");
    assert_ne!(file["spec_hash"], set["spec_hash"]);
    assert!(set.to_string().contains("\"requests\":3"), "{set}");
}
