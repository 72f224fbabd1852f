//! From runs to the history: runs of one spec name grouped into comparable series by
//! compare's fingerprint rule, then per series, variant, metric and sweep point the run
//! values, their change points and outlier runs (servebench-stats' `changepoint`), whether
//! each change is new since the reference run, and the baseline variant's state.

use std::collections::BTreeMap;

use servebench_compare::fingerprint;
use servebench_result::table;
use servebench_spec::metrics::{self, Direction as SpecDirection};
use servebench_stats::changepoint::{self, ChangePoint, Detection, Status};
use servebench_stats::flags::FingerprintDifference;
use servebench_stats::verdict::Scale;
use servebench_stats::{ConfidenceInterval, Direction, Estimate};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::HistoryError;
use crate::load::LoadedRun;
use crate::model::{
    BaselineState, Cell, ChangeReport, Effect, OutlierReport, RunInfo, RunRef, RunValues, Series,
    SeriesBreak, SpecHistory,
};
use crate::words;

/// Choices for [`crate::history`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryOptions {
    /// Metrics (default: each series' `spec.compare.metrics`, of its newest run).
    pub metrics: Option<Vec<String>>,
    /// Level of the change-point tests (default: the spec's `compare.alpha`).
    pub alpha: Option<f64>,
    /// The reference run, by run id or file as read: changes not confirmed as of it are
    /// new (default: the second newest run of each spec).
    pub since: Option<String>,
    /// The instant ages are counted from (default: now).
    pub now: Option<OffsetDateTime>,
}

/// The serde name of a unit enum value.
fn serde_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "unknown".into(),
    }
}

/// Why `cur` is not comparable with `prev`: compare's fingerprint differences, and the
/// spec hash when the spec itself changed.
fn break_between(prev: &LoadedRun, cur: &LoadedRun) -> Vec<FingerprintDifference> {
    let (mut diffs, _) = fingerprint::compare(&prev.result, &cur.result);
    if prev.result.spec_hash != cur.result.spec_hash {
        diffs.push(FingerprintDifference {
            field: "spec_hash".into(),
            baseline: prev.result.spec_hash.clone(),
            candidate: cur.result.spec_hash.clone(),
        });
    }
    diffs
}

/// Split the runs of one spec (oldest first) where a run is not comparable with the one
/// before it.
fn split(runs: &[&LoadedRun]) -> Vec<(Option<SeriesBreak>, Vec<usize>)> {
    let mut out: Vec<(Option<SeriesBreak>, Vec<usize>)> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let diffs = if i == 0 {
            Vec::new()
        } else {
            break_between(runs[i - 1], r)
        };
        match out.last_mut() {
            Some((_, members)) if diffs.is_empty() => members.push(i),
            _ => {
                let starts = (i > 0).then(|| SeriesBreak {
                    previous_run: runs[i - 1].result.run_id.clone(),
                    differences: diffs,
                });
                out.push((starts, vec![i]));
            }
        }
    }
    out
}

/// The sweep keys that vary across `labels` (`c=16`), or the first key when none does.
fn short_labels(labels: &[String]) -> Vec<String> {
    let toks: Vec<Vec<&str>> = labels
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let width = toks.iter().map(Vec::len).max().unwrap_or(0);
    let varying: Vec<usize> = (0..width)
        .filter(|&i| toks.iter().any(|t| t.get(i) != toks[0].get(i)))
        .collect();
    toks.iter()
        .map(|t| {
            let keep: Vec<&str> = if varying.is_empty() {
                t.iter().take(1).copied().collect()
            } else {
                varying.iter().filter_map(|&i| t.get(i).copied()).collect()
            };
            keep.join(" ")
        })
        .collect()
}

fn run_ref(runs: &[RunInfo], index: usize) -> RunRef {
    RunRef {
        index,
        number: runs[index].number,
        run_id: runs[index].run_id.clone(),
        created_at: runs[index].created_at.clone(),
    }
}

/// One cell's change points and outlier runs, from its run values (one per run).
fn detect(values: &[f64], alpha: f64) -> Detection {
    let settings = changepoint::Settings {
        alpha,
        ..changepoint::Settings::default()
    };
    changepoint::detect(values, &settings).unwrap_or_default()
}

fn effect(direction: Option<Direction>, up: bool) -> Effect {
    match (direction, up) {
        (Some(Direction::HigherIsBetter), true) | (Some(Direction::LowerIsBetter), false) => {
            Effect::Better
        }
        (Some(_), _) => Effect::Worse,
        (None, _) => Effect::Moved,
    }
}

/// The shift of a change point on the cell's scale.
fn shift_of(cp: &ChangePoint, scale: Scale) -> Estimate {
    let s = &cp.shift;
    let f = |x: f64| if scale == Scale::Log { x.exp() } else { x };
    Estimate {
        point: f(s.diff),
        ci: ConfidenceInterval {
            level: s.ci.level,
            lower: f(s.ci.lower),
            upper: f(s.ci.upper),
        },
        std_err: s.std_err,
    }
}

