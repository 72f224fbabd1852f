//! Results written before reasoning was told from answer keep loading: their summaries have
//! no TTFR, TTFA or token split (absent, not 0: their TTFT may be a reasoning token's), their
//! requests no `reasoning`, and the end-of-run summary shows no reasoning rows.

use std::path::PathBuf;

use servebench_result::{load_result, read_requests, sidecar_path, table};

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn a_result_from_before_reasoning_metrics_reads_without_them() {
    // An A/A on llama.cpp written on 2026-11-30, before this change.
    let path = repo().join("results/gpu-llamacpp-aa/20261130T153438Z-3469.json");
    let result = load_result(&path).expect("an older result loads");
    let summaries: Vec<_> = result
        .trials
        .iter()
        .filter_map(|t| t.summary.as_ref())
        .collect();
    assert!(!summaries.is_empty());
    for s in &summaries {
        assert!(s.metric("ttft_p50").is_some());
        for m in [
            "ttfr_p50",
            "ttfa_p50",
            "reasoning_tokens_mean",
            "answer_tokens_mean",
        ] {
            assert_eq!(s.metric(m), None, "{m} in an older result");
        }
    }
    let text = table::render(&result);
    assert!(!text.contains("TTFA") && !text.contains("ttfa"), "{text}");
    let lines = read_requests(&sidecar_path(&path)).expect("its sidecar reads");
    assert!(!lines.is_empty());
    assert!(lines.iter().all(|l| l.record.reasoning.is_none()));
    assert!(
        lines
            .iter()
            .all(|l| l.record.usage_reasoning_tokens().is_none())
    );
}
