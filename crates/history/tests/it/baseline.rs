//! The baseline variant's state: the age of its latest run at the established level and
//! whether the series moved since ("re-baseline"), and the series view compare adds to its
//! stale-baseline evidence.

use crate::common::{flat_then, history_of, run_id, write_levels};

#[test]
fn a_held_level_gives_the_age_of_the_newest_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &flat_then(10, &[]));
    let h = history_of(dir.path());
    let s = &h.specs[0].series[0];
    assert_eq!(s.baseline_variant.as_deref(), Some("base"));
    assert_eq!(s.baseline.len(), 1);
    let b = &s.baseline[0];
    // Run 10 started 2026-11-10 10:00; now is 2026-12-21 10:00.
    assert_eq!(b.latest_run.index, 9);
    assert!((b.age_days - 41.0).abs() < 1e-9, "{}", b.age_days);
    assert!(b.moved.is_none());
    assert!(
        b.message.contains("baseline from 41 days ago"),
        "{}",
        b.message
    );
    assert!(
        b.message.contains("the level has held since run 1"),
        "{}",
        b.message
    );
}

#[test]
fn a_confirmed_move_of_the_baseline_says_re_baseline() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &flat_then(12, &[1.08, 1.08]));
    let h = history_of(dir.path());
    let b = &h.specs[0].series[0].baseline[0];
    let moved = b.moved.as_ref().expect("the baseline moved");
    assert_eq!(moved.first_run_after.index, 12);
    assert_eq!(b.latest_run.index, 11, "the last run at the old level");
    assert_eq!(b.latest_run.run_id, run_id(11));
    // Run 12 started 2026-11-12 10:00: 39 days before now.
    assert!(
        b.message
            .starts_with("output_throughput c=16: baseline from 39 days ago (run 12 ("),
        "{}",
        b.message
    );
    assert!(
        b.message.contains("two later baseline runs are +8."),
        "{}",
        b.message
    );
    assert!(
        b.message.ends_with("(better): re-baseline"),
        "{}",
        b.message
    );
}

#[test]
fn an_unconfirmed_move_is_said_without_re_baseline() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &flat_then(12, &[1.1]));
    let h = history_of(dir.path());
    let b = &h.specs[0].series[0].baseline[0];
    assert!(b.moved.is_some());
    assert!(b.message.contains("unconfirmed"), "{}", b.message);
    assert!(!b.message.contains("re-baseline"), "{}", b.message);
}

#[test]
fn the_series_view_lists_confirmed_steps_after_the_baseline_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &flat_then(8, &[0.9; 6]));
    let h = history_of(dir.path());
    // Run 4 is before the step at run 9: the step is evidence against it.
    let view = servebench_history::baseline_series(&h, &run_id(3), "base", "results/", None)
        .expect("run 4 is in a series");
    assert_eq!(view.runs, 14);
    assert_eq!(view.source, "results/");
    assert_eq!(view.steps.len(), 1, "{:#?}", view.steps);
    let s = &view.steps[0];
    assert_eq!(s.first_run, run_id(8));
    assert_eq!(s.metric, "output_throughput");
    assert!(s.ratio);
    assert!((s.shift.point - 0.9).abs() < 0.01);
    assert_eq!(s.runs_after, 6);
    // Run 10 is after it: nothing to say.
    let view = servebench_history::baseline_series(&h, &run_id(9), "base", "results/", None)
        .expect("run 10 is in a series");
    assert!(view.steps.is_empty());
    // A run that was not read.
    assert!(servebench_history::baseline_series(&h, "nope", "base", "results/", None).is_none());
}

/// The issue-29 case: comparing run 4 with run 9, the first run of the step, blamed the
/// baseline for the very change under test ("the baseline variant's level moved after the
/// baseline run"). A step that starts at the candidate's run, or later, is the change
/// being compared: the series view leaves it out.
#[test]
fn a_step_at_the_candidate_run_is_the_change_under_test_not_a_stale_baseline() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &flat_then(8, &[0.9; 6]));
    let h = history_of(dir.path());
    // The step starts at run 9 (index 8): at the candidate's run, or after it (index 7).
    for candidate in [run_id(8), run_id(7)] {
        let view = servebench_history::baseline_series(
            &h,
            &run_id(3),
            "base",
            "results/",
            Some(&candidate),
        )
        .expect("run 4 is in a series");
        assert!(view.steps.is_empty(), "{candidate}: {:#?}", view.steps);
    }
    // A candidate after a step that came before it: that step is evidence.
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &flat_then(6, &[0.9; 8]));
    let h = history_of(dir.path());
    let view =
        servebench_history::baseline_series(&h, &run_id(2), "base", "results/", Some(&run_id(12)))
            .expect("run 3 is in a series");
    assert_eq!(view.steps.len(), 1, "{:#?}", view.steps);
}
