//! Judging a search's trials and starts: a trial's attainment against the target (or why it
//! cannot be judged), a start's outcome from its bracket, and both in words for the console.

use servebench_result::{SearchOutcome, SearchStep, TrialStatus};
use servebench_spec::search::{Bracket, Grid, load_text};
use servebench_spec::{Search, SearchAxis};

use super::MIN_RATE_HELD;

/// Attainment, pass/fail, or why the trial cannot be judged.
pub(super) fn judge_trial(
    trial: &servebench_result::TrialResult,
    q: &Search,
) -> (Option<f64>, Option<bool>, Option<String>) {
    if trial.status != TrialStatus::Ok {
        return (
            None,
            None,
            Some(
                trial
                    .failure
                    .clone()
                    .unwrap_or_else(|| "the trial failed".into()),
            ),
        );
    }
    let Some(s) = &trial.summary else {
        return (None, None, Some("the trial has no summary".into()));
    };
    let attainment = s.attainment();
    if q.axis == SearchAxis::RequestRate
        && let Some(held) = s.rate_held_fraction
        && held < MIN_RATE_HELD
    {
        return (
            attainment,
            None,
            Some(format!(
                "the client fell behind its schedule: it sent at {:.1}% of the rate asked \
                 (below {:.0}%)",
                held * 100.0,
                MIN_RATE_HELD * 100.0
            )),
        );
    }
    match attainment {
        // A hair of tolerance: 99 of 100 requests meet a 0.99 target.
        Some(a) => (Some(a), Some(a >= q.attainment - 1e-9), None),
        None => (None, None, Some("no request was measured".into())),
    }
}

pub(super) fn bracket_outcome(grid: &Grid, b: Bracket, steps: &[SearchStep]) -> SearchOutcome {
    let at = |i: usize| {
        steps
            .iter()
            .rev()
            .find(|s| s.index == i)
            .and_then(|s| s.attainment)
    };
    match b {
        Bracket::BelowLower => SearchOutcome::BelowLower { attainment: at(0) },
        Bracket::AboveUpper => SearchOutcome::AboveUpper {
            attainment: at(grid.loads.len() - 1),
        },
        Bracket::Between { pass, fail } => SearchOutcome::Bracketed {
            pass_load: grid.loads[pass],
            fail_load: grid.loads[fail],
            estimate: grid.estimate(b).unwrap_or(grid.loads[pass]),
        },
    }
}

pub(super) fn outcome_words(o: &SearchOutcome, q: &Search) -> String {
    let u = q.axis.unit();
    let text = |x: f64| load_text(q, x);
    match o {
        SearchOutcome::Bracketed {
            pass_load,
            fail_load,
            estimate,
        } => format!(
            "passed at {}, failed at {} {u}: capacity ≈ {} {u}",
            text(*pass_load),
            text(*fail_load),
            text(*estimate)
        ),
        SearchOutcome::BelowLower { .. } => "failed even at the lower bound".into(),
        SearchOutcome::AboveUpper { .. } => "passed even at the upper bound".into(),
        SearchOutcome::Invalid { reason } => format!("no estimate: {reason}"),
    }
}

pub(super) fn describe(look: &servebench_result::SearchLook, q: &Search) -> String {
    let text = |x: f64| load_text(q, x);
    let parts: Vec<String> = look
        .variants
        .iter()
        .map(|v| match (v.estimate, v.lower, v.upper) {
            (Some(e), Some(l), Some(u)) => {
                format!(
                    "{} {} [{}, {}] {}",
                    v.variant,
                    text(e),
                    text(l),
                    text(u),
                    q.axis.unit()
                )
            }
            _ => format!("{}: {}", v.variant, v.note),
        })
        .collect();
    format!(
        "{}; {}",
        parts.join("; "),
        if look.stop { "stop" } else { "continue" }
    )
}
