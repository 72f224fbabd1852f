//! Every invalid spec under `tests/fixtures/invalid/` fails with a located message; the
//! messages are snapshots (`cargo insta review` to accept changes).

#[test]
fn invalid_specs_fail_with_located_messages() {
    insta::glob!("../fixtures/invalid", "*.yaml", |path| {
        let src = std::fs::read_to_string(path).expect("read fixture");
        let name = format!(
            "invalid/{}",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("?")
        );
        let err = match servebench_spec::parse_str(&src, &name) {
            Ok(_) => panic!("{name} should be invalid"),
            Err(e) => e,
        };
        assert!(err.error_count() > 0, "{name}: no error");
        for d in err
            .diagnostics
            .iter()
            .filter(|d| d.severity == servebench_spec::Severity::Error)
        {
            assert!(
                d.pos.is_some(),
                "{name}: error without a position: {}",
                d.message
            );
        }
        insta::assert_snapshot!(err.to_string());
    });
}

/// Issue 41, item 7: the schema's errors and the semantic ones come in one pass — a misspelt
/// key no longer hides two baselines and an undefined variant var until it is fixed.
#[test]
fn schema_and_semantic_errors_are_reported_together() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/invalid/92-schema-and-semantic-errors.yaml");
    let src = std::fs::read_to_string(&path).expect("read fixture");
    let err = servebench_spec::parse_str(&src, "t.yaml").expect_err("invalid");
    let text = err.to_string();
    assert_eq!(err.error_count(), 3, "{text}");
    assert!(text.contains("reqest_rate"), "{text}");
    assert!(text.contains("baseline"), "{text}");
    assert!(text.contains("mode"), "{text}");
}
