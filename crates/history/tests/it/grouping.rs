//! Runs are kept apart by spec name and split into comparable series by compare's
//! fingerprint rule, with the field that changed named.

use crate::common::{flat_then, history_of, run, with_driver, write, write_levels};

#[test]
fn a_driver_change_splits_the_series_and_names_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..10 {
        let driver = if i < 6 { "580.95.05" } else { "580.105.08" };
        write(dir.path(), &with_driver(run(i, 1.0), driver));
    }
    let h = history_of(dir.path());
    assert_eq!(h.specs.len(), 1);
    let series = &h.specs[0].series;
    assert_eq!(series.len(), 2, "{series:#?}");
    assert_eq!(series[0].runs.len(), 6);
    assert_eq!(series[1].runs.len(), 4);
    assert!(series[0].starts.is_none());
    let b = series[1]
        .starts
        .as_ref()
        .expect("the second series says why");
    assert_eq!(b.previous_run, crate::common::run_id(5));
    assert_eq!(b.differences.len(), 1, "{:?}", b.differences);
    let d = &b.differences[0];
    assert_eq!(d.field, "accelerators[0].driver_version");
    assert_eq!(
        (d.baseline.as_str(), d.candidate.as_str()),
        ("580.95.05", "580.105.08")
    );
    let text = servebench_history::render(&h);
    assert!(
        text.contains("accelerators[0].driver_version: 580.95.05 → 580.105.08"),
        "{text}"
    );
}

#[test]
fn a_spec_change_splits_the_series_by_its_hash() {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..8 {
        let mut v = run(i, 1.0);
        if i >= 5 {
            v["spec_hash"] = "sha256:another".into();
        }
        write(dir.path(), &v);
    }
    let h = history_of(dir.path());
    let series = &h.specs[0].series;
    assert_eq!(series.len(), 2);
    let fields: Vec<&str> = series[1]
        .starts
        .as_ref()
        .expect("a break")
        .differences
        .iter()
        .map(|d| d.field.as_str())
        .collect();
    assert_eq!(fields, ["spec_hash"]);
}

#[test]
fn specs_of_different_names_are_never_merged() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(&dir.path().join("a"), &flat_then(6, &[]));
    for i in 6..12 {
        let mut v = run(i, 0.5);
        v["spec_name"] = "other-spec".into();
        write(&dir.path().join("b"), &v);
    }
    let h = history_of(dir.path());
    let names: Vec<&str> = h.specs.iter().map(|s| s.spec_name.as_str()).collect();
    assert_eq!(names, ["history-bench", "other-spec"]);
    for s in &h.specs {
        assert_eq!(s.series.len(), 1);
        assert_eq!(s.series[0].runs.len(), 6);
        // Each alone is flat: the halving between the two specs is no change point.
        assert!(s.series[0].cells.iter().all(|c| c.change_points.is_empty()));
    }
}

#[test]
fn each_run_keeps_its_trial_values_and_interval() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &[1.0, 2.0, 1.0]);
    let h = history_of(dir.path());
    let c = &h.specs[0].series[0].cells[0];
    assert_eq!(
        (c.metric.as_str(), c.variant.as_str()),
        ("output_throughput", "base")
    );
    assert_eq!(c.label, "c=16");
    assert_eq!(c.runs.len(), 3);
    for r in &c.runs {
        assert_eq!(r.values.len(), 5);
        let ci = r.ci.as_ref().expect("five trials give an interval");
        assert!(ci.lower < r.mean && r.mean < ci.upper, "{r:?}");
    }
    // The run's mean is the geometric mean of its trials, as compare computes per arm.
    let r = &c.runs[1];
    let geo = (r.values.iter().map(|v| v.ln()).sum::<f64>() / 5.0).exp();
    assert!((r.mean - geo).abs() < 1e-9 * geo);
    assert!((r.mean / c.runs[0].mean - 2.0).abs() < 0.02);
}
