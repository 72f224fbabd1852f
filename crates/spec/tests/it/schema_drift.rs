//! The committed schema must equal the one generated from the types.

use std::path::PathBuf;

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schemas/spec.schema.json")
}

#[test]
fn committed_spec_schema_matches_generated() {
    let generated = servebench_spec::schema::spec_schema_json();
    let path = committed_path();
    if std::env::var_os("SERVEBENCH_UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &generated).expect("write schemas/spec.schema.json");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "schemas/spec.schema.json is out of date with the spec types.\n\
         Regenerate it with:\n    SERVEBENCH_UPDATE_SCHEMAS=1 cargo test -p servebench-spec --test it schema_drift\n\
         (or `cargo run -p servebench -- schema > schemas/spec.schema.json`) and commit it."
    );
}
