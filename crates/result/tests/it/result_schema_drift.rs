//! The committed result and sidecar schemas equal the ones generated from the types.

use std::path::PathBuf;

fn check(file: &str, generated: String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../schemas")
        .join(file);
    if std::env::var_os("SERVEBENCH_UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &generated).expect("write schema");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "schemas/{file} is out of date with the result types.\nRegenerate it with:\n    \
         SERVEBENCH_UPDATE_SCHEMAS=1 cargo test -p servebench-result --test it result_schema_drift\nand commit it."
    );
}

#[test]
fn committed_result_schema_matches_generated() {
    check(
        "result.schema.json",
        servebench_result::result_schema_json(),
    );
}

#[test]
fn committed_requests_schema_matches_generated() {
    check(
        "requests.schema.json",
        servebench_result::requests_schema_json(),
    );
}
