//! A bench_serving-style summary of a variant: per sweep point the duration, the throughputs
//! (and goodput with an SLO, `super::rates`) and the mean, p50, any percentile the spec's
//! `compare.metrics` names, and p99 of TTFT, TPOT, ITL and E2E (each the mean over trials,
//! with its 95% interval; a note where a trial had too few requests for a tail), when a request reasoned the times to first reasoning and answer token and the
//! reasoning and answer tokens, and per turn of a multi-turn point its TTFT. The end-of-run table of a
//! one-variant run is this (`table::render`), and so is the report's summary of one.

use std::fmt::Write;

use super::rates::{RateRow, columns, rate_rows, tail_notes};
use super::{CellStat, cell};
use crate::{RunResult, TrialStatus};

/// The throughput rows: metric, words, unit.
pub const THROUGHPUTS: [(&str, &str, &str); 3] = [
    ("request_throughput", "request throughput", "req/s"),
    ("output_throughput", "output token throughput", "tok/s"),
    ("total_throughput", "total token throughput", "tok/s"),
];

/// The latency rows (metric family, words) and columns (statistic).
pub const LATENCIES: [(&str, &str); 4] = [
    ("ttft", "TTFT"),
    ("tpot", "TPOT"),
    ("itl", "ITL"),
    ("e2e", "E2E"),
];

/// The reasoning rows (metric family, words), shown for a point where a request reasoned.
pub const REASONING: [(&str, &str); 4] = [
    ("ttfr", "TTFR (ms)"),
    ("ttfa", "TTFA (ms)"),
    ("reasoning_tokens", "reason (tok)"),
    ("answer_tokens", "answer (tok)"),
];

/// The statistics of every latency row.
pub const STATS: [&str; 3] = ["mean", "p50", "p99"];

/// One sweep point of one variant.
#[derive(Debug, Clone, PartialEq)]
pub struct PointSummary {
    /// Index of the point.
    pub point: usize,
    /// Its label.
    pub label: String,
    /// Trials that measured.
    pub trials: usize,
    /// Requests over those trials.
    pub requests: usize,
    /// Of them, failed.
    pub failed: usize,
    /// The duration and the rates (`super::rates`): request, input, output and total
    /// throughput, and goodput where the spec sets an SLO.
    pub rates: Vec<RateRow>,
    /// The latency columns: mean, p50, any percentile `compare.metrics` names, p99.
    pub columns: Vec<String>,
    /// Per [`LATENCIES`] row, per column.
    pub latency: Vec<Vec<Option<CellStat>>>,
    /// Per [`REASONING`] row, per column; empty where no request reasoned.
    pub reasoning: Vec<Vec<Option<CellStat>>>,
    /// A note per percentile column whose tail rests on too few requests.
    pub notes: Vec<String>,
    /// Per turn of a multi-turn point (empty otherwise).
    pub turns: Vec<TurnRow>,
}

/// One turn of a multi-turn point, over the trials.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRow {
    /// The turn (0: every conversation's first).
    pub turn: u32,
    /// Requests of that turn over the trials.
    pub requests: usize,
    /// Mean over trials of the turn's mean TTFT, ms.
    pub ttft_mean: Option<f64>,
    /// Mean over trials of the turn's median TTFT, ms.
    pub ttft_p50: Option<f64>,
    /// Mean over trials of the prompt tokens the server counted for the turn.
    pub prompt_tokens: Option<f64>,
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The turns of `variant` at `point`, over its ok trials.
pub fn turn_rows(result: &RunResult, variant: &str, point: usize) -> Vec<TurnRow> {
    /// Per turn: requests, and per trial its TTFT mean, TTFT p50 and mean prompt tokens.
    type Acc = (usize, Vec<f64>, Vec<f64>, Vec<f64>);
    let mut by: std::collections::BTreeMap<u32, Acc> = Default::default();
    for t in result
        .trials
        .iter()
        .filter(|t| t.variant == variant && t.point == point && t.status == TrialStatus::Ok)
    {
        for turn in t.summary.iter().flat_map(|s| &s.turns) {
            let e = by.entry(turn.turn).or_default();
            e.0 += turn.requests;
            if let Some(l) = &turn.ttft {
                e.1.push(l.mean);
                e.2.push(l.p50);
            }
            e.3.extend(turn.mean_prompt_tokens);
        }
    }
    by.into_iter()
        .map(|(turn, (requests, m, p, tok))| TurnRow {
            turn,
            requests,
            ttft_mean: mean(&m),
            ttft_p50: mean(&p),
            prompt_tokens: mean(&tok),
        })
        .collect()
}

/// Every point of `variant`, in sweep order.
pub fn summarize(result: &RunResult, variant: &str) -> Vec<PointSummary> {
    let cols = columns(result);
    result
        .points
        .iter()
        .map(|p| {
            let ok: Vec<_> = result
                .trials
                .iter()
                .filter(|t| {
                    t.variant == variant && t.point == p.index && t.status == TrialStatus::Ok
                })
                .collect();
            let (requests, failed) = ok
                .iter()
                .filter_map(|t| t.summary.as_ref())
                .fold((0, 0), |(r, f), s| (r + s.all.requests, f + s.all.failed));
            PointSummary {
                point: p.index,
                label: p.label.clone(),
                trials: ok.len(),
                requests,
                failed,
                rates: rate_rows(result, variant, p.index),
                latency: rows(result, variant, p.index, &LATENCIES, &cols),
                reasoning: if reasoned(result, variant, p.index) {
                    rows(result, variant, p.index, &REASONING, &cols)
                } else {
                    Vec::new()
                },
                notes: tail_notes(result, variant, p.index, &cols),
                columns: cols.clone(),
                turns: turn_rows(result, variant, p.index),
            }
        })
        .collect()
}

