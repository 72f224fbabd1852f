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

/// Editors complete metric names from the schema: `compare.metrics`, `compare.thresholds`
/// keys and `trials.until_decided.metrics` are the catalogue as an `enum`, every name with
/// its description. (Before, the schema said only `"type": "string"`.)
#[test]
fn metric_names_are_the_catalogue_in_the_schema() {
    let schema = servebench_spec::schema::spec_schema();
    let def = &schema["$defs"]["MetricName"];
    let def = &def["anyOf"][0];
    let names: Vec<&str> = def["enum"]
        .as_array()
        .expect("MetricName is an enum")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(names, servebench_spec::metrics::metric_names());
    let docs = def["markdownEnumDescriptions"]
        .as_array()
        .expect("with a description per name");
    assert_eq!(docs.len(), names.len());
    assert!(
        docs.iter()
            .all(|d| d.as_str().is_some_and(|s| s.len() > 20))
    );
    let compare = &schema["$defs"]["CompareSettings"]["properties"];
    assert_eq!(compare["metrics"]["items"]["$ref"], "#/$defs/MetricName");
    assert_eq!(
        schema["$defs"]["MetricThresholds"]["propertyNames"]["$ref"],
        "#/$defs/MetricName"
    );
    let until = &schema["$defs"]["UntilDecided"]["properties"]["metrics"];
    assert_eq!(until["items"]["$ref"], "#/$defs/MetricName");
}
