//! docs/engines.md's table of engines × guarantees equals the one generated from the engine
//! profiles.

use std::path::PathBuf;

use servebench_engines::doc::{BEGIN, END, engines_table};

#[test]
fn docs_engines_md_table_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/engines.md");
    let doc = std::fs::read_to_string(&path).expect("docs/engines.md exists");
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/engines.md lacks the generated-section markers:\n{BEGIN}\n…\n{END}");
    };
    let generated = format!("\n{}", engines_table());
    if std::env::var_os("SERVEBENCH_UPDATE_DOCS").is_some() {
        let updated = format!("{}{}{}{}", &doc[..b], BEGIN, generated, &doc[e..]);
        std::fs::write(&path, updated).expect("write docs/engines.md");
        return;
    }
    assert!(
        doc[b + BEGIN.len()..e] == generated,
        "docs/engines.md's table is out of date with the engine profiles.\n\
         Regenerate it with:\n    SERVEBENCH_UPDATE_DOCS=1 cargo test -p servebench-spec --test it engines_doc\n\
         then review and commit docs/engines.md."
    );
}
