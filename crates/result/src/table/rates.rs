//! What a bench_serving user reads at the end of a run beside the latencies (issue 51): the
//! duration, the request, input, output and total throughputs, the goodput when the spec sets
//! an SLO; the percentile columns the spec asked for (`compare.metrics` naming `ttft_p95`
//! adds a p95 column to every latency row); and a note where a trial had too few requests
//! for a column's tail (`servebench_spec::metrics::min_requests_for_quantile`).

use super::{CellStat, cell, cell_of};
use crate::metrics::summary::WindowSummary;
use crate::{RunResult, TrialStatus};

/// How a rate row's per-trial value is read.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// A catalogue metric.
    Metric(&'static str),
    /// Read from the trial's whole-trial window.
    Window(fn(&WindowSummary) -> Option<f64>),
}

/// The rate rows: words, unit, source; goodput only where the spec sets an SLO.
const RATES: [(&str, &str, Source); 6] = [
    ("duration", "s", Source::Window(|w| w.duration_s)),
    (
        "request throughput",
        "req/s",
        Source::Metric("request_throughput"),
    ),
    (
        "input token throughput",
        "tok/s",
        Source::Window(|w| {
            w.duration_s
                .filter(|d| *d > 0.0)
                .map(|d| w.input_tokens as f64 / d)
        }),
    ),
    (
        "output token throughput",
        "tok/s",
        Source::Metric("output_throughput"),
    ),
    (
        "total token throughput",
        "tok/s",
        Source::Metric("total_throughput"),
    ),
    ("goodput", "req/s", Source::Metric("goodput")),
];

/// One rate row of a point.
#[derive(Debug, Clone, PartialEq)]
pub struct RateRow {
    /// `request throughput`.
    pub words: &'static str,
    /// `req/s`.
    pub unit: &'static str,
    /// Mean over trials with its interval.
    pub cell: Option<CellStat>,
}

/// The rate rows of `variant` at `point`.
pub fn rate_rows(result: &RunResult, variant: &str, point: usize) -> Vec<RateRow> {
    let slo = result.spec.spec.slo.is_some();
    RATES
        .iter()
        .filter(|(words, _, _)| slo || *words != "goodput")
        .map(|(words, unit, source)| RateRow {
            words,
            unit,
            cell: match source {
                Source::Metric(m) => cell(result, variant, point, m),
                Source::Window(f) => {
                    let values: Vec<f64> = ok_trials(result, variant, point)
                        .filter_map(*f)
                        .filter(|v| v.is_finite())
                        .collect();
                    cell_of(&values, true)
                }
            },
        })
        .collect()
}

fn ok_trials<'a>(
    result: &'a RunResult,
    variant: &'a str,
    point: usize,
) -> impl Iterator<Item = &'a WindowSummary> {
    result
        .trials
        .iter()
        .filter(move |t| t.variant == variant && t.point == point && t.status == TrialStatus::Ok)
        .filter_map(|t| t.summary.as_ref().map(|s| &s.all))
}

/// The latency columns: mean, p50, the percentiles `compare.metrics` names beyond them, p99
/// (in order of their level).
pub fn columns(result: &RunResult) -> Vec<String> {
    let mut levels: Vec<(f64, String)> = vec![(0.5, "p50".into()), (0.99, "p99".into())];
    for m in &result.spec.spec.compare.metrics {
        if let Some((_, q)) = servebench_spec::metrics::percentile(m) {
            let stat = m.rsplit_once("_p").map(|(_, l)| format!("p{l}"));
            if let Some(stat) = stat
                && !levels.iter().any(|(_, s)| *s == stat)
            {
                levels.push((q, stat));
            }
        }
    }
    levels.sort_by(|a, b| a.0.total_cmp(&b.0));
    std::iter::once("mean".to_owned())
        .chain(levels.into_iter().map(|(_, s)| s))
        .collect()
}

/// The fewest requests a trial of `variant` at `point` completed.
fn fewest_requests(result: &RunResult, variant: &str, point: usize) -> Option<usize> {
    ok_trials(result, variant, point).map(|w| w.completed).min()
}

/// A note per percentile column whose tail rests on too few requests in some trial.
pub fn tail_notes(result: &RunResult, variant: &str, point: usize, cols: &[String]) -> Vec<String> {
    let Some(fewest) = fewest_requests(result, variant, point) else {
        return Vec::new();
    };
    cols.iter()
        .filter_map(|c| {
            let (_, q) = servebench_spec::metrics::percentile(&format!("ttft_{c}"))?;
            let need = servebench_spec::metrics::min_requests_for_quantile(q, 0.99);
            (q > 0.5 && (fewest as u64) < need).then(|| {
                format!(
                    "{c} from {fewest} requests in a trial, fewer than the {need} it needs: \
                     below that a trial's slowest request falls short of the true {c} more \
                     than 1% of the time (docs/statistics-method.md)"
                )
            })
        })
        .collect()
}
