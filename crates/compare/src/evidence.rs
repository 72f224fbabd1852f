//! From result files to the plain evidence the stats crate reads: sweep points matched
//! between the arms with short labels, per-trial values in run order, and per-trial validity
//! checks. Failed trials and failed requests are kept as evidence, never dropped silently.

use servebench_spec::metrics::{Aggregate, Metric};
use servebench_stats::flags::{ArmEvidence, TrialCheck};
use servebench_stats::nested::start_values;

use servebench_result::{PointInfo, RunResult, TrialResult, TrialStatus};

/// One sweep point present in both arms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PointPair {
    /// Short label: the sweep keys that vary (`c=16`, `c=16 in=512`).
    pub label: String,
    /// Full label in the baseline's file.
    pub point_label: String,
    /// Key of the sweep axis (`c`, `rate`, `in`, `out`).
    pub axis: String,
    /// The axis value as written (`16`, `unlimited`).
    pub axis_value: String,
    /// The axis value as a number, to order the sweep.
    pub level: f64,
    /// The other varying keys (`in=512`), empty when only one key varies.
    pub group: String,
    /// Concurrency limit of the point.
    pub max_concurrency: Option<u32>,
    /// Fixed output length of the point.
    pub output_tokens: Option<u32>,
    /// Point index in the baseline's file.
    pub base_point: usize,
    /// Point index in the candidate's file.
    pub cand_point: usize,
}

/// `key=value` tokens of a point label (`c=16 rate=inf in=512 out=128`).
fn tokens(label: &str) -> Vec<(String, String)> {
    label
        .split_whitespace()
        .map(|t| match t.split_once('=') {
            Some((k, v)) => (k.to_owned(), v.to_owned()),
            None => (t.to_owned(), String::new()),
        })
        .collect()
}

/// An axis value as a number: `unlimited` and `inf` sort last, `16..32` by its start.
fn level_of(value: &str, fallback: usize) -> f64 {
    if value == "unlimited" || value == "inf" {
        return 1e15;
    }
    let head = value.split("..").next().unwrap_or(value);
    head.parse::<f64>().unwrap_or(fallback as f64)
}

/// Points of `base` that `cand` also has (matched by their full label, which spells out
/// every sweep key), and a note for every point only one side has.
pub(crate) fn match_points(base: &RunResult, cand: &RunResult) -> (Vec<PointPair>, Vec<String>) {
    let mut notes = Vec::new();
    let mut matched: Vec<(&PointInfo, &PointInfo)> = Vec::new();
    for b in &base.points {
        match cand.points.iter().find(|c| c.label == b.label) {
            Some(c) => matched.push((b, c)),
            None => notes.push(format!(
                "point `{}` is only in the baseline's file: not compared",
                b.label
            )),
        }
    }
    for c in &cand.points {
        if !base.points.iter().any(|b| b.label == c.label) {
            notes.push(format!(
                "point `{}` is only in the candidate's file: not compared",
                c.label
            ));
        }
    }
    let toks: Vec<Vec<(String, String)>> = matched.iter().map(|(b, _)| tokens(&b.label)).collect();
    let keys: Vec<String> = toks
        .first()
        .map(|t| t.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let varying: Vec<usize> = (0..keys.len())
        .filter(|&i| {
            let first = toks[0].get(i).map(|t| &t.1);
            toks.iter().any(|t| t.get(i).map(|t| &t.1) != first)
        })
        .collect();
    let axis_index = varying.first().copied().unwrap_or(0);
    let pairs = matched
        .iter()
        .zip(&toks)
        .enumerate()
        .map(|(pos, ((b, c), t))| {
            let (axis, axis_value) = t.get(axis_index).cloned().unwrap_or_default();
            let shown: Vec<String> = if varying.is_empty() {
                vec![format!("{axis}={axis_value}")]
            } else {
                varying
                    .iter()
                    .filter_map(|&i| t.get(i).map(|(k, v)| format!("{k}={v}")))
                    .collect()
            };
            PointPair {
                label: shown.join(" "),
                point_label: b.label.clone(),
                level: level_of(&axis_value, pos),
                group: shown.get(1..).map(|g| g.join(" ")).unwrap_or_default(),
                axis,
                axis_value,
                max_concurrency: b.max_concurrency,
                output_tokens: b.output_tokens,
                base_point: b.index,
                cand_point: c.index,
            }
        })
        .collect();
    (pairs, notes)
}

/// A trial that failed (status `failed`): it has no values but stays in the report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FailedTrial {
    /// Position among the arm's trials at this point, in run order, from 0.
    pub position: usize,
    /// Repetition index t (from 1).
    pub trial: u32,
    /// Why it failed.
    pub reason: String,
}

/// One arm at one point, for one metric.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ArmPoint {
    /// Values in run order, validity checks and (no) history.
    pub evidence: ArmEvidence,
    /// Failed trials.
    pub failed: Vec<FailedTrial>,
}

/// The trials of `variant` at `point`, in run order.
fn arm_trials<'a>(result: &'a RunResult, variant: &str, point: usize) -> Vec<&'a TrialResult> {
    let mut v: Vec<&TrialResult> = result
        .trials
        .iter()
        .filter(|t| t.variant == variant && t.point == point)
        .collect();
    v.sort_by_key(|t| t.seq);
    v
}

