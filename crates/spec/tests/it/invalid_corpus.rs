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

/// Issue 50: a binary file given as a spec was "the file is empty" (NUL bytes) or an I/O
/// error naming no place (bytes that are not UTF-8); it is said as a file that is not text,
/// at the first such byte.
#[test]
fn a_binary_file_is_refused_as_not_text_at_its_first_such_byte() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("binary-spec");
    std::fs::create_dir_all(&dir).expect("scratch");
    let png = dir.join("image.yaml");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").expect("write");
    let e = servebench_spec::load(&png).expect_err("a PNG").to_string();
    assert!(
        e.contains(
            "1:1: error: the file is not text: byte 0 (line 1, column 1) is 0x89, not UTF-8"
        ),
        "{e}"
    );
    let zeros = dir.join("zeros.yaml");
    std::fs::write(&zeros, b"apiVersion: x\n\0\0\0\0").expect("write");
    let e = servebench_spec::load(&zeros).expect_err("NULs").to_string();
    assert!(
        e.contains("2:1: error: the file is not text: byte 14 (line 2, column 1) is 0x00, a control character"),
        "{e}"
    );
    assert!(!e.contains("empty"), "{e}");
}
