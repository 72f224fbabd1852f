//! `docs/spec.md`'s generated sections (the field reference and the metric names) equal the
//! ones generated from the schema and the catalogue. One test for both: under
//! `SERVEBENCH_UPDATE_DOCS` it rewrites the one file, which two tests running at once would
//! race on.

use std::path::PathBuf;

use servebench_spec::reference::{
    BEGIN, END, METRICS_BEGIN, METRICS_END, field_reference_markdown, metric_names_markdown,
};

/// `doc` with the section between `begin` and `end` checked against (or, when updating,
/// replaced by) `generated`; `Err` names what is out of date.
fn section(
    doc: &str,
    begin: &str,
    end: &str,
    generated: &str,
    what: &str,
) -> Result<String, String> {
    let (Some(b), Some(e)) = (doc.find(begin), doc.find(end)) else {
        panic!("docs/spec.md lacks the markers of its {what}:\n{begin}\n…\n{end}");
    };
    let generated = format!("\n{generated}");
    if std::env::var_os("SERVEBENCH_UPDATE_DOCS").is_some() {
        return Ok(format!("{}{}{}{}", &doc[..b], begin, generated, &doc[e..]));
    }
    if doc[b + begin.len()..e] == generated {
        Ok(doc.to_owned())
    } else {
        Err(format!(
            "docs/spec.md's {what} is out of date.\nRegenerate it with:\n    \
             SERVEBENCH_UPDATE_DOCS=1 cargo test -p servebench-spec --test it docs_drift\n\
             then review and commit docs/spec.md."
        ))
    }
}

#[test]
fn docs_spec_md_generated_sections_are_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/spec.md");
    let doc = std::fs::read_to_string(&path).expect("docs/spec.md exists");
    let fields = field_reference_markdown();
    let doc = section(&doc, BEGIN, END, &fields, "field reference (spec types)")
        .and_then(|d| {
            section(
                &d,
                METRICS_BEGIN,
                METRICS_END,
                &metric_names_markdown(),
                "metric names (the catalogue)",
            )
        })
        .unwrap_or_else(|e| panic!("{e}"));
    if std::env::var_os("SERVEBENCH_UPDATE_DOCS").is_some() {
        std::fs::write(&path, doc).expect("write docs/spec.md");
        return;
    }
    // Every key of the schema appears in the document.
    for line in fields.lines().skip(2) {
        let key = line.split('`').nth(1).unwrap_or("");
        assert!(
            doc.contains(&format!("`{key}`")),
            "docs/spec.md does not mention `{key}`"
        );
    }
}
