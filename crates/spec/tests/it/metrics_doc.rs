//! Every metric of the catalogue is documented in docs/metrics.md.

#[test]
fn every_catalogue_metric_is_in_docs_metrics_md() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/metrics.md"
    ))
    .expect("docs/metrics.md exists");
    for m in servebench_spec::metrics::catalogue() {
        assert!(
            doc.contains(&format!("`{}`", m.name)),
            "docs/metrics.md does not list `{}`",
            m.name
        );
    }
}
