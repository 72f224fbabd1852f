//! servebench-history: `servebench history` — committed result files as series of runs, so
//! that today's run is judged against the series rather than against memory.
//!
//! It reads result files (servebench-result), groups them by compare's fingerprint rule
//! (servebench-compare's [`servebench_compare::fingerprint`]) and finds change points with
//! servebench-stats' [`servebench_stats::changepoint`]; it measures nothing and draws
//! nothing (the report crate renders it). It must not depend on servebench-runner or
//! servebench-report, nor on tokio, reqwest, tokenizers or plotters.
//!
//! * [`read_paths`] (files, folders searched recursively) and [`read_git`] (every commit of
//!   a git range) read runs; a file that is not a readable result is skipped with a note.
//! * [`history`] makes the [`History`]: one [`SpecHistory`] per spec name (never merged),
//!   split into comparable [`Series`] where a run's fingerprint or spec hash differs from the
//!   run before it; per series, variant, metric and point a [`Cell`]: each run's trial values
//!   and interval (result's `table`, as the end-of-run table), change points with their
//!   shift and status, outlier runs; and the baseline variant's [`BaselineState`].
//! * [`gate::evaluate`] is `--fail-on step`; [`render()`] the text; [`baseline_series`] the
//!   series view `servebench compare` adds to its stale-baseline evidence.
//!
//! The method and its measured detection rates: docs/history.md.

pub mod analyze;
mod error;
pub mod gate;
mod git;
mod load;
pub mod model;
pub mod render;
pub mod words;

use servebench_compare::{BaselineSeries, SeriesStep};
use time::OffsetDateTime;

pub use analyze::HistoryOptions;
pub use error::HistoryError;
pub use git::read_git;
pub use load::{Loaded, LoadedRun, read_paths};
pub use model::*;
pub use render::render;
pub use servebench_stats::changepoint::{Rule, Status};

/// The history of `loaded` (runs oldest first, as [`read_paths`] and [`read_git`] give
/// them); `sources` says what was read, for the output.
pub fn history(
    loaded: Loaded,
    sources: Vec<String>,
    opts: &HistoryOptions,
) -> Result<History, HistoryError> {
    if let Some(s) = &opts.since {
        let known = loaded
            .runs
            .iter()
            .any(|r| &r.result.run_id == s || &r.file == s || r.file.ends_with(&format!("/{s}")));
        if !known {
            return Err(HistoryError::UnknownRun { run: s.clone() });
        }
    }
    let now = opts.now.unwrap_or_else(OffsetDateTime::now_utc);
    let specs = analyze::by_spec(&loaded.runs)
        .into_iter()
        .map(|(name, runs)| analyze::spec_history(&name, &runs, opts, now))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(History {
        format: HISTORY_FORMAT.to_owned(),
        now: servebench_result::rfc3339(now),
        sources,
        skipped: loaded.skipped,
        specs,
        gate: None,
    })
}

/// The series view of a comparison across runs: the confirmed steps of `variant` in the
/// series that holds the run `base_run`, whose first run is later than it and, when the
/// series holds the candidate's run `candidate_run`, earlier than that run. A step whose
/// first run is the candidate's run (or a later one) is the change under test itself, not
/// a sign that the baseline went stale: it is left out. `None` when no series of `history`
/// holds the baseline run.
pub fn baseline_series(
    history: &History,
    base_run: &str,
    variant: &str,
    source: &str,
    candidate_run: Option<&str>,
) -> Option<BaselineSeries> {
    let series = history
        .specs
        .iter()
        .flat_map(|s| &s.series)
        .find(|s| s.runs.iter().any(|r| r.run_id == base_run))?;
    let at = series.runs.iter().position(|r| r.run_id == base_run)?;
    let until = candidate_run
        .and_then(|c| series.runs.iter().position(|r| r.run_id == c))
        .filter(|c| *c > at)
        .unwrap_or(usize::MAX);
    let steps = series
        .cells
        .iter()
        .filter(|c| c.variant == variant)
        .flat_map(|c| {
            c.change_points
                .iter()
                .filter(move |cp| {
                    cp.status == Status::Confirmed
                        && cp.first_run_after.index > at
                        && cp.first_run_after.index < until
                })
                .map(move |cp| SeriesStep {
                    metric: c.metric.clone(),
                    point: c.point.clone(),
                    variant: c.variant.clone(),
                    shift: cp.shift,
                    ratio: c.scale == servebench_stats::verdict::Scale::Log,
                    first_run: cp.first_run_after.run_id.clone(),
                    first_run_at: cp.first_run_after.created_at.clone(),
                    runs_after: cp.runs_after,
                })
        })
        .collect();
    Some(BaselineSeries {
        source: source.to_owned(),
        runs: series.runs.len(),
        steps,
    })
}
