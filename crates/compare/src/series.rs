//! The series view of a comparison across runs: what the baseline run's own series of runs
//! says about it. Every comparison across runs raises `stale-baseline` (the variance between
//! sessions is missing from the interval); when the baseline variant's series moved for good
//! after the baseline run — a confirmed step, found by servebench-history among the result
//! files next to the baseline's (docs/history.md) — the flag's evidence says so, with the
//! step's size, interval and first run.
//!
//! This crate does not read the series: servebench-history (above it) finds the steps and
//! the binary hands them over as [`BaselineSeries`] in [`crate::CompareOptions`].

use serde::{Deserialize, Serialize};
use servebench_stats::Estimate;
use servebench_stats::flags::{Flag, FlagId};

use crate::text::{num, signed_pct};

/// The series the baseline run belongs to, as far as it concerns the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineSeries {
    /// Where the series was read (a folder, files, a git range), for messages.
    pub source: String,
    /// Runs of the series (the baseline run among them).
    pub runs: usize,
    /// Confirmed steps of the baseline variant whose first run is later than the baseline
    /// run, at the compared metrics and points.
    pub steps: Vec<SeriesStep>,
}

/// One confirmed step after the baseline run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesStep {
    /// Catalogue name of the metric.
    pub metric: String,
    /// The sweep point's full label, as in the result file.
    pub point: String,
    /// The variant whose series stepped.
    pub variant: String,
    /// After / before as a ratio of geometric means with its 95% interval (metrics compared
    /// on the log scale), else the difference of means.
    pub shift: Estimate,
    /// Whether `shift` is a ratio (`true`) or a difference.
    pub ratio: bool,
    /// Run id of the first run after the step.
    pub first_run: String,
    /// Its start time (UTC RFC 3339).
    pub first_run_at: String,
    /// Runs at the new level, the first included.
    pub runs_after: usize,
}

impl SeriesStep {
    /// `+8.0% [+5.0%, +11.0%]` (ratio) or `+1.5 [0.5, 2.5]` (difference).
    pub fn size(&self) -> String {
        let e = &self.shift;
        if self.ratio {
            format!(
                "{} [{}, {}]",
                signed_pct(e.point - 1.0),
                signed_pct(e.ci.lower - 1.0),
                signed_pct(e.ci.upper - 1.0)
            )
        } else {
            format!(
                "{:+} [{}, {}]",
                num(e.point),
                num(e.ci.lower),
                num(e.ci.upper)
            )
        }
    }
}

/// The steps of `metrics` among `points` (full labels) in words, or `None` when there is
/// none.
fn evidence(series: &BaselineSeries, metrics: &[&str], points: &[String]) -> Option<String> {
    let steps: Vec<String> = series
        .steps
        .iter()
        .filter(|s| metrics.contains(&s.metric.as_str()) && points.contains(&s.point))
        .map(|s| {
            format!(
                "`{}` at {}: {} from run `{}` ({}) on, {} run(s) at the new level",
                s.variant,
                s.point,
                s.size(),
                s.first_run,
                s.first_run_at,
                s.runs_after
            )
        })
        .collect();
    (!steps.is_empty()).then(|| {
        format!(
            "The baseline run is older than a confirmed step in its own series ({} runs in \
             {}): {}.",
            series.runs,
            series.source,
            steps.join("; ")
        )
    })
}

/// Add the steps of every compared metric (`metrics`) to each `stale-baseline` flag among
/// `flags` (every metric's copy), in one sentence that every copy shares (so the report prints the flag once, not once per
/// metric with a step); returns whether there were any.
pub(crate) fn extend_flags<'a>(
    flags: impl Iterator<Item = &'a mut Flag>,
    series: &BaselineSeries,
    metrics: &[&str],
    points: &[String],
) -> bool {
    let Some(text) = evidence(series, metrics, points) else {
        return false;
    };
    for f in flags.filter(|f| f.id == FlagId::StaleBaseline) {
        f.evidence = format!("{}. {text}", f.evidence.trim_end_matches('.'));
        f.action = format!(
            "{}. Re-baseline: the baseline variant's level moved after the baseline run.",
            f.action.trim_end_matches('.')
        );
    }
    true
}

#[cfg(test)]
mod tests {
    use servebench_stats::ConfidenceInterval;

    use super::*;

    #[test]
    fn the_step_is_written_with_its_interval_and_first_run() {
        let series = BaselineSeries {
            source: "results/x".into(),
            runs: 12,
            steps: vec![SeriesStep {
                metric: "output_throughput".into(),
                point: "c=4".into(),
                variant: "base".into(),
                shift: Estimate {
                    point: 1.08,
                    ci: ConfidenceInterval {
                        level: 0.95,
                        lower: 1.05,
                        upper: 1.11,
                    },
                    std_err: 0.01,
                },
                ratio: true,
                first_run: "R9".into(),
                first_run_at: "2026-11-20T10:00:00Z".into(),
                runs_after: 2,
            }],
        };
        let e = evidence(&series, &["output_throughput"], &["c=4".into()]).expect("a step");
        assert!(e.contains("+8.0% [+5.0%, +11.0%] from run `R9`"), "{e}");
        assert!(evidence(&series, &["ttft_p50"], &["c=4".into()]).is_none());
        assert!(evidence(&series, &["output_throughput"], &["c=8".into()]).is_none());
    }
}
