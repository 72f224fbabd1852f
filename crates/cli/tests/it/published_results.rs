//! Every committed result file (under `results/`, `docs/` and the rerun test fixture) validates against the
//! committed result schema, so published results stay readable and re-runnable.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;
use common::{read_json, repo, walk};

/// The result files below `dir`: JSON with a schema version and a run id.
fn result_files(dir: &Path) -> Vec<PathBuf> {
    walk(dir)
        .into_iter()
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && std::fs::read_to_string(p)
                    .is_ok_and(|t| t.contains("\"schema_version\"") && t.contains("\"run_id\""))
        })
        .collect()
}

#[test]
fn committed_results_validate_against_the_result_schema() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/result.schema.json")).expect("schema"),
    )
    .expect("json");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let files: Vec<PathBuf> = ["results", "docs", "crates/cli/tests/fixtures/rerun/results"]
        .iter()
        .flat_map(|d| result_files(&repo().join(d)))
        .collect();
    assert!(!files.is_empty(), "no committed result file found");
    for f in files {
        let doc = read_json(&f);
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", f.display());
    }
}
