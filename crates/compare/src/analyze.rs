//! One metric over the sweep: the stats crate's comparison of every point (the verdicts),
//! its flags (`assess_sweep`) and which cells they threaten, failed trials, crossovers in
//! words, and the advice for the undecided cells.

use servebench_stats::advice::settle;
use servebench_stats::flags::sweep::decided_side;
use servebench_stats::flags::{
    Analysis, ArmEvidence, ComparisonContext, Flag, FlagId, FlagLevel, MetricSettings, NamedP,
    PointComparison, RuleSettings, Side, Threat, Threatens, assess_sweep,
};
use servebench_stats::interval::{geometric_mean_ci, mean_ci};
use servebench_stats::sequential::Look;
use servebench_stats::verdict::{Margin, Scale};
use servebench_stats::{Direction, Estimate};

use super::evidence::{ArmPoint, PointPair};
use super::report::{CellAdvice, CrossoverReport, MetricReport, PointReport, Region, VerdictKind};
use super::words::{describe_regions, region_phrase};

/// What the analysis needs to know about one metric.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MetricSpec {
    /// Catalogue name.
    pub name: String,
    /// Unit.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// Arithmetic analysis (the metric can be 0).
    pub can_be_zero: bool,
    /// Practical threshold θ.
    pub threshold: f64,
}

impl MetricSpec {
    /// As the levels read it, for a metric on the log scale (`None` for one that can be 0).
    pub(crate) fn level_metric(&self) -> Option<crate::levels::LevelMetric> {
        (!self.can_be_zero).then(|| crate::levels::LevelMetric {
            name: self.name.clone(),
            unit: self.unit.clone(),
            direction: self.direction,
            threshold: self.threshold,
        })
    }
}

/// One point's input: the matched point and both arms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PointInput {
    /// The point.
    pub pair: PointPair,
    /// Baseline arm.
    pub base: ArmPoint,
    /// Candidate arm.
    pub cand: ArmPoint,
    /// For a cell of a sequential run: the look it stopped at.
    pub look: Option<Look>,
}

pub(crate) fn settings_for(spec: &MetricSpec, baseline_mean_is_zero: bool) -> MetricSettings {
    let analysis = if !spec.can_be_zero {
        Analysis::Log {
            threshold: spec.threshold,
        }
    } else if spec.name == "error_rate" || baseline_mean_is_zero {
        Analysis::Arithmetic {
            margin: Margin::Absolute(spec.threshold),
        }
    } else {
        Analysis::Arithmetic {
            margin: Margin::Relative(spec.threshold),
        }
    };
    MetricSettings {
        name: spec.name.clone(),
        direction: spec.direction,
        analysis,
    }
}

/// Flags about failed trials (no values: they are excluded from the means but never
/// silently): one invalid-trial flag per failed trial. A missing value could change any
/// verdict, so these are always re-baseline.
fn failed_trial_flags(metric: &str, input: &PointInput, p: &PointComparison) -> Vec<Flag> {
    let mut flags = Vec::new();
    for (arm, side) in [("baseline", &input.base), ("candidate", &input.cand)] {
        for f in &side.failed {
            flags.push(Flag {
                id: FlagId::InvalidTrial,
                level: FlagLevel::ReBaseline,
                threatens: Threatens::Cells(vec![Threat {
                    metric: metric.to_owned(),
                    point: input.pair.label.clone(),
                    verdict: p.verdict(),
                    otherwise: None,
                }]),
                evidence: format!(
                    "{metric} at {}, {arm} trial {} (t={}): the trial failed ({}); its values \
                     are left out, so the arm has {} trial(s) with a value",
                    input.pair.label,
                    f.position,
                    f.trial,
                    f.reason,
                    side.evidence.trial_values.len()
                ),
                action: "fix the cause in the server log and re-run the run (`servebench run \
                         --resume` measures only missing trials, not failed ones)"
                    .into(),
            });
        }
    }
    flags
}