fn rows(
    result: &RunResult,
    variant: &str,
    point: usize,
    families: &[(&str, &str)],
    cols: &[String],
) -> Vec<Vec<Option<CellStat>>> {
    families
        .iter()
        .map(|(fam, _)| {
            cols.iter()
                .map(|s| cell(result, variant, point, &format!("{fam}_{s}")))
                .collect()
        })
        .collect()
}

/// Whether a request of `variant` at `point` (or at any point, `None`) reasoned: its trials'
/// summaries have reasoning statistics.
pub fn reasoned_at(result: &RunResult, variant: Option<&str>, point: Option<usize>) -> bool {
    result
        .trials
        .iter()
        .filter(|t| variant.is_none_or(|v| t.variant == v) && point.is_none_or(|p| t.point == p))
        .filter_map(|t| t.summary.as_ref())
        .any(|s| s.all.reasoning_tokens.is_some())
}

fn reasoned(result: &RunResult, variant: &str, point: usize) -> bool {
    reasoned_at(result, Some(variant), Some(point))
}

/// Whether the summary shows `metric` already; `reasoned`: it has the reasoning rows (a
/// request of the run reasoned).
pub fn covers(metric: &str, reasoned: bool) -> bool {
    let reasoning: &[(&str, &str)] = if reasoned { &REASONING } else { &[] };
    THROUGHPUTS.iter().any(|(m, _, _)| *m == metric)
        || LATENCIES
            .iter()
            .chain(reasoning)
            .any(|(fam, _)| STATS.iter().any(|s| format!("{fam}_{s}") == metric))
}

/// A number as the tables print it: 3 significant figures or so.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// `mean [lo, hi]`, `mean` alone below 3 trials, `—` without a value.
pub fn fmt_cell(c: Option<&CellStat>) -> String {
    match c {
        None => "—".to_owned(),
        Some(CellStat {
            mean,
            ci: Some((lo, hi)),
            ..
        }) => format!("{} [{}, {}]", fmt_num(*mean), fmt_num(*lo), fmt_num(*hi)),
        Some(CellStat { mean, .. }) => fmt_num(*mean),
    }
}

/// The per-turn rows of one point as text lines (none for other datasets).
pub fn render_turns(out: &mut String, turns: &[TurnRow], indent: &str) {
    if turns.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "{indent}per turn (mean over trials; later turns carry the history):"
    );
    let _ = writeln!(
        out,
        "{indent}  {:<6} {:>9} {:>15} {:>15} {:>15}",
        "turn", "requests", "TTFT mean (ms)", "TTFT p50 (ms)", "prompt tokens"
    );
    for t in turns {
        let f = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), fmt_num);
        let _ = writeln!(
            out,
            "{indent}  {:<6} {:>9} {:>15} {:>15} {:>15}",
            t.turn + 1,
            t.requests,
            f(t.ttft_mean),
            f(t.ttft_p50),
            f(t.prompt_tokens)
        );
    }
}

/// The summary of the run's one variant (its first, if it has several), as text.
pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    let Some(v) = result.spec.spec.variants.first() else {
        return out;
    };
    let _ = writeln!(
        out,
        "\n{} — per sweep point, the mean over trials [95% CI; none below 3 trials]",
        v.name
    );
    for p in summarize(result, &v.name) {
        let _ = writeln!(
            out,
            "\n  {} — {} trial(s), {} requests{}",
            p.label,
            p.trials,
            p.requests,
            if p.failed > 0 {
                format!(", {} failed", p.failed)
            } else {
                String::new()
            }
        );
        for r in &p.rates {
            let _ = writeln!(
                out,
                "    {:<32} {}",
                format!("{} ({})", r.words, r.unit),
                fmt_cell(r.cell.as_ref())
            );
        }
        let _ = write!(out, "    {:<12}", "");
        for c in &p.columns {
            let _ = write!(out, " {c:>24}");
        }
        let _ = writeln!(out);
        let latency = LATENCIES
            .iter()
            .zip(&p.latency)
            .map(|((_, w), c)| (format!("{w} (ms)"), c));
        let reasoning = REASONING
            .iter()
            .zip(&p.reasoning)
            .map(|((_, w), c)| ((*w).to_owned(), c));
        for (words, cells) in latency.chain(reasoning) {
            let _ = write!(out, "    {words:<12}");
            for c in cells {
                let _ = write!(out, " {:>24}", fmt_cell(c.as_ref()));
            }
            let _ = writeln!(out);
        }
        for n in &p.notes {
            let _ = writeln!(out, "    note: {n}");
        }
        render_turns(&mut out, &p.turns, "    ");
    }
    out
}
