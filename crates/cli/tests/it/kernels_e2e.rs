//! Kernel evidence end to end on a real engine: `transformers serve` 5.24.0 on the CPU,
//! launched through servebench's profiling launcher (scripts/tserve_profiler.py), attention
//! `sdpa` against `eager` (specs/transformers-cpu-kernels.yaml). Each start's profiler trace
//! is read and its `kernel` rules judged: both arms pass with their own rules, an arm whose
//! trace lacks the expected operator fails verify (and is not measured), `compare` and
//! `report` show where the time went.
//!
//! Needs `scripts/setup-transformers`; under CI (`CI` set) a missing set-up fails the test.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::transformers_e2e::require_transformers;
use crate::common::{self, read_json, repo, result_file, sb, scratch};

/// The committed spec, small, with its paths made absolute for a scratch folder, and
/// `edits` (each must apply).
fn spec_text(dir: &Path, edits: &[(&str, &str)]) -> String {
    let mut text =
        std::fs::read_to_string(repo().join("specs/transformers-cpu-kernels.yaml")).expect("spec");
    let root = repo().canonicalize().expect("repo");
    let fixed = [
        ("count: 3", "count: 1".to_owned()),
        ("    requests: 8\n", "    requests: 2\n".to_owned()),
        (
            "working_dir: ..",
            format!("working_dir: {}", root.display()),
        ),
        (
            "dir: ../target/servebench-traces",
            format!("dir: {}", dir.join("traces").display()),
        ),
        (
            "tokenizer_path: transformers-tiny-lm/tokenizer.json",
            format!(
                "tokenizer_path: {}",
                root.join("specs/transformers-tiny-lm/tokenizer.json")
                    .display()
            ),
        ),
    ];
    for (from, to) in fixed
        .iter()
        .map(|(f, t)| (*f, t.as_str()))
        .chain(edits.iter().copied())
    {
        assert!(text.contains(from), "the spec no longer contains {from:?}");
        text = text.replacen(from, to, 1);
    }
    text
}

fn with_python(mut env: BTreeMap<String, String>) -> BTreeMap<String, String> {
    if !env.contains_key("TRANSFORMERS_PYTHON") {
        // The set-up's venv: <cache>/bin/transformers-serve → <cache>/venv/bin/python.
        let serve = Path::new(&env["TRANSFORMERS_SERVE"]);
        let py = serve
            .parent()
            .and_then(Path::parent)
            .map(|c| c.join("venv/bin/python"))
            .expect("cache folder");
        env.insert("TRANSFORMERS_PYTHON".into(), py.display().to_string());
    }
    env
}

/// Runs `text`; the result, and servebench's stderr.
fn run(env: &BTreeMap<String, String>, dir: &Path, text: &str) -> (Value, String) {
    let spec = common::write_spec(dir, text);
    let out = sb(dir)
        .envs(env)
        .args(["run", "--no-bars"])
        .arg(&spec)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (read_json(&result_file(dir)), stderr)
}

#[test]
fn kernel_rules_tell_sdpa_from_eager_on_transformers_serve() {
    let _serial = common::REAL_ENGINE
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let Some(env) = require_transformers() else {
        return;
    };
    let env = with_python(env);
    let dir = scratch("kernels_e2e", "ab");
    let (r, stderr) = run(&env, &dir, &spec_text(&dir, &[]));
    assert_eq!(r["status"], "complete", "{stderr}");
    assert!(
        r["trials"]
            .as_array()
            .expect("trials")
            .iter()
            .all(|t| t["status"] == "ok"),
        "{stderr}"
    );
    let kernels = r["kernels"].as_array().expect("kernel evidence");
    assert_eq!(kernels.len(), 2, "{stderr}");
    for k in kernels {
        assert!(k["error"].is_null(), "{k}");
        let rank = &k["ranks"][0];
        assert_eq!(rank["source"], "cpu_ops");
        let names: Vec<&str> = rank["kernels"]
            .as_array()
            .expect("names")
            .iter()
            .filter_map(|n| n["name"].as_str())
            .collect();
        let sdpa = names.contains(&"aten::scaled_dot_product_attention");
        assert_eq!(sdpa, k["variant"] == "sdpa", "{}: {names:?}", k["variant"]);
        assert!(k["output_tokens"].as_u64().unwrap_or(0) > 0, "{k}");
    }
    for s in r["servers"].as_array().expect("servers") {
        let verify = s["verify"].as_array().expect("verify");
        assert_eq!(verify.len(), 2, "{s}");
        assert!(verify.iter().all(|v| v["passed"] == true), "{s}");
    }
    let file = result_file(&dir);
    let cmp = sb(&dir)
        .arg("compare")
        .arg(&file)
        .output()
        .expect("compare");
    let text = String::from_utf8_lossy(&cmp.stdout);
    assert!(text.contains("kernels (evidence.kernels"), "{text}");
    assert!(text.contains("attention new"), "{text}");
    assert!(text.contains("of TPOT"), "{text}");
    let report = sb(&dir)
        .arg("report")
        .arg(&file)
        .arg("--output")
        .arg(dir.join("report"))
        .output()
        .expect("report");
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let md = std::fs::read_to_string(dir.join("report/report.md")).expect("report.md");
    assert!(md.contains("Where the time goes (kernels)"), "{md}");
}

#[test]
fn a_start_without_the_expected_operator_fails_verify() {
    let _serial = common::REAL_ENGINE
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let Some(env) = require_transformers() else {
        return;
    };
    let env = with_python(env);
    let dir = scratch("kernels_e2e", "wrong");
    // The eager arm asked to show sdpa's operator, and the sdpa arm left out.
    let text = spec_text(
        &dir,
        &[
            (
                r#"vars: {attention_op: "^aten::softmax$""#,
                r#"vars: {attention_op: "^aten::scaled_dot_product_attention$""#,
            ),
            (
                "    - name: sdpa\n      server: {args: [--attn-implementation, sdpa]}\n",
                "    - name: sdpa\n      server: {args: [--attn-implementation, eager]}\n",
            ),
        ],
    );
    let (r, stderr) = run(&env, &dir, &text);
    assert!(
        stderr.contains("verify failed for variant `eager`"),
        "{stderr}"
    );
    assert!(stderr.contains("none ran"), "{stderr}");
    assert!(stderr.contains("top kernels"), "{stderr}");
    let trials = r["trials"].as_array().expect("trials");
    let eager: Vec<&Value> = trials.iter().filter(|t| t["variant"] == "eager").collect();
    assert!(
        !eager.is_empty() && eager.iter().all(|t| t["status"] == "failed"),
        "{r}"
    );
    // The baseline failed verify, so no comparison is left: the run stops there and the
    // arm called sdpa (which would run eager attention too) is never started (issue 41:
    // a verify failure ends that variant's blocks, and the run when nothing is left).
    assert!(stderr.contains("no comparison was left"), "{stderr}");
    assert!(!stderr.contains("starting server for `sdpa`"), "{stderr}");
}
