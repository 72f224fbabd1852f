//! `--fail-on step`: for a pipeline that commits a result per change. It trips (exit 1) on
//! a confirmed step that is new since the reference run — not confirmed when the history
//! ended at it (by default the second newest run, so the step the newest run confirmed) —
//! and never on an older step already in the history. An unconfirmed change at the newest
//! run is said, not failed on.

use servebench_stats::changepoint::Status;

use crate::model::{Gate, History};
use crate::words;

/// The gates `servebench history --fail-on` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    /// A confirmed step new since the reference run.
    Step,
}

impl FailOn {
    /// As written on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Step => "step",
        }
    }
}

/// Evaluate `gates` over `history`.
pub fn evaluate(history: &History, gates: &[FailOn]) -> Gate {
    let mut confirmed = Vec::new();
    let mut unconfirmed = Vec::new();
    for spec in &history.specs {
        for series in &spec.series {
            for c in &series.cells {
                for cp in c.change_points.iter().filter(|cp| cp.new) {
                    let line = format!(
                        "{} series {}: {}: {}",
                        spec.spec_name,
                        series.number,
                        words::cell_name(c),
                        words::change(c, cp)
                    );
                    match cp.status {
                        Status::Confirmed => confirmed.push(line),
                        Status::Unconfirmed => unconfirmed.push(line),
                    }
                }
            }
        }
    }
    Gate {
        fail_on: gates.iter().map(|g| g.as_str().to_owned()).collect(),
        tripped: gates.contains(&FailOn::Step) && !confirmed.is_empty(),
        confirmed,
        unconfirmed,
    }
}
