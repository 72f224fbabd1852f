//! The end-of-run table: per variant and sweep point, the mean and 95% interval across
//! trials of each compared metric (geometric for positive metrics, arithmetic for metrics
//! that can be 0), from the stats crate. A one-variant run gets the bench_serving-style
//! summary of [`overview`] instead of the metric blocks; multi-turn points get their per-turn
//! TTFT either way.

mod flags;
pub mod overview;
pub mod rates;

use std::fmt::Write;

use servebench_spec::metrics;
use servebench_stats::interval::{geometric_mean_ci, mean_ci};

use crate::{RunResult, TrialStatus};
pub use flags::flag_advice;
use flags::flags_section;
use overview::fmt_num;

/// One cell of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct CellStat {
    /// Mean across trials (geometric for positive metrics).
    pub mean: f64,
    /// 95% interval, when there are at least 3 trials.
    pub ci: Option<(f64, f64)>,
    /// Trials with a value.
    pub n: usize,
}

/// Per-trial values of `metric` for `variant` at `point`, in run order (ok trials only).
pub fn trial_values(result: &RunResult, variant: &str, point: usize, metric: &str) -> Vec<f64> {
    result
        .trials
        .iter()
        .filter(|t| t.variant == variant && t.point == point && t.status == TrialStatus::Ok)
        .filter_map(|t| t.summary.as_ref()?.metric(metric))
        .filter(|v| v.is_finite())
        .collect()
}

/// The statistic of one cell.
pub fn cell(result: &RunResult, variant: &str, point: usize, metric: &str) -> Option<CellStat> {
    let values = trial_values(result, variant, point, metric);
    let can_be_zero = metrics::metric(metric).is_none_or(|m| m.can_be_zero);
    cell_of(&values, can_be_zero)
}

