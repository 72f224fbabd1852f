//! `docs/spec.md`'s field reference equals the one generated from the schema.

use std::path::PathBuf;

use servebench_spec::reference::{BEGIN, END, field_reference_markdown};

#[test]
fn docs_spec_md_field_reference_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/spec.md");
    let doc = std::fs::read_to_string(&path).expect("docs/spec.md exists");
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/spec.md lacks the generated-section markers:\n{BEGIN}\n…\n{END}");
    };
    let current = &doc[b + BEGIN.len()..e];
    let generated = format!("\n{}", field_reference_markdown());
    if std::env::var_os("SERVEBENCH_UPDATE_DOCS").is_some() {
        let updated = format!("{}{}{}{}", &doc[..b], BEGIN, generated, &doc[e..]);
        std::fs::write(&path, updated).expect("write docs/spec.md");
        return;
    }
    assert!(
        current == generated,
        "docs/spec.md's field reference is out of date with the spec types.\n\
         Regenerate it with:\n    SERVEBENCH_UPDATE_DOCS=1 cargo test -p servebench-spec --test it docs_drift\n\
         then review and commit docs/spec.md."
    );
    // Every key of the schema appears in the document.
    for line in field_reference_markdown().lines().skip(2) {
        let key = line.split('`').nth(1).unwrap_or("");
        assert!(
            doc.contains(&format!("`{key}`")),
            "docs/spec.md does not mention `{key}`"
        );
    }
}