/// Ids of the flags that threaten the cell `metric` at `point` (cell-scoped flags only).
pub(crate) fn cell_flag_ids<'a>(
    flags: impl IntoIterator<Item = &'a Flag>,
    metric: &str,
    point: &str,
) -> Vec<FlagId> {
    let mut ids: Vec<FlagId> = flags
        .into_iter()
        .filter(|f| match &f.threatens {
            Threatens::Cells(cells) => cells.iter().any(|c| c.metric == metric && c.point == point),
            Threatens::Comparison => false,
        })
        .map(|f| f.id)
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Regions of adjacent decided points (improved, regressed) on one side, `points` in sweep
/// order.
fn regions(points: &[(&PointPair, &PointComparison)]) -> Vec<Region> {
    let mut out: Vec<Region> = Vec::new();
    for (pair, p) in points {
        let side = match decided_side(p.verdict()) {
            1 => Side::Better,
            -1 => Side::Worse,
            _ => continue,
        };
        match out.last_mut() {
            Some(r) if r.side == side => r.to.clone_from(&pair.axis_value),
            _ => out.push(Region {
                from: pair.axis_value.clone(),
                to: pair.axis_value.clone(),
                side,
            }),
        }
    }
    out
}

/// An arm's own mean and CI, for a point whose comparison could not be computed (the other
/// arm has too few values).
fn own_estimate(arm: &ArmEvidence, scale: Scale, level: f64) -> Option<Estimate> {
    match scale {
        Scale::Log => geometric_mean_ci(&arm.trial_values, level).ok(),
        Scale::Arithmetic => mean_ci(&arm.trial_values, level).ok(),
    }
}

fn report_point(
    pair: &PointPair,
    input: &PointInput,
    p: &PointComparison,
    scale: Scale,
    level: f64,
) -> PointReport {
    let c = p.comparison.as_ref();
    let verdict = VerdictKind::of(c.map(|c| c.verdict));
    let mde = c.map(|c| match c.scale {
        Scale::Log => c.mde.exp_m1(),
        Scale::Arithmetic => c.mde,
    });
    PointReport {
        label: pair.label.clone(),
        point_label: pair.point_label.clone(),
        max_concurrency: pair.max_concurrency,
        n_baseline: p.baseline.trial_values.len(),
        n_candidate: p.candidate.trial_values.len(),
        failed_trials_baseline: input.base.failed.len(),
        failed_trials_candidate: input.cand.failed.len(),
        baseline: c
            .map(|c| c.baseline)
            .or_else(|| own_estimate(&p.baseline, scale, level)),
        candidate: c
            .map(|c| c.candidate)
            .or_else(|| own_estimate(&p.candidate, scale, level)),
        effect: c.map(|c| c.effect),
        margin: c.map(|c| c.margin),
        p: c.map(|c| c.test.p),
        p_holm: None,
        verdict,
        cv_baseline: c.and_then(|c| c.cv_baseline),
        cv_candidate: c.and_then(|c| c.cv_candidate),
        mde,
        sequential: None,
        flags: Vec::new(),
        error: p.comparison_error.clone(),
    }
}

/// Advice for the undecided cells of `points`, in sweep order.
fn advice(points: &[(&PointPair, &PointComparison)]) -> Vec<CellAdvice> {
    points
        .iter()
        .filter_map(|(pair, p)| {
            let c = p.comparison.as_ref()?;
            Some(CellAdvice {
                point: pair.label.clone(),
                verdict: VerdictKind::of(Some(c.verdict)),
                change: Some(match c.scale {
                    Scale::Log => c.effect.point - 1.0,
                    Scale::Arithmetic => c.effect.point,
                }),
                settle: settle(c)?,
            })
        })
        .collect()
}

/// Why a sign change is not a crossover: not one interleaved run, or re-baseline flags on
/// the cells that carry it.
fn unsound_because(context: &ComparisonContext, flags: &[Flag]) -> String {
    let mut ids: Vec<&str> = flags
        .iter()
        .filter(|f| f.level == FlagLevel::ReBaseline)
        .map(|f| f.id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let cause = if !context.same_run {
        "the arms come from different runs".to_owned()
    } else if !context.interleaved {
        "the arms were not interleaved in the run".to_owned()
    } else {
        format!(
            "the cells that carry it have re-baseline flags ({})",
            ids.join(", ")
        )
    };
    format!(
        "{cause}: the sign change stays a sweep-inconsistent flag until both arms are \
         re-measured cleanly"
    )
}

/// The comparison of one metric at one point, at the cell's own α (or at its look).
fn point_comparison(spec: &MetricSpec, i: &PointInput, alpha: f64) -> PointComparison {
    let zero = spec.can_be_zero
        && !i.base.evidence.trial_values.is_empty()
        && i.base.evidence.trial_values.iter().all(|v| *v == 0.0);
    PointComparison::at(
        i.pair.label.clone(),
        i.pair.level,
        i.base.evidence.clone(),
        i.cand.evidence.clone(),
        &settings_for(spec, zero),
        alpha,
        i.look,
    )
}

/// Every cell's p-value and verdict at its own α, for the correction for many tests (what
/// `analyze_metric` returns as its second value, without the flags).
pub(crate) fn cell_tests(spec: &MetricSpec, inputs: &[PointInput], alpha: f64) -> Vec<NamedP> {
    inputs
        .iter()
        .filter_map(|i| {
            let c = point_comparison(spec, i, alpha).comparison?;
            Some(NamedP {
                metric: spec.name.clone(),
                point: i.pair.label.clone(),
                verdict: c.verdict,
                p: c.test.p,
            })
        })
        .collect()
}

/// Holm's level of each cell, by (metric, short point label).
pub(crate) type CellLevels = std::collections::BTreeMap<(String, String), f64>;

/// Compare one metric over every point of `inputs` (one or more sweeps, grouped by
/// `PointPair::group`), each cell's test read at its level in `levels` when given (the
/// correction for many tests). Returns the report and the p-values for the multiplicity
/// rule.
pub(crate) fn analyze_metric(
    spec: &MetricSpec,
    inputs: &[PointInput],
    context: &ComparisonContext,
    rules: &RuleSettings,
    levels: Option<&CellLevels>,
) -> (MetricReport, Vec<NamedP>) {
    let mut groups: Vec<String> = inputs.iter().map(|i| i.pair.group.clone()).collect();
    groups.dedup();
    groups.sort();
    groups.dedup();

    let mut rows: Vec<PointReport> = Vec::new();
    let mut flags: Vec<Flag> = Vec::new();
    let mut crossovers = Vec::new();
    let mut advice_rows = Vec::new();
    let mut p_values = Vec::new();
    let alpha = rules.alpha;
    let scale = if spec.can_be_zero {
        Scale::Arithmetic
    } else {
        Scale::Log
    };
    let base_settings = settings_for(spec, false);
    for group in &groups {
        let mut members: Vec<&PointInput> =
            inputs.iter().filter(|i| &i.pair.group == group).collect();
        members.sort_by(|a, b| a.pair.level.total_cmp(&b.pair.level));
        let points: Vec<PointComparison> = members
            .iter()
            .map(|i| {
                let p = point_comparison(spec, i, alpha);
                match levels.and_then(|l| l.get(&(spec.name.clone(), i.pair.label.clone()))) {
                    Some(level) => p.tested_at(*level),
                    None => p,
                }
            })
            .collect();
        let assessment = assess_sweep(&base_settings, &points, context, rules);
        let extra: Vec<Flag> = members
            .iter()
            .zip(&points)
            .flat_map(|(i, p)| failed_trial_flags(&spec.name, i, p))
            .collect();
        for (i, p) in members.iter().zip(&points) {
            let mut row = report_point(&i.pair, i, p, scale, 1.0 - alpha);
            row.flags = cell_flag_ids(assessment.flags.iter().chain(&extra), &spec.name, &p.label);
            rows.push(row);
        }
        let ordered: Vec<(&PointPair, &PointComparison)> =
            members.iter().map(|i| &i.pair).zip(&points).collect();
        advice_rows.extend(advice(&ordered));
        let regs = regions(&ordered);
        let changes_sign = regs.iter().any(|r| r.side == Side::Better)
            && regs.iter().any(|r| r.side == Side::Worse);
        if changes_sign {
            let axis = members.first().map_or("c", |i| i.pair.axis.as_str());
            let (lo, hi) = (
                members.first().map(|i| i.pair.axis_value.clone()),
                members.last().map(|i| i.pair.axis_value.clone()),
            );
            let why_not = if assessment.crossover.is_none() {
                Some(unsound_because(context, &assessment.flags))
            } else if !extra.is_empty() {
                Some("a trial failed: re-run before reading this as a finding".to_owned())
            } else {
                None
            };
            crossovers.push(CrossoverReport {
                group: group.clone(),
                sound: why_not.is_none(),
                phrase: region_phrase(&regs, axis, lo.as_deref(), hi.as_deref(), &spec.name),
                description: describe_regions(
                    &regs,
                    axis,
                    lo.as_deref(),
                    hi.as_deref(),
                    &spec.name,
                    spec.direction,
                    group,
                ),
                regions: regs,
                why_not,
            });
        }
        flags.extend(assessment.flags);
        flags.extend(extra);
        p_values.extend(assessment.p_values);
    }
    flags.sort_by_key(|f| (f.level, f.id));
    flags.dedup();
    (
        MetricReport {
            metric: spec.name.clone(),
            unit: spec.unit.clone(),
            direction: spec.direction,
            scale,
            threshold: spec.threshold,
            points: rows,
            flags,
            crossovers,
            advice: advice_rows,
        },
        p_values,
    )
}

#[cfg(test)]
#[path = "analyze_tests.rs"]
mod tests;
