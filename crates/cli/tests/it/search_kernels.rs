//! Kernel evidence in a capacity search (issue 52): every server start of a search is a start
//! like a sweep's — its kernel evidence is taken and its `kernel` verify rules judged before
//! its first step, on the simulator's vLLM personality (whose profiler writes traces named
//! after the MoE backend it runs, `--sim-kernels` for one that claims a backend and runs
//! another; kernels_sim.rs). An arm whose kernels match passes at every start; an arm whose
//! kernels are not its claimed backend's is refused at its first start, is measured at none,
//! and its later starts say why.

use std::path::Path;

use serde_json::Value;

use crate::common::{read_json, result_file, sb, scratch, write_spec};

/// A two-arm search (search.yaml's closed-form speeds: `base` holds 3 requests in flight
/// under its TPOT objective, `fast` 4) on the vLLM personality, with kernel rules per arm;
/// `fast` runs the kernels of `fast_runs`.
fn spec(dir: &Path, fast_runs: &str) -> String {
    let dir = dir.display().to_string();
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: search-kernels}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --engine, vllm, --tp, "2", --time-scale, "1",
           --prefill-ms-per-token, "0", --jitter-cv, "0", --speed-cv, "0", --decode-base-ms, "0.5",
           --profiler-config, '{{"profiler": "torch", "torch_profiler_dir": "{dir}", "torch_profiler_with_stack": false}}']
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
    stop: {{signal: SIGTERM, grace: 5s}}
    verify:
      - log_contains: "moe_backend=${{variant.backend}}"
  target: {{engine: vllm, api: openai-completions, model: sim-model, tokenizer: server}}
  variants:
    - name: base
      baseline: true
      vars: {{backend: triton, runs: triton}}
      server:
        args: [--decode-per-seq-ms, "1", --moe-backend, triton]
        verify:
          - kernel: {{matches: "^fused_moe_kernel$", min_share: 0.1}}
    - name: fast
      vars: {{backend: flashinfer_cutedsl, runs: {fast_runs}}}
      server:
        args: [--decode-per-seq-ms, "0.7778", --moe-backend, flashinfer_cutedsl, --sim-kernels, "${{variant.runs}}"]
        verify:
          - kernel: {{matches: "BlockScaledContiguous(Gather)?GroupedGemm", min_share: 0.05}}
          - kernel: {{absent: "fused_moe_kernel"}}
  workload:
    dataset: {{kind: random, input_tokens: 8, output_tokens: 32}}
    ignore_eos: true
    seed: 7
    requests: 12
    warmup_requests: 1
    request_timeout: 20s
  slo: {{tpot: 4ms}}
  search:
    axis: max_concurrency
    lower: 1
    upper: 6
    precision: {{absolute: 1}}
    attainment: 0.5
    min_rounds: 3
    max_rounds: 3
  evidence:
    kernels: {{dir: "{dir}", concurrency: 1, requests: 2, output_tokens: 8, timeout: 30s}}
"#
    )
}

/// `validate`, then `run`: the result, the run's exit code and stderr.
fn validate_and_run(dir: &Path, text: &str) -> (Value, Option<i32>, String) {
    let path = write_spec(dir, text);
    let v = sb(dir)
        .arg("validate")
        .arg(&path)
        .output()
        .expect("validate");
    let said = String::from_utf8_lossy(&v.stderr).into_owned();
    assert_eq!(v.status.code(), Some(0), "{said}");
    assert!(
        !said.contains("warning"),
        "a search with kernel evidence is valid as it stands: {said}"
    );
    let out = sb(dir)
        .args(["run", "--no-bars"])
        .arg(&path)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (read_json(&result_file(dir)), out.status.code(), stderr)
}

fn arr(v: &Value) -> &Vec<Value> {
    v.as_array().expect("an array")
}

/// The search log's starts of `variant`.
fn starts<'a>(r: &'a Value, variant: &str) -> Vec<&'a Value> {
    arr(&r["search"]["blocks"])
        .iter()
        .filter(|b| b["variant"] == variant)
        .collect()
}

