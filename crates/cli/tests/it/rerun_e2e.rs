//! `servebench rerun RESULT` end to end on a committed simulator result
//! (`fixtures/rerun/results/sim-rerun/`, made by a real `servebench run` of
//! `fixtures/rerun/sim-rerun.yaml`): an honest re-run reproduces every published value and
//! A/B claim; a published value edited by ×1.5 is not reproduced, with the evidence; overrides
//! that would change the workload, a "re-run" with another spec hash and an imported result
//! are refused with a message that says what to do.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common;
use common::repo;

fn sb() -> Command {
    common::sb(&repo())
}

fn published() -> PathBuf {
    let dir = repo().join("crates/cli/tests/fixtures/rerun/results/sim-rerun");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("committed fixture folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p.to_string_lossy().ends_with(".requests.json")
        })
        .collect();
    assert_eq!(files.len(), 1, "one committed result expected: {files:?}");
    files.remove(0)
}

fn scratch(name: &str) -> PathBuf {
    common::scratch("rerun_e2e", name)
}

/// `rerun FILE --json`: exit code and the parsed report. One re-run at a time: the
/// published values are judged against what this machine measures, and two simulator runs
/// side by side on 2 cores would slow each other.
fn rerun_json(file: &Path, dir: &Path, extra: &[&str]) -> (i32, Value) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = sb()
        .current_dir(repo())
        .arg("rerun")
        .arg(file)
        .args(["--quiet", "--json", "--results-dir"])
        .arg(dir.join("results"))
        .args(extra)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

