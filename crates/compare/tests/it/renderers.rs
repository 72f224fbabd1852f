//! The text renderers of `compare` and `rerun`, snapshotted on committed results: the example
//! result of `docs/example-report/` (a simulator A/B) and the H200 llama.cpp A/B with its
//! re-run (`results/gpu-llamacpp-flash-attn/`). A change to a verdict, a flag, advice or the
//! layout shows up as a snapshot diff to review (`cargo insta review`).

use std::path::{Path, PathBuf};

use servebench_compare::{CompareOptions, LoadedResult, compare_across, compare_within, rerun};

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The one result file (`*.json` that is not a `.compare.json` or `.rerun.json`) in `dir`.
fn result_in(dir: &str) -> LoadedResult {
    let folder = repo().join(dir);
    let mut found: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| is_result(p))
        .collect();
    found.sort();
    assert_eq!(found.len(), 1, "one result file in {dir}: {found:?}");
    let path = &found[0];
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    LoadedResult {
        file: format!("{dir}/{name}"),
        result: servebench_result::load_result(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    }
}

fn is_result(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.ends_with(".json") && !name.ends_with(".compare.json") && !name.ends_with(".rerun.json")
}

#[test]
fn compare_text_within_the_example_run() {
    let example = result_in("docs/example-report");
    let report =
        compare_within(&example, &CompareOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    insta::assert_snapshot!(
        "compare_within_example",
        servebench_compare::render(&report)
    );
}

#[test]
fn compare_text_within_the_h200_ab() {
    let gpu = result_in("results/gpu-llamacpp-flash-attn");
    let report = compare_within(&gpu, &CompareOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    insta::assert_snapshot!("compare_within_h200", servebench_compare::render(&report));
}

#[test]
fn compare_text_across_a_run_and_its_rerun() {
    let published = result_in("results/gpu-llamacpp-flash-attn");
    let again = result_in("results/gpu-llamacpp-flash-attn/rerun");
    let report = compare_across(&published, &again, &CompareOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    insta::assert_snapshot!("compare_across_rerun", servebench_compare::render(&report));
}

#[test]
fn rerun_text_of_the_h200_ab() {
    let published = result_in("results/gpu-llamacpp-flash-attn");
    let again = result_in("results/gpu-llamacpp-flash-attn/rerun");
    let report = rerun::assess(&published, &again, &CompareOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    insta::assert_snapshot!("rerun_h200", rerun::render(&report));
}