/// The server record of search start `b`.
fn server_of<'a>(r: &'a Value, b: &Value) -> &'a Value {
    arr(&r["servers"])
        .iter()
        .find(|s| s["block"] == b["block"])
        .unwrap_or_else(|| panic!("no server record for {b}"))
}

/// The kernel evidence of search start `b`: taken, without an error, two worker ranks.
fn evidence_of<'a>(r: &'a Value, b: &Value) -> &'a Value {
    let ev = arr(&r["kernels"])
        .iter()
        .find(|k| k["block"] == b["block"])
        .unwrap_or_else(|| panic!("no kernel evidence for start {b}"));
    assert!(ev["error"].is_null(), "{ev}");
    let gpu = arr(&ev["ranks"])
        .iter()
        .filter(|k| k["source"] == "kernels")
        .count();
    assert_eq!(gpu, 2, "{ev}");
    ev
}

#[test]
fn every_search_start_takes_kernel_evidence_and_judges_its_kernel_rules() {
    let dir = scratch("search_kernels", "pass");
    let traces = dir.join("traces");
    let (r, code, stderr) = validate_and_run(&dir, &spec(&traces, "flashinfer_cutedsl"));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(r["status"], "complete", "{}", r["error"]);
    for (variant, rules, capacity) in [("base", 1, (3.0, 4.0)), ("fast", 2, (4.0, 5.0))] {
        let s = starts(&r, variant);
        assert_eq!(s.len(), 3, "one start a round: {s:?}");
        for b in s {
            assert_eq!(evidence_of(&r, b)["variant"], variant);
            let verify: Vec<&Value> = arr(&server_of(&r, b)["verify"])
                .iter()
                .filter(|v| v["rule"].as_str().is_some_and(|t| t.contains("kernel")))
                .collect();
            assert_eq!(verify.len(), rules, "{b}: {verify:?}");
            assert!(verify.iter().all(|v| v["passed"] == true), "{verify:?}");
            let o = &b["outcome"];
            assert_eq!(o["kind"], "bracketed", "{o}");
            assert_eq!(
                (o["pass_load"].as_f64(), o["fail_load"].as_f64()),
                (Some(capacity.0), Some(capacity.1)),
                "{o}"
            );
        }
    }
    assert_eq!(
        stderr.matches("kernel evidence: profiler on").count(),
        6,
        "{stderr}"
    );
}

#[test]
fn a_search_start_whose_kernels_are_not_its_claimed_backends_is_refused() {
    let dir = scratch("search_kernels", "fallback");
    // `fast` says flashinfer_cutedsl in its log, and runs the Triton kernels.
    let (r, code, stderr) = validate_and_run(&dir, &spec(&dir.join("traces"), "triton"));
    assert_ne!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("verify failed for variant `fast`: rule 2 (kernels matching /BlockScaledContiguous(Gather)?GroupedGemm/"),
        "{stderr}"
    );
    assert!(stderr.contains("top kernels"), "{stderr}");
    let fast = starts(&r, "fast");
    assert!(!fast.is_empty(), "{}", r["search"]);
    // Its first start was launched, its evidence taken, and it measured nothing.
    evidence_of(&r, fast[0]);
    for b in &fast {
        let o = &b["outcome"];
        assert_eq!(o["kind"], "invalid", "{b}");
        assert!(
            o["reason"]
                .as_str()
                .is_some_and(|w| w.contains("verify failed for variant `fast`")),
            "{o}"
        );
        assert!(arr(&b["steps"]).is_empty(), "{b}");
    }
    assert!(
        arr(&r["trials"]).iter().all(|t| t["variant"] == "base"),
        "the refused arm measured nothing"
    );
    // The baseline's starts passed their rule and were measured.
    for b in starts(&r, "base") {
        evidence_of(&r, b);
        assert_eq!(b["outcome"]["kind"], "bracketed", "{b}");
    }
}
