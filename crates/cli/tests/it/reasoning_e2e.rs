//! Reasoning end to end: the simulator streams 12 reasoning tokens before the answer
//! (`servebench sim --reasoning-tokens 12`) in each engine's field (SGLang's and llama.cpp's
//! `reasoning_content`, vLLM's `reasoning`), with `completion_tokens_details.reasoning_tokens`
//! where the engine sends it (vLLM, SGLang; not llama.cpp); every request's time to first
//! answer token comes after its first token, and reasoning and answer tokens add up to its
//! output tokens. The summary and the report show them; a run without reasoning does not.

use crate::common;
use common::{result_file, sb, write_spec};
use servebench_result::metrics::derive;

const OUT: u32 = 32;
const THINK: u32 = 12;

fn spec(variants: &str, reasoning: bool) -> String {
    let think = if reasoning {
        format!(r#", --reasoning-tokens, "{THINK}""#)
    } else {
        String::new()
    };
    format!(
        r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {{name: reasoning}}
spec:
  server:
    command: ["${{servebench}}", sim]
    args: [--port, "${{port}}", --preset, fast, --seed, "3"{think}]
    readiness: {{http: {{path: /health}}, interval: 20ms, timeout: 20s}}
    stop: {{signal: SIGTERM, grace: 5s}}
  target: {{api: openai-chat, model: sim-model, tokenizer: server}}
  variants:
{variants}
  workload:
    dataset: {{kind: random, input_tokens: 16, output_tokens: {OUT}}}
    ignore_eos: true
    requests: 6
    warmup_requests: 1
    max_concurrency: 2
    request_timeout: 20s
  trials: {{count: 1}}
  compare:
    metrics: [ttft_p50, ttfa_p50]
"#
    )
}

#[test]
fn reasoning_streams_of_three_engines_give_ttfa_after_ttft_and_counts_that_add_up() {
    let dir = tempfile::tempdir().expect("tmp");
    let variants = "    - {name: sglang, baseline: true, server: {args: [--engine, sglang]}}\n    \
                    - {name: vllm, server: {args: [--engine, vllm]}}\n    \
                    - {name: llamacpp, server: {args: [--engine, llamacpp]}}";
    let path = write_spec(dir.path(), &spec(variants, true));
    let out = sb(dir.path())
        .args(["run", "--quiet"])
        .arg(&path)
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for want in [
        "ttfa_p50 (ms)",
        "ttfr_p50 (ms)",
        "reasoning_tokens_mean (tokens)",
    ] {
        assert!(text.contains(want), "missing `{want}` in:\n{text}");
    }
    let result = result_file(dir.path());
    // The report of several arms has a Reasoning section, a table per arm.
    let report = dir.path().join("report");
    sb(dir.path())
        .arg("report")
        .arg(&result)
        .arg("-o")
        .arg(&report)
        .assert()
        .code(0);
    let md = std::fs::read_to_string(report.join("report.md")).expect("report.md");
    assert!(md.contains("## Reasoning"), "{md}");
    // TTFA is compared as a latency.
    let cmp = sb(dir.path())
        .arg("compare")
        .arg(&result)
        .output()
        .expect("compare");
    let cmp = String::from_utf8_lossy(&cmp.stdout).to_string();
    assert!(cmp.contains("ttfa_p50 (ms, lower is better"), "{cmp}");
    for arm in ["sglang at", "vllm at", "llamacpp at"] {
        assert!(md.contains(arm), "no `{arm}` in:\n{md}");
    }
    assert_eq!(md.matches("| TTFA (ms) |").count(), 3, "{md}");
    let lines = servebench_result::read_requests(&servebench_result::sidecar_path(&result))
        .expect("the sidecar");
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for l in lines.iter().filter(|l| !l.warmup) {
        let r = &l.record;
        let m = derive(r);
        assert_eq!(m.failure, None, "{}: {:?}", l.variant, r.error_detail);
        let (ttft, ttfa) = (m.ttft_ms.expect("ttft"), m.ttfa_ms.expect("ttfa"));
        assert!(
            ttfa > ttft,
            "{}: TTFA {ttfa} ms after TTFT {ttft} ms",
            l.variant
        );
        assert_eq!(
            m.ttfr_ms,
            Some(ttft),
            "{}: reasoning comes first",
            l.variant
        );
        assert_eq!(m.n_out, Some(u64::from(OUT)), "{}", l.variant);
        assert_eq!(m.reasoning_tokens, Some(u64::from(THINK)), "{}", l.variant);
        assert_eq!(
            m.reasoning_tokens.zip(m.answer_tokens).map(|(a, b)| a + b),
            m.n_out,
            "{}",
            l.variant
        );
        // The stream's own count: the reasoning events and the answer events make up the
        // output, whichever count the server sent.
        let stream = r.reasoning.expect("reasoning seen in the stream");
        assert_eq!(stream.tokens, THINK, "{}", l.variant);
        assert_eq!(r.client_output_tokens(), u64::from(OUT), "{}", l.variant);
        let usage = r.usage_reasoning_tokens();
        match l.variant.as_str() {
            "llamacpp" => assert_eq!(usage, None, "llama.cpp sends no reasoning count"),
            v => assert_eq!(usage, Some(THINK), "{v} sends the count"),
        }
        assert!(m.flags.is_empty(), "{}: {:?}", l.variant, m.flags);
        *seen.entry(l.variant.clone()).or_default() += 1;
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.values().all(|n| *n == 6), "{seen:?}");
    // The requests table carries the same per-request values (CSV here; Parquet has the
    // same columns).
    let (code, csv, err) = crate::export_cli::export(&result, &["--table", "requests"]);
    assert_eq!(code, Some(0), "{err}");
    let rows = crate::export_cli::rows(&csv);
    let measured: Vec<_> = rows.iter().filter(|r| r["warmup"] == "false").collect();
    assert_eq!(measured.len(), 18, "{csv}");
    for r in measured {
        let num = |k: &str| {
            r[k].parse::<f64>()
                .unwrap_or_else(|e| panic!("{k}: {e}: {r:?}"))
        };
        assert!(num("ttfa_ms") > num("ttft_ms"), "{r:?}");
        assert_eq!(num("ttfr_ms"), num("ttft_ms"), "{r:?}");
        assert_eq!(num("reasoning_tokens"), f64::from(THINK), "{r:?}");
        assert_eq!(num("answer_tokens"), f64::from(OUT - THINK), "{r:?}");
    }
    // The trial summaries: TTFA over TTFT, the token split.
    let v: serde_json::Value = common::read_json(&result);
    for t in v["trials"].as_array().expect("trials") {
        let all = &t["summary"]["all"];
        let f = |k: &str| all[k]["mean"].as_f64().unwrap_or(f64::NAN);
        assert!(f("ttfa") > f("ttft"), "{all}");
        assert_eq!(f("reasoning_tokens"), f64::from(THINK), "{all}");
        assert_eq!(f("answer_tokens"), f64::from(OUT - THINK), "{all}");
    }
}

#[test]
fn the_summary_and_report_show_reasoning_only_when_a_request_reasoned() {
    for reasoning in [true, false] {
        let dir = tempfile::tempdir().expect("tmp");
        let variants = "    - {name: base, baseline: true, server: {args: [--engine, vllm]}}";
        let path = write_spec(dir.path(), &spec(variants, reasoning));
        let out = sb(dir.path())
            .args(["run", "--quiet"])
            .arg(&path)
            .assert()
            .code(0);
        let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        let result = result_file(dir.path());
        let report = dir.path().join("report");
        sb(dir.path())
            .arg("report")
            .arg(&result)
            .arg("-o")
            .arg(&report)
            .assert()
            .code(0);
        let md = std::fs::read_to_string(report.join("report.md")).expect("report.md");
        for want in ["TTFR (ms)", "TTFA (ms)", "reason (tok)", "answer (tok)"] {
            assert_eq!(text.contains(want), reasoning, "`{want}` in:\n{text}");
            assert_eq!(
                md.contains(&format!("| {want} |")),
                reasoning,
                "`{want}` in:\n{md}"
            );
        }
        // Without reasoning rows, the TTFA the spec compares is shown in its own block.
        assert_eq!(text.contains("ttfa_p50 (ms)"), !reasoning, "{text}");
        // TTFA is stored either way: TTFT for requests without reasoning.
        let v: serde_json::Value = common::read_json(&result);
        let all = &v["trials"][0]["summary"]["all"];
        assert!(all["ttfa"]["mean"].is_number(), "{all}");
        assert_eq!(all["reasoning_tokens"].is_null(), !reasoning, "{all}");
        if !reasoning {
            assert_eq!(all["ttfa"], all["ttft"], "{all}");
            assert!(all["ttfr"].is_null(), "{all}");
        }
    }
}
