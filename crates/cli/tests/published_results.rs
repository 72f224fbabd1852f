//! Every committed result file (under `results/` and `docs/`) validates against the
//! committed result schema, so published results stay readable and re-runnable.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn result_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            result_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json")
            && std::fs::read_to_string(&p)
                .is_ok_and(|t| t.contains("\"schema_version\"") && t.contains("\"run_id\""))
        {
            out.push(p);
        }
    }
}

#[test]
fn committed_results_validate_against_the_result_schema() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/result.schema.json")).expect("schema"),
    )
    .expect("json");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let mut files = Vec::new();
    result_files(&repo().join("results"), &mut files);
    result_files(&repo().join("docs"), &mut files);
    assert!(!files.is_empty(), "no committed result file found");
    for f in files {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&f).expect("read")).expect("json");
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", f.display());
    }
}
