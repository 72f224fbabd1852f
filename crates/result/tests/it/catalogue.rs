//! The trial summary answers exactly the metric names of the spec's catalogue.

#[test]
fn summary_metric_names_equal_the_catalogue() {
    let mut from_summary = servebench_result::metrics::metric_names();
    let mut from_catalogue = servebench_spec::metrics::metric_names();
    from_summary.sort();
    from_catalogue.sort();
    assert_eq!(from_summary, from_catalogue);
}
