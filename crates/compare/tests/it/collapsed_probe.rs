//! The equivalence probe of the H200 MoE cost run (`results/gpu-transformers-moe-cost-fixed/`):
//! its prompts came from the random dataset, English words that are all `<unk>` to the random
//! model's word-level vocabulary, so all 16 prompts were one and the same input and every
//! start of both backends gave one completion to all of them. Before the collapse check,
//! `compare` called that `outputs unchanged`; it must say `inconclusive` and why.

use std::path::PathBuf;

use servebench_compare::{CompareOptions, LoadedResult, compare_within};

fn load(dir: &str) -> LoadedResult {
    let folder = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".json") && !n.ends_with(".compare.json") && !n.ends_with(".rerun.json")
        })
        .collect();
    files.sort();
    assert_eq!(files.len(), 1, "{files:?}");
    LoadedResult {
        file: files[0].display().to_string(),
        result: servebench_result::load_result(&files[0]).unwrap_or_else(|e| panic!("{e}")),
    }
}

#[test]
fn a_probe_whose_prompts_all_read_alike_is_not_called_unchanged() {
    let r = load("results/gpu-transformers-moe-cost-fixed");
    let report = compare_within(&r, &CompareOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let c = &report.comparisons[0];
    let e = c.equivalence.as_ref().expect("the run probed");
    assert_eq!(e.prompts, 16);
    assert_eq!(e.baseline_starts, 10);
    // Identical everywhere: the test alone would say unchanged.
    assert_eq!(e.identical, 1.0);
    let k = e.collapsed.as_ref().expect("collapse seen");
    assert_eq!((k.prompts, k.same_output), (16, 16));
    assert_eq!(e.verdict, "inconclusive");
    assert_eq!(
        e.batch.as_ref().and_then(|b| b.verdict.as_deref()),
        Some("inconclusive")
    );
    assert!(
        e.notes.iter().any(|n| n.contains("uninformative probe")),
        "{:?}",
        e.notes
    );
    assert!(
        e.advice
            .as_deref()
            .unwrap_or("")
            .contains("prompts the model answers differently")
    );
    let text = servebench_compare::render(&report);
    assert!(
        text.contains("outputs inconclusive at concurrency 1"),
        "{text}"
    );
    assert!(text.contains("16 of its 16 distinct prompts"), "{text}");
}

#[test]
fn prompts_the_model_reads_are_judged_as_before() {
    // The follow-up run with 16 prompts of the model's own vocabulary: 16 distinct completions
    // at the baseline's start, so no collapse (it has one start per arm: not judged).
    let r = load("results/gpu-transformers-moe-equivalence");
    let report = compare_within(&r, &CompareOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let e = report.comparisons[0]
        .equivalence
        .as_ref()
        .expect("the run probed");
    assert_eq!(e.collapsed, None);
    assert_eq!(e.prompts, 0, "one baseline start: nothing judged");
    assert_eq!(
        e.first_divergence_candidate.len(),
        8,
        "8 of 16 outputs differ"
    );
}