/// Every server start of `variant` passed its verify rules, at least one rule each (the
/// `implausible` rule reads it: the variant was shown to be in effect).
fn verified(result: &RunResult, variant: &str) -> bool {
    let mut starts = result
        .servers
        .iter()
        .filter(|s| s.variant == variant)
        .peekable();
    starts.peek().is_some()
        && starts.all(|s| !s.verify.is_empty() && s.verify.iter().all(|v| v.passed))
}

/// Output tokens received over output tokens requested, when the point fixes the output
/// length and every successful request was checked against it.
fn output_token_ratio(t: &TrialResult, output_tokens: Option<u32>) -> Option<f64> {
    let s = t.summary.as_ref()?;
    let fixed = f64::from(output_tokens?);
    let completed = s.all.completed;
    if completed == 0 || s.tokens.output_length_checked != completed {
        return None;
    }
    let received = s.tokens.usage_output_tokens + s.tokens.client_output_tokens_without_usage;
    Some(received as f64 / (fixed * completed as f64))
}

/// Evidence of `variant` at `point` of `result` for `metric`: the values of the trials
/// with status `ok` in run order (the trials `servebench_result::table::trial_values`
/// reads) and one validity check per trial with a summary, each pointing at its value; only
/// trials of repetition `up_to` or earlier when given (a sequential cell read at its stopping
/// look).
pub(crate) fn arm_point(
    result: &RunResult,
    variant: &str,
    point: usize,
    output_tokens: Option<u32>,
    metric: &Metric,
    up_to: Option<u32>,
) -> ArmPoint {
    let quantile = match metric.aggregate {
        Aggregate::Quantile(q) => Some(q),
        _ => None,
    };
    let mut out = ArmPoint::default();
    out.evidence.verified = verified(result, variant);
    let trials = arm_trials(result, variant, point)
        .into_iter()
        .filter(|t| up_to.is_none_or(|u| t.trial <= u));
    // The unit is the start (docs/statistics-method.md, "Nested designs"): the trials of
    // one repetition t share a server start (with `trials.per_start` k > 1, k of them), and
    // the arm's values are one per start — the geometric mean of its trials on the log scale,
    // the mean on the arithmetic one. One trial per start keeps its value bit for bit.
    let mut values: Vec<f64> = Vec::new();
    let mut keys: Vec<u32> = Vec::new();
    for (position, t) in trials.enumerate() {
        if t.status == TrialStatus::Failed {
            out.failed.push(FailedTrial {
                position,
                trial: t.trial,
                reason: t
                    .failure
                    .clone()
                    .unwrap_or_else(|| "no reason recorded".into()),
            });
        }
        let Some(s) = &t.summary else { continue };
        let value = (t.status == TrialStatus::Ok)
            .then(|| s.metric(&metric.name))
            .flatten()
            .filter(|v| v.is_finite());
        let value_index = value.map(|v| {
            values.push(v);
            keys.push(t.trial);
            start_index(&keys, t.trial)
        });
        out.evidence.trials.push(TrialCheck {
            trial: position,
            value_index,
            errors: s.all.failed as u64,
            peak_concurrency: Some(s.all.peak_concurrency as u64),
            max_concurrency: s.max_concurrency.map(|m| m as u64),
            achieved_rate: s.achieved_rate,
            target_rate: s.scheduled_rate,
            output_token_ratio: output_token_ratio(t, output_tokens),
            requests: s.all.completed as u64,
            reported_quantile: quantile,
            within_trial_trend: None,
            limit_held_fraction: s.limit_held_fraction,
        });
    }
    out.evidence.trial_values = start_values(&values, &keys, !metric.can_be_zero);
    out
}

/// The index of start `t` among the distinct starts of `keys`, in order of appearance.
fn start_index(keys: &[u32], t: u32) -> usize {
    let mut seen: Vec<u32> = Vec::new();
    for k in keys {
        if !seen.contains(k) {
            seen.push(*k);
        }
    }
    seen.iter().position(|k| *k == t).unwrap_or(0)
}

/// Trials of `variant` recorded in `result` and trials its plan has.
pub(crate) fn trial_counts(result: &RunResult, variant: &str) -> (usize, usize) {
    let recorded = result
        .trials
        .iter()
        .filter(|t| t.variant == variant)
        .count();
    let planned = result.points.len()
        * result.spec.spec.trials.count as usize
        * result.spec.spec.trials.per_start.max(1) as usize;
    (recorded, planned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_sort_unlimited_last() {
        assert_eq!(level_of("16", 0), 16.0);
        assert_eq!(level_of("16..32", 0), 16.0);
        assert!(level_of("unlimited", 0) > 1e9);
        assert_eq!(level_of("file", 3), 3.0);
    }

    #[test]
    fn tokens_split_keys() {
        assert_eq!(
            tokens("c=1 rate=inf"),
            vec![("c".into(), "1".into()), ("rate".into(), "inf".into())]
        );
    }
}