/// The analysis of one cell: its runs in series order and the value per run.
#[allow(clippy::too_many_arguments)]
fn cell(
    runs: &[RunInfo],
    members: &[&LoadedRun],
    variant: &str,
    metric: &str,
    point: &str,
    label: &str,
    alpha: f64,
    as_of: Option<usize>,
) -> Option<Cell> {
    let m = metrics::metric(metric)?;
    let mut rows: Vec<RunValues> = Vec::new();
    for (index, r) in members.iter().enumerate() {
        let Some(p) = r.result.points.iter().find(|p| p.label == point) else {
            continue;
        };
        let values = table::trial_values(&r.result, variant, p.index, metric);
        let Some(stat) = table::cell(&r.result, variant, p.index, metric) else {
            continue;
        };
        rows.push(RunValues {
            index,
            values,
            mean: stat.mean,
            ci: stat.ci.map(|(lower, upper)| ConfidenceInterval {
                level: 0.95,
                lower,
                upper,
            }),
        });
    }
    if rows.is_empty() {
        return None;
    }
    let log = !m.can_be_zero && rows.iter().all(|r| r.values.iter().all(|v| *v > 0.0));
    let scale = if log { Scale::Log } else { Scale::Arithmetic };
    let value = |r: &RunValues| {
        let n = r.values.len() as f64;
        if log {
            r.values.iter().map(|v| v.ln()).sum::<f64>() / n
        } else {
            r.values.iter().sum::<f64>() / n
        }
    };
    let values: Vec<f64> = rows.iter().map(value).collect();
    let direction = match m.direction {
        SpecDirection::HigherIsBetter => Some(Direction::HigherIsBetter),
        SpecDirection::LowerIsBetter => Some(Direction::LowerIsBetter),
        SpecDirection::Neutral => None,
    };
    let full = detect(&values, alpha);
    // As of the reference run: the runs up to it.
    let upto = as_of.map_or(0, |a| rows.iter().take_while(|r| r.index <= a).count());
    let earlier = if upto == rows.len() {
        full.clone()
    } else {
        detect(&values[..upto], alpha)
    };
    let confirmed_then: Vec<(usize, bool)> = earlier
        .change_points
        .iter()
        .filter(|c| c.status == Status::Confirmed)
        .map(|c| (c.index, c.shift.diff > 0.0))
        .collect();
    let series_index = |pos: usize| rows[pos].index;
    let change_points = full
        .change_points
        .iter()
        .map(|cp| {
            let up = cp.shift.diff > 0.0;
            let known = cp.status == Status::Confirmed
                && confirmed_then
                    .iter()
                    .any(|&(i, u)| u == up && i.abs_diff(cp.index) <= 1);
            let first = series_index(cp.index);
            let last = cp.before.last().map_or(first, |&p| series_index(p));
            ChangeReport {
                first_run_after: run_ref(runs, first),
                last_run_before: run_ref(runs, last),
                status: cp.status,
                rule: cp.rule,
                shift: shift_of(cp, scale),
                p_value: cp.shift.p,
                runs_before: cp.before.len(),
                runs_after: cp.after.len(),
                effect: effect(direction, up),
                new: !known,
            }
        })
        .collect();
    let outliers = full
        .outliers
        .iter()
        .map(|o| OutlierReport {
            run: run_ref(runs, series_index(o.index)),
            shift: if log { o.shift.exp() } else { o.shift },
        })
        .collect();
    Some(Cell {
        variant: variant.to_owned(),
        metric: metric.to_owned(),
        unit: m.unit.to_owned(),
        direction,
        scale,
        point: point.to_owned(),
        label: label.to_owned(),
        runs: rows,
        change_points,
        outliers,
    })
}

/// Days between two RFC 3339 instants (0 when unreadable).
fn days_between(from: &str, to: OffsetDateTime) -> f64 {
    OffsetDateTime::parse(from, &Rfc3339)
        .map(|t| (to - t).as_seconds_f64() / 86_400.0)
        .unwrap_or(0.0)
}

/// The baseline variant's state at one cell.
fn baseline_state(c: &Cell, runs: &[RunInfo], now: OffsetDateTime) -> Option<BaselineState> {
    let newest = c.runs.last()?;
    let moved = c.change_points.last().filter(|cp| cp.new).cloned();
    let latest_run = match &moved {
        Some(cp) => cp.last_run_before.clone(),
        None => run_ref(runs, newest.index),
    };
    let level_since = c
        .change_points
        .iter()
        .filter(|cp| cp.first_run_after.index <= latest_run.index)
        .map(|cp| cp.first_run_after.clone())
        .next_back()
        .unwrap_or_else(|| run_ref(runs, c.runs[0].index));
    let age_days = days_between(&latest_run.created_at, now);
    let message = words::baseline_message(c, &latest_run, age_days, &level_since, moved.as_ref());
    Some(BaselineState {
        metric: c.metric.clone(),
        point: c.point.clone(),
        label: c.label.clone(),
        latest_run,
        age_days,
        level_since,
        moved,
        message,
    })
}