/// The statistic of per-trial `values`: their geometric mean and its interval, or the
/// arithmetic ones where a value `can_be_zero` (or is).
pub fn cell_of(values: &[f64], can_be_zero: bool) -> Option<CellStat> {
    if values.is_empty() {
        return None;
    }
    let can_be_zero = can_be_zero || values.iter().any(|v| *v <= 0.0);
    let est = if can_be_zero {
        mean_ci(values, 0.95)
    } else {
        geometric_mean_ci(values, 0.95)
    };
    Some(match est {
        Ok(e) => CellStat {
            mean: e.point,
            ci: Some((e.ci.lower, e.ci.upper)),
            n: values.len(),
        },
        Err(_) => {
            let mean = if can_be_zero {
                values.iter().sum::<f64>() / values.len() as f64
            } else {
                (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
            };
            CellStat {
                mean,
                ci: None,
                n: values.len(),
            }
        }
    })
}

/// For a sequential run: every cell's trials, why it stopped, and its verdicts there.
/// Beside ITL: the share of token events that arrived in one read with another of the same
/// request (their gap is 0 ms, so ITL percentiles at or below that share read 0).
fn batched_section(out: &mut String, result: &RunResult, names: &[String]) {
    let _ = writeln!(
        out,
        "\ntoken events sharing a read (ITL gap 0 ms; docs/metrics.md), mean over trials"
    );
    let mut header = format!("  {:<34}", "sweep point");
    for n in names {
        let _ = write!(header, " {n:>28}");
    }
    let _ = writeln!(out, "{header}");
    for p in &result.points {
        let mut line = format!("  {:<34}", p.label);
        for n in names {
            let s = result
                .batched_share(n, p.index)
                .map_or_else(|| "—".to_owned(), |m| format!("{:.1}%", 100.0 * m));
            let _ = write!(line, " {s:>28}");
        }
        let _ = writeln!(out, "{line}");
    }
}

/// Mean over `variant`'s ok trials at `point` of what `f` reads from a trial's summary.
fn mean_of(
    result: &RunResult,
    variant: &str,
    point: usize,
    f: impl Fn(&crate::metrics::TrialSummary) -> Option<f64>,
) -> Option<f64> {
    let v: Vec<f64> = result
        .trials
        .iter()
        .filter(|t| t.variant == variant && t.point == point && t.status == TrialStatus::Ok)
        .filter_map(|t| f(t.summary.as_ref()?))
        .filter(|v| v.is_finite())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The decode ceiling's share per point (`spec.model_facts`), and what telemetry saw of the
/// GPUs (`spec.telemetry`): energy per token and power, or why no GPU was sampled.
fn telemetry_section(out: &mut String, result: &RunResult, names: &[String]) {
    let summaries = || result.trials.iter().filter_map(|t| t.summary.as_ref());
    let rows = |out: &mut String, cell: &dyn Fn(&str, usize) -> Option<String>| {
        let mut header = format!("  {:<34}", "sweep point");
        for n in names {
            let _ = write!(header, " {n:>28}");
        }
        let _ = writeln!(out, "{header}");
        for p in &result.points {
            let mut line = format!("  {:<34}", p.label);
            for n in names {
                let s = cell(n, p.index).unwrap_or_else(|| "—".to_owned());
                let _ = write!(line, " {s:>28}");
            }
            let _ = writeln!(out, "{line}");
        }
    };
    if summaries().any(|s| s.decode_ceiling.is_some()) {
        let _ = writeln!(
            out,
            "
output throughput as a share of the memory-bound decode ceiling (tok/s), mean over trials (docs/gpu.md)"
        );
        rows(out, &|n, p| {
            let share = mean_of(result, n, p, |s| s.decode_ceiling.as_ref().map(|c| c.share))?;
            let ceiling = mean_of(result, n, p, |s| {
                s.decode_ceiling.as_ref().map(|c| c.tok_per_s)
            })?;
            Some(format!("{:.1}% of {}", 100.0 * share, fmt_num(ceiling)))
        });
    }
    let tel: Vec<&crate::telemetry::TelemetrySummary> =
        summaries().filter_map(|s| s.telemetry.as_ref()).collect();
    if tel.is_empty() {
        return;
    }
    if tel.iter().any(|t| t.gpu.energy_j.is_some()) {
        let _ = writeln!(
            out,
            "
GPU energy per output token (J/tok) and power (W, all the server's GPUs), mean over trials"
        );
        rows(out, &|n, p| {
            let j = mean_of(result, n, p, |s| {
                s.telemetry.as_ref()?.joules_per_output_token
            })?;
            let w = mean_of(result, n, p, |s| {
                s.telemetry.as_ref()?.gpu.power_w.map(|w| w.mean)
            });
            Some(match w {
                Some(w) => format!("{} J/tok, {w:.0} W", fmt_num(j)),
                None => format!("{} J/tok", fmt_num(j)),
            })
        });
    }
    let mut notes: Vec<String> = tel
        .iter()
        .filter(|t| t.gpu.source == "none")
        .filter_map(|t| t.gpu.note.clone())
        .collect();
    notes.sort();
    notes.dedup();
    for n in notes {
        let _ = writeln!(
            out,
            "
telemetry: {n}"
        );
    }
}

fn sequential_section(out: &mut String, result: &RunResult) {
    let Some(u) = &result.spec.spec.trials.until_decided else {
        return;
    };
    let mut cells: Vec<(&str, usize)> = Vec::new();
    for c in result.looks.iter().flat_map(|l| &l.cells) {
        if !cells.contains(&(c.variant.as_str(), c.point)) {
            cells.push((c.variant.as_str(), c.point));
        }
    }
    if cells.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nsequential trials (first stage {}, budget {} per cell): trials per cell and why it \
         stopped; verdicts on the repeated interval of its last look",
        result.spec.spec.trials.count, u.max
    );
    for (variant, point) in cells {
        let Some(last) = result
            .looks
            .iter()
            .rev()
            .flat_map(|l| &l.cells)
            .find(|c| c.variant == variant && c.point == point)
        else {
            continue;
        };
        let label = result
            .points
            .get(point)
            .map_or_else(|| format!("[{point}]"), |p| p.label.clone());
        let verdicts: Vec<String> = last
            .metrics
            .iter()
            .map(|m| format!("{} {}", m.metric, m.verdict))
            .collect();
        let _ = writeln!(
            out,
            "  {variant:<12} {label:<34} {:>3}/{:<3} trials  {:<13} {}",
            last.n_baseline,
            last.n_candidate,
            last.stopped.map_or("not stopped", |s| s.as_str()),
            verdicts.join(", ")
        );
    }
}

/// Per variant and multi-turn point, each turn's TTFT (nothing for other datasets).
fn turns_section(out: &mut String, result: &RunResult, names: &[String]) {
    for n in names {
        for p in &result.points {
            let rows = overview::turn_rows(result, n, p.index);
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n{n} at {}", p.label);
            overview::render_turns(out, &rows, "  ");
        }
    }
}

/// The reasoning metrics a multi-variant table adds when a request reasoned.
const REASONING_SHOWN: [&str; 4] = [
    "ttfr_p50",
    "ttfa_p50",
    "reasoning_tokens_mean",
    "answer_tokens_mean",
];

/// The table as text, one block per metric.
pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    let names: Vec<String> = result
        .spec
        .spec
        .variants
        .iter()
        .map(|v| v.name.clone())
        .collect();
    let mut shown = result.spec.spec.compare.metrics.clone();
    // A server that reports prefix-cache hits gets its hit ratio shown too.
    let cache = "cache_hit_ratio";
    if !shown.iter().any(|m| m == cache)
        && result
            .trials
            .iter()
            .filter_map(|t| t.summary.as_ref())
            .any(|s| s.tokens.cache_hit_ratio().is_some())
    {
        shown.push(cache.to_owned());
    }
    // A run where a request reasoned gets its times to first reasoning and answer token
    // and its token split shown too (docs/metrics.md, "Reasoning and answer").
    let reasoned = overview::reasoned_at(result, None, None);
    if reasoned {
        for m in REASONING_SHOWN {
            if !shown.iter().any(|s| s == m) {
                shown.push(m.to_owned());
            }
        }
    }
    if names.len() == 1 {
        // One variant: bench_serving's summary (every throughput and latency), plus what
        // else the spec compares.
        out.push_str(&overview::render(result));
        shown.retain(|m| !overview::covers(m, reasoned));
    } else {
        turns_section(&mut out, result, &names);
    }
    for metric in &shown {
        let unit = metrics::metric(metric).map(|m| m.unit).unwrap_or("");
        let _ = writeln!(out, "\n{metric} ({unit}), mean [95% CI] over trials");
        let mut header = format!("  {:<34}", "sweep point");
        for n in &names {
            let _ = write!(header, " {n:>28}");
        }
        let _ = writeln!(out, "{header}");
        for p in &result.points {
            let mut line = format!("  {:<34}", p.label);
            for n in &names {
                let s = match cell(result, n, p.index, metric) {
                    None => "—".to_owned(),
                    Some(CellStat {
                        mean,
                        ci: Some((lo, hi)),
                        ..
                    }) => {
                        format!("{} [{}, {}]", fmt_num(mean), fmt_num(lo), fmt_num(hi))
                    }
                    Some(CellStat { mean, ci: None, n }) => {
                        format!("{} (n={n}, no CI)", fmt_num(mean))
                    }
                };
                let _ = write!(line, " {s:>28}");
            }
            let _ = writeln!(out, "{line}");
        }
    }
    if result
        .spec
        .spec
        .compare
        .metrics
        .iter()
        .any(|m| m.starts_with("itl"))
    {
        batched_section(&mut out, result, &names);
    }
    sequential_section(&mut out, result);
    telemetry_section(&mut out, result, &names);
    // Failed requests are data: a trial that measured with errors says so here, with the
    // counts by kind (its latencies cover only the requests that succeeded).
    let with_errors: Vec<_> = result
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Ok)
        .filter_map(|t| Some((t, t.summary.as_ref()?)))
        .filter(|(_, s)| s.all.failed > 0)
        .collect();
    if !with_errors.is_empty() {
        let _ = writeln!(
            out,
            "\n{} trial(s) had failed requests (counted in error_rate and in every throughput's denominator of time; latencies cover the successful ones):",
            with_errors.len()
        );
        for (t, s) in with_errors {
            let kinds: Vec<String> = s.errors.iter().map(|(k, n)| format!("{k}: {n}")).collect();
            let _ = writeln!(
                out,
                "  #{} {} t={} point [{}]: {} of {} requests failed ({})",
                t.seq + 1,
                t.variant,
                t.trial,
                t.point,
                s.all.failed,
                s.all.requests,
                kinds.join(", ")
            );
        }
    }
    flags_section(&mut out, result);
    let failed = result
        .trials
        .iter()
        .filter(|t| t.status != TrialStatus::Ok)
        .count();
    if failed > 0 {
        let _ = writeln!(out, "\n{failed} trial(s) failed:");
        for t in result.trials.iter().filter(|t| t.status != TrialStatus::Ok) {
            let _ = writeln!(
                out,
                "  #{} {} t={} point [{}]: {}",
                t.seq + 1,
                t.variant,
                t.trial,
                t.point,
                t.failure.as_deref().unwrap_or("?")
            );
        }
    }
    out
}
