//! `servebench import sglang|vllm FILE` end to end on fixtures written from each tool's
//! documented fields (docs/import.md): the results validate against the committed schema,
//! lengths, rates and Python's `Infinity` / `NaN` are read as the tool meant them, per-request
//! arrays are recomputed with servebench's definitions, and `compare` and `report` accept the
//! result against a servebench run, raising stale-baseline, not-comparable and
//! too-few-trials.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common;
use common::repo;

fn fixture(name: &str) -> PathBuf {
    repo().join("crates/cli/tests/fixtures/import").join(name)
}

fn sb() -> Command {
    common::sb(&repo())
}

fn scratch(name: &str) -> PathBuf {
    common::scratch("import_e2e", name)
}

/// Import; the result files written, in line order.
fn import(tool: &str, file: &Path, dir: &Path, extra: &[&str]) -> Vec<PathBuf> {
    let out = sb()
        .args(["import", tool])
        .arg(file)
        .arg("--results-dir")
        .arg(dir)
        .args(extra)
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("imported: "))
        .map(PathBuf::from)
        .collect()
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json")
}

fn assert_valid(doc: &Value) {
    let schema: Value = read(&repo().join("schemas/result.schema.json"));
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

fn notes(doc: &Value) -> String {
    doc["import"]["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .map(|n| n.as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn sglang_lines_become_valid_single_trial_results() {
    let dir = scratch("sglang");
    let files = import(
        "sglang",
        &fixture("sglang-bench-serving.jsonl"),
        &dir,
        &["--model", "sim-model"],
    );
    assert_eq!(files.len(), 2, "one result per line: {files:?}");
    let first = read(&files[0]);
    assert_valid(&first);
    assert_eq!(first["origin"], "imported");
    assert_eq!(first["trials"].as_array().expect("trials").len(), 1);
    assert_eq!(first["spec"]["spec"]["trials"]["count"], 1);
    // `Infinity` request rate, range ratio 0.5 of 128/16.
    assert_eq!(first["spec"]["spec"]["workload"]["request_rate"], "inf");
    assert_eq!(
        first["points"][0]["label"],
        "c=4 rate=inf in=64..128 out=8..16"
    );
    assert!(
        notes(&first).contains("random_range_ratio 0.5"),
        "{first:#}"
    );
    assert!(
        notes(&first).contains("[DONE]"),
        "the E2E definition difference is said"
    );
    let s = &first["trials"][0]["summary"];
    assert_eq!(s["all"]["output_throughput"], 230.89);
    assert_eq!(s["reported"]["ttft_p50"], 19.8);
    assert_eq!(
        s["reported"]["mean_concurrency"],
        Value::Null,
        "kept in the window"
    );
    assert_eq!(s["all"]["mean_concurrency"], 3.96);

    // Line 2 kept per-request arrays: metrics recomputed, the failure counted.
    let second = read(&files[1]);
    assert_valid(&second);
    let all = &second["trials"][0]["summary"]["all"];
    assert_eq!(all["completed"], 3);
    assert_eq!(all["failed"], 1);
    assert_eq!(second["points"][0]["label"], "c=2 rate=8 in=32 out=4");
    let ttft_p50 = all["ttft"]["p50"].as_f64().expect("recomputed ttft");
    assert!(
        (ttft_p50 - 11.0).abs() < 1e-9,
        "median of 10, 12, 11 ms: {ttft_p50}"
    );
    // TPOT = (E2E − TTFT)/(N_out − 1) with E2E = TTFT + Σ gaps: 16/3, 16/3, 16/3 ms.
    let tpot = all["tpot"]["mean"].as_f64().expect("recomputed tpot");
    assert!((tpot - 16.0 / 3.0).abs() < 1e-9, "{tpot}");
    // The file's own median (11.5 in the fixture) is kept apart from the recomputed one.
    assert_eq!(second["trials"][0]["summary"]["reported"]["ttft_p50"], 11.5);
}

#[test]
fn vllm_infinity_nan_and_metadata_lengths_are_read() {
    let dir = scratch("vllm-append");
    let files = import("vllm", &fixture("vllm-append-result.jsonl"), &dir, &[]);
    assert_eq!(files.len(), 2);
    let first = read(&files[0]);
    assert_valid(&first);
    assert_eq!(
        first["points"][0]["label"],
        "c=unlimited rate=inf in=64 out=3"
    );
    assert_eq!(
        first["spec"]["spec"]["target"]["model"],
        "meta-llama/Llama-3.1-8B-Instruct"
    );
    assert_eq!(first["import"]["measured_at"], "20250301-090000");
    let all = &first["trials"][0]["summary"]["all"];
    // e2e = ttft + Σ itl: 28, 30, 29 ms.
    let e2e = all["e2e"]["mean"].as_f64().expect("recomputed e2e");
    assert!(
        (e2e - 29.0).abs() < 1e-9,
        "{e2e} (the file says 29.5: not recomputed?)"
    );
    let second = read(&files[1]);
    assert_valid(&second);
    let w = &second["spec"]["spec"]["workload"];
    assert_eq!(w["arrival"], "gamma");
    assert_eq!(w["burstiness"], 0.5);
    assert_eq!(second["points"][0]["label"], "c=1 rate=4 in=64 out=3");
    assert_eq!(
        second["trials"][0]["summary"]["all"]["goodput"],
        Value::Null,
        "request_goodput NaN has no value"
    );
}

#[test]
fn an_imported_vllm_result_compares_and_reports_against_a_servebench_run_with_honest_flags() {
    let dir = scratch("vllm-compare");
    let files = import(
        "vllm",
        &fixture("vllm-bench-serve.json"),
        &dir,
        &[
            "--input-tokens",
            "32",
            "--output-tokens",
            "16",
            "--variant",
            "fast",
        ],
    );
    assert_eq!(files.len(), 1);
    let imported = &files[0];
    assert_valid(&read(imported));
    let measured =
        std::fs::read_dir(repo().join("crates/cli/tests/fixtures/rerun/results/sim-rerun"))
            .expect("committed sim result")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "json"))
            .expect("a result");
    let out = sb()
        .arg("compare")
        .arg(imported)
        .arg(&measured)
        .arg("--json")
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json report");
    let c = &report["comparisons"][0];
    let mut ids: Vec<String> = c["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .flat_map(|m| m["flags"].as_array().cloned().unwrap_or_default())
        .chain(c["flags"].as_array().cloned().unwrap_or_default())
        .map(|f| f["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    ids.sort();
    ids.dedup();
    for want in ["not-comparable", "stale-baseline", "too-few-trials"] {
        assert!(ids.iter().any(|i| i == want), "{want} missing from {ids:?}");
    }
    let fields: Vec<&str> = c["fingerprint_differences"]
        .as_array()
        .expect("differences")
        .iter()
        .filter_map(|d| d["field"].as_str())
        .collect();
    assert!(
        fields.contains(&"servebench_version"),
        "the measuring tool differs: {fields:?}"
    );
    let point = &c["metrics"][0]["points"][0];
    assert_eq!(
        point["label"], "c=2",
        "the imported point matches the run's: {c:#}"
    );
    assert_eq!(point["n_baseline"], 1);
    let notes: Vec<&str> = c["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("imported") && n.contains("host")),
        "{notes:?}"
    );
    assert!(notes.iter().any(|n| n.contains("TPOT")), "{notes:?}");

    let report_dir = dir.join("report");
    sb().arg("report")
        .arg(imported)
        .arg(&measured)
        .arg("-o")
        .arg(&report_dir)
        .assert()
        .code(0);
    let md = std::fs::read_to_string(report_dir.join("report.md")).expect("report.md");
    assert!(md.contains("not-comparable"), "{md}");
}

#[test]
fn files_that_are_not_results_are_refused_with_what_to_do() {
    let dir = scratch("bad");
    let not_result = dir.join("other.json");
    std::fs::write(&not_result, r#"{"foo": 1}"#).expect("write");
    let out = sb()
        .args(["import", "vllm"])
        .arg(&not_result)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`completed`") && err.contains("servebench import"),
        "{err}"
    );

    let garbage = dir.join("garbage.jsonl");
    std::fs::write(
        &garbage,
        "{\"completed\": 1, \"duration\": 1.0}\nnot json at all\n",
    )
    .expect("write");
    let out = sb()
        .args(["import", "sglang"])
        .arg(&garbage)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(":2: not JSON") && err.contains("one JSON object per line"),
        "{err}"
    );

    let out = sb()
        .args(["import", "vllm"])
        .arg(fixture("vllm-bench-serve.json"))
        .args(["--input-tokens", "0"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a token count"));
}

/// `compare` pairs variants by exact name: a `--variant` is kept as written (case included)
/// or refused with a name that fits, never quietly rewritten.
#[test]
fn a_given_variant_name_is_kept_as_written_or_refused() {
    let dir = scratch("variant-names");
    let args = ["--input-tokens", "32", "--output-tokens", "16"];
    fn with<'a>(args: &[&'a str], v: &'a str) -> Vec<&'a str> {
        [args, &["--variant", v]].concat()
    }
    let files = import(
        "vllm",
        &fixture("vllm-bench-serve.json"),
        &dir,
        &with(&args, "FA-on"),
    );
    let doc = read(&files[0]);
    assert_eq!(doc["spec"]["spec"]["variants"][0]["name"], "FA-on");
    let out = sb()
        .args(["import", "vllm"])
        .arg(fixture("vllm-bench-serve.json"))
        .arg("--results-dir")
        .arg(&dir)
        .args(with(&args, "fa on"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--variant `fa on`") && err.contains("`fa-on`"),
        "{err}"
    );
}