/// The reference run of a spec's runs (oldest first): `since` when it names one of them,
/// else the second newest. `Ok(None)`: a single run.
fn reference(runs: &[&LoadedRun], since: Option<&str>) -> Option<usize> {
    if let Some(s) = since
        && let Some(i) = runs
            .iter()
            .position(|r| r.result.run_id == s || r.file == s || r.file.ends_with(&format!("/{s}")))
    {
        return Some(i);
    }
    runs.len().checked_sub(2)
}

/// The history of the runs of one spec name (oldest first).
pub(crate) fn spec_history(
    name: &str,
    runs: &[&LoadedRun],
    opts: &HistoryOptions,
    now: OffsetDateTime,
) -> Result<SpecHistory, HistoryError> {
    let reference_at = reference(runs, opts.since.as_deref());
    let mut series = Vec::new();
    let mut offset = 0;
    for (number, (starts, members)) in split(runs).into_iter().enumerate() {
        let members: Vec<&LoadedRun> = members.iter().map(|&i| runs[i]).collect();
        let infos: Vec<RunInfo> = members
            .iter()
            .enumerate()
            .map(|(i, r)| RunInfo {
                number: offset + i + 1,
                run_id: r.result.run_id.clone(),
                file: r.file.clone(),
                created_at: r.result.created_at.clone(),
                spec_hash: r.result.spec_hash.clone(),
                status: serde_name(&r.result.status),
                repo_sha: r.result.repo.as_ref().map(|g| g.sha.clone()),
                commit: r.commit.clone(),
            })
            .collect();
        // The runs of this series known as of the reference run: `None` when the
        // reference precedes the series (every change in it is new).
        let as_of = match reference_at {
            Some(g) if g < offset => None,
            Some(g) => Some(g - offset),
            None => Some(usize::MAX),
        };
        let newest = &members[members.len() - 1].result;
        let spec = &newest.spec.spec;
        let alpha = opts.alpha.unwrap_or(spec.compare.alpha);
        if !(alpha > 0.0 && alpha < 0.5) {
            return Err(HistoryError::InvalidSetting {
                name: "alpha",
                value: alpha,
                why: "must be in (0, 0.5)",
            });
        }
        let metric_names = opts
            .metrics
            .clone()
            .unwrap_or_else(|| spec.compare.metrics.clone());
        for m in &metric_names {
            if metrics::metric(m).is_none() {
                return Err(HistoryError::UnknownMetric { name: m.clone() });
            }
        }
        let mut variants: Vec<String> = spec.variants.iter().map(|v| v.name.clone()).collect();
        let mut labels: Vec<String> = Vec::new();
        for r in &members {
            for v in &r.result.spec.spec.variants {
                if !variants.contains(&v.name) {
                    variants.push(v.name.clone());
                }
            }
            for p in &r.result.points {
                if !labels.contains(&p.label) {
                    labels.push(p.label.clone());
                }
            }
        }
        let shorts = short_labels(&labels);
        let mut cells = Vec::new();
        for variant in &variants {
            for m in &metric_names {
                for (point, label) in labels.iter().zip(&shorts) {
                    cells.extend(cell(
                        &infos, &members, variant, m, point, label, alpha, as_of,
                    ));
                }
            }
        }
        let baseline_variant = spec
            .variants
            .iter()
            .find(|v| v.baseline)
            .map(|v| v.name.clone());
        let baseline = cells
            .iter()
            .filter(|c| Some(&c.variant) == baseline_variant.as_ref())
            .filter_map(|c| baseline_state(c, &infos, now))
            .collect();
        offset += members.len();
        series.push(Series {
            number: number + 1,
            starts,
            runs: infos,
            baseline_variant,
            cells,
            baseline,
        });
    }
    Ok(SpecHistory {
        spec_name: name.to_owned(),
        reference: reference_at.map(|i| runs[i].result.run_id.clone()),
        series,
    })
}

/// Group runs (oldest first) by spec name, in order of each name's first run.
pub(crate) fn by_spec(runs: &[LoadedRun]) -> Vec<(String, Vec<&LoadedRun>)> {
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<&LoadedRun>> = BTreeMap::new();
    for r in runs {
        if !groups.contains_key(&r.result.spec_name) {
            order.push(r.result.spec_name.clone());
        }
        groups
            .entry(r.result.spec_name.clone())
            .or_default()
            .push(r);
    }
    order
        .into_iter()
        .map(|n| {
            let g = groups.remove(&n).unwrap_or_default();
            (n, g)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_labels_keep_the_varying_keys() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            short_labels(&l(&["c=1 rate=inf in=32", "c=16 rate=inf in=32"])),
            l(&["c=1", "c=16"])
        );
        assert_eq!(short_labels(&l(&["c=16 rate=inf in=32"])), l(&["c=16"]));
    }
}
