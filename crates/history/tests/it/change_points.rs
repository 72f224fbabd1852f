//! Change points per cell: a step, an isolated outlier run, and a change at the newest run
//! that is unconfirmed until the next run.

use servebench_history::{Effect, Rule, Status};

use crate::common::{flat_then, history_of, write_levels};

fn cell(h: &servebench_history::History) -> &servebench_history::Cell {
    &h.specs[0].series[0].cells[0]
}

#[test]
fn a_step_is_found_with_its_size_and_first_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut levels = vec![1.0; 8];
    levels.extend([0.9; 8]);
    write_levels(dir.path(), &levels);
    let h = history_of(dir.path());
    let c = cell(&h);
    assert_eq!(c.change_points.len(), 1, "{:#?}", c.change_points);
    let cp = &c.change_points[0];
    assert_eq!(cp.status, Status::Confirmed);
    assert_eq!(cp.rule, Rule::Segmentation);
    assert_eq!(
        cp.first_run_after.index, 8,
        "run 9 is the first at the new level"
    );
    assert_eq!(cp.first_run_after.run_id, crate::common::run_id(8));
    assert_eq!(cp.last_run_before.index, 7);
    assert_eq!((cp.runs_before, cp.runs_after), (8, 8));
    assert!((cp.shift.point - 0.9).abs() < 0.01, "{:?}", cp.shift);
    assert!(
        cp.shift.ci.lower < 0.9 && 0.9 < cp.shift.ci.upper,
        "{:?}",
        cp.shift
    );
    assert!(cp.shift.ci.upper < 1.0);
    assert!(cp.p_value < 0.001);
    assert_eq!(cp.effect, Effect::Worse, "less throughput is worse");
    assert!(
        !cp.new,
        "an old step, confirmed long before the reference run"
    );
    assert!(c.outliers.is_empty());
}

#[test]
fn one_run_off_and_back_is_an_outlier_not_a_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut levels = vec![1.0; 16];
    levels[5] = 0.75;
    write_levels(dir.path(), &levels);
    let h = history_of(dir.path());
    let c = cell(&h);
    assert!(c.change_points.is_empty(), "{:#?}", c.change_points);
    assert_eq!(c.outliers.len(), 1);
    assert_eq!(c.outliers[0].run.index, 5);
    assert!(
        (c.outliers[0].shift - 0.75).abs() < 0.02,
        "{:?}",
        c.outliers[0]
    );
    let text = servebench_history::render(&h);
    assert!(text.contains("outlier run 6"), "{text}");
}

#[test]
fn an_outlier_next_to_a_step_does_not_hide_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut levels = flat_then(8, &[0.9; 8]);
    levels[3] = 1.3;
    write_levels(dir.path(), &levels);
    let h = history_of(dir.path());
    let c = cell(&h);
    assert_eq!(c.change_points.len(), 1, "{:#?}", c.change_points);
    assert_eq!(c.change_points[0].first_run_after.index, 8);
    assert_eq!(
        c.change_points[0].runs_before, 7,
        "the outlier run is left out"
    );
    assert_eq!(c.outliers.len(), 1);
    assert_eq!(c.outliers[0].run.index, 3);
}

#[test]
fn the_newest_run_off_is_unconfirmed_until_the_next() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &flat_then(12, &[0.85]));
    let h = history_of(dir.path());
    let c = cell(&h);
    assert_eq!(c.change_points.len(), 1, "{:#?}", c.change_points);
    let cp = &c.change_points[0];
    assert_eq!(cp.status, Status::Unconfirmed);
    assert_eq!(cp.first_run_after.index, 12);
    assert!(cp.new);
    assert!(
        c.outliers.is_empty(),
        "the newest run cannot be called an outlier yet"
    );

    // The next run back at the old level: the run was an outlier.
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &flat_then(12, &[0.85, 1.0]));
    let h = history_of(dir.path());
    let c = cell(&h);
    assert!(c.change_points.is_empty(), "{:#?}", c.change_points);
    assert_eq!(c.outliers.len(), 1);
    assert_eq!(c.outliers[0].run.index, 12);

    // The next run off as well: a confirmed step, new since the reference run.
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &flat_then(12, &[0.85, 0.85]));
    let h = history_of(dir.path());
    let c = cell(&h);
    assert_eq!(c.change_points.len(), 1, "{:#?}", c.change_points);
    let cp = &c.change_points[0];
    assert_eq!(cp.status, Status::Confirmed);
    assert_eq!(cp.rule, Rule::Persistence);
    assert_eq!(cp.first_run_after.index, 12);
    assert!(cp.new);
}

#[test]
fn a_flat_series_has_no_change_point() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &flat_then(20, &[]));
    let h = history_of(dir.path());
    let c = cell(&h);
    assert!(c.change_points.is_empty(), "{:#?}", c.change_points);
    assert!(c.outliers.is_empty(), "{:#?}", c.outliers);
}
