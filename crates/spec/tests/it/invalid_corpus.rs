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
