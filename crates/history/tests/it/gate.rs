//! `--fail-on step`: trips on a confirmed step new since the reference run, never on an old
//! one, and says (without failing) an unconfirmed one.

use servebench_history::gate::{FailOn, evaluate};

use crate::common::{flat_then, history_of, write_levels};

fn gate_of(levels: &[f64]) -> servebench_history::Gate {
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), levels);
    evaluate(&history_of(dir.path()), &[FailOn::Step])
}

#[test]
fn a_step_the_newest_run_confirms_trips() {
    let g = gate_of(&flat_then(12, &[0.85, 0.85]));
    assert!(g.tripped, "{g:#?}");
    assert_eq!(g.confirmed.len(), 1);
    assert!(
        g.confirmed[0].contains("output_throughput at c=16 of `base`"),
        "{g:?}"
    );
    assert!(g.unconfirmed.is_empty());
}

#[test]
fn an_old_step_does_not_trip() {
    let g = gate_of(&flat_then(6, &[0.85; 8]));
    assert!(!g.tripped, "{g:#?}");
    assert!(g.confirmed.is_empty() && g.unconfirmed.is_empty(), "{g:#?}");
}

#[test]
fn an_unconfirmed_change_is_said_not_failed_on() {
    let g = gate_of(&flat_then(12, &[0.85]));
    assert!(!g.tripped, "{g:#?}");
    assert!(g.confirmed.is_empty());
    assert_eq!(g.unconfirmed.len(), 1);
    assert!(g.unconfirmed[0].contains("unconfirmed"), "{g:?}");
}

#[test]
fn since_an_older_run_every_later_step_is_new() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_levels(dir.path(), &flat_then(6, &[0.85; 8]));
    let loaded = servebench_history::read_paths(&[dir.path().to_owned()]).expect("reads");
    let opts = servebench_history::HistoryOptions {
        since: Some(crate::common::run_id(4)),
        ..crate::common::opts()
    };
    let h = servebench_history::history(loaded, vec![], &opts).expect("analyses");
    assert_eq!(
        h.specs[0].reference.as_deref(),
        Some(crate::common::run_id(4).as_str())
    );
    let g = evaluate(&h, &[FailOn::Step]);
    assert!(g.tripped, "{g:#?}");
    // A --since that names no run read is an error, not an empty history.
    let loaded = servebench_history::read_paths(&[dir.path().to_owned()]).expect("reads");
    let opts = servebench_history::HistoryOptions {
        since: Some("20250101T000000Z-dead".into()),
        ..crate::common::opts()
    };
    let e = servebench_history::history(loaded, vec![], &opts).expect_err("unknown run");
    assert!(e.to_string().contains("20250101T000000Z-dead"), "{e}");
}