fn row<'a>(report: &'a Value, variant: &str, metric: &str) -> &'a Value {
    report["values"]
        .as_array()
        .expect("values")
        .iter()
        .find(|r| r["variant"] == variant && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {variant} {metric}: {report:#}"))
}

fn flag_ids(report: &Value) -> Vec<String> {
    report["flags"]
        .as_array()
        .expect("flags")
        .iter()
        .map(|f| f["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn the_committed_result_reruns_and_reproduces() {
    let dir = scratch("honest");
    let file = published();
    let (code, report) = rerun_json(&file, &dir, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["format"], "servebench-rerun/2");
    let values = report["values"].as_array().expect("values");
    assert_eq!(
        values.len(),
        4,
        "2 variants × 1 point × 2 metrics: {report:#}"
    );
    for r in values {
        assert_eq!(r["outcome"], "reproduced", "{r:#}");
        let c = &r["change"]["ci"];
        let (lo, hi) = (
            c["lower"].as_f64().expect("lo"),
            c["upper"].as_f64().expect("hi"),
        );
        assert!(lo > 1.0 / 1.25 && hi < 1.25, "CI inside ±25%: {r:#}");
    }
    let claims = report["claims"].as_array().expect("claims");
    assert_eq!(claims.len(), 2, "slow vs fast, both metrics: {report:#}");
    for c in claims {
        assert_eq!(c["published_verdict"], "regressed", "{c:#}");
        assert_eq!(c["outcome"], "reproduced", "{c:#}");
    }
    // A re-run is another session by design: stale-baseline is its premise, not a flag.
    assert!(
        !flag_ids(&report).contains(&"stale-baseline".to_owned()),
        "{report:#}"
    );
    // The re-run used the spec stored in the result: same hash.
    let new: Value = serde_json::from_str(
        &std::fs::read_to_string(report["new_file"].as_str().expect("new file")).expect("read"),
    )
    .expect("json");
    let old: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("json");
    assert_eq!(new["spec_hash"], old["spec_hash"]);
    assert_ne!(new["run_id"], old["run_id"]);
}

/// The published file with `output_throughput` of every `fast` trial multiplied by `factor`.
fn edited(dir: &Path, factor: f64) -> PathBuf {
    let file = published();
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("json");
    let mut edited = 0;
    for t in doc["trials"].as_array_mut().expect("trials") {
        if t["variant"] == "fast" {
            let v = &mut t["summary"]["all"]["output_throughput"];
            let x = v.as_f64().expect("a value");
            *v = Value::from(x * factor);
            edited += 1;
        }
    }
    assert_eq!(edited, 3);
    let out = dir.join(file.file_name().expect("name"));
    std::fs::write(&out, serde_json::to_string_pretty(&doc).expect("json")).expect("write");
    out
}

#[test]
fn an_edited_published_value_is_not_reproduced_with_the_evidence() {
    let dir = scratch("edited");
    let file = edited(&dir, 1.5);
    let (code, report) = rerun_json(&file, &dir, &[]);
    assert_eq!(code, 1, "a value not reproduced exits 1: {report:#}");
    let r = row(&report, "fast", "output_throughput");
    assert_eq!(r["outcome"], "not-reproduced", "{r:#}");
    let change = &r["change"];
    let point = change["point"].as_f64().expect("ratio");
    // ≈ 1/1.5 = 0.67, with room for this machine's drift since the fixture was measured.
    assert!((0.5..0.8).contains(&point), "new/published ≈ 1/1.5: {r:#}");
    assert!(
        change["ci"]["upper"].as_f64().expect("upper") < 1.0 / 1.25,
        "the whole CI beyond −θ: {r:#}"
    );
    // The values not edited still reproduce.
    assert_eq!(row(&report, "fast", "tpot_p50")["outcome"], "reproduced");
    assert_eq!(
        row(&report, "slow", "output_throughput")["outcome"],
        "reproduced"
    );
    assert_eq!(report["summary"]["not_reproduced"], 1, "{report:#}");

    // The same judgement as text, from the re-run just measured (no second run).
    let new_file = report["new_file"].as_str().expect("new file").to_owned();
    let out = sb()
        .current_dir(repo())
        .arg("rerun")
        .arg(&file)
        .args(["--with", &new_file])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        // A row of the values table (the levels' lines, first, name arms too).
        .find(|l| l.trim_start().starts_with("fast") && l.contains("output_throughput"))
        .unwrap_or_else(|| panic!("no fast output_throughput line:\n{text}"));
    assert!(line.contains("not reproduced"), "{line}");
    assert!(!text.contains("stale-baseline"), "{text}");
    assert!(text.contains("1 not reproduced"), "{text}");
}

#[test]
fn workload_changing_overrides_and_foreign_results_are_refused() {
    let dir = scratch("refused");
    let file = published();
    let out = sb()
        .current_dir(repo())
        .arg("rerun")
        .arg(&file)
        .args(["--set", "server.command=python3", "--quiet"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("server.working_dir") && err.contains("target.base_url"),
        "the message lists what may be overridden: {err}"
    );

    // A result with another spec hash is not a re-run of this one.
    let imported = dir.join("imported");
    sb().current_dir(repo())
        .args(["import", "vllm"])
        .arg(repo().join("crates/cli/tests/fixtures/import/vllm-bench-serve.json"))
        .arg("--results-dir")
        .arg(&imported)
        .assert()
        .code(0);
    let imported_file = std::fs::read_dir(imported.join("vllm-sim-model"))
        .expect("imported folder")
        .flatten()
        .map(|e| e.path())
        .next()
        .expect("one imported result");
    let out = sb()
        .current_dir(repo())
        .arg("rerun")
        .arg(&file)
        .arg("--with")
        .arg(&imported_file)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a re-run"));

    // An imported result has no servebench spec to run.
    let out = sb()
        .current_dir(repo())
        .arg("rerun")
        .arg(&imported_file)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("imported from vllm") && err.contains("servebench compare"),
        "{err}"
    );
}

/// Issue 41, item 8: the `${env.…}` values a spec read are recorded (a secret's name only);
/// `rerun` falls back to the recorded value when this environment does not set it (it
/// refused: "`SB_T41_SCALE` … not set"), and names a value that differs.
#[test]
fn env_values_are_recorded_and_replayed() {
    let dir = scratch("env");
    let spec = common::write_spec(
        &dir,
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: env-replay}
spec:
  server:
    command: ["${servebench}", sim]
    args: [--port, "${port}", --zero-delay, --step-scale, "${env.SB_T41_SCALE}"]
    env: {SB_T41_API_TOKEN: "${env.SB_T41_API_TOKEN}"}
    readiness: {http: {path: /health}, interval: 50ms, timeout: 30s}
  target: {model: sim-model, tokenizer: server}
  variants: [{name: a, baseline: true}]
  workload:
    dataset: {kind: random, input_tokens: 8, output_tokens: 4}
    requests: 4
  sweep: {max_concurrency: [1]}
  trials: {count: 1}
"#,
    );
    let results = dir.join("results");
    sb().current_dir(&dir)
        .env("SB_T41_SCALE", "1")
        .env("SB_T41_API_TOKEN", "t41-very-secret")
        .args(["run", "-q", "--results-dir"])
        .arg(&results)
        .arg(&spec)
        .assert()
        .success();
    let file = common::result_file(&dir);
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(
        !text.contains("t41-very-secret"),
        "a secret's value is never recorded"
    );
    let doc: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        doc["provenance"]["env"],
        serde_json::json!({"SB_T41_SCALE": "1", "SB_T41_API_TOKEN": "***"}),
        "{:#}",
        doc["provenance"]
    );
    let rerun = |scale: Option<&str>| {
        let mut c = sb();
        c.current_dir(&dir)
            .env_remove("SB_T41_SCALE")
            .env("SB_T41_API_TOKEN", "t41-very-secret");
        if let Some(s) = scale {
            c.env("SB_T41_SCALE", s);
        }
        let out = c
            .args(["rerun", "--quiet", "--json", "--results-dir"])
            .arg(&results)
            .arg(&file)
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}); stderr:\n{err}"));
        (out.status.code(), report, err)
    };
    // Unset here: the recorded value is used, and said.
    let (code, report, err) = rerun(None);
    assert_ne!(code, Some(2), "{err}");
    assert!(
        err.contains("`SB_T41_SCALE` is not set here: the published run's value `1` is used"),
        "{err}"
    );
    assert!(report.get("environment").is_none(), "{report:#}");
    // Set to another value: that one is used, and named.
    let (_, report, err) = rerun(Some("1.5"));
    assert!(
        err.contains("`SB_T41_SCALE` is `1.5` here and was `1` in the published run"),
        "{err}"
    );
    let env = report["environment"].to_string();
    assert!(
        env.contains("SB_T41_SCALE") && env.contains("`1`") && env.contains("`1.5`"),
        "{report:#}"
    );
}
