//! The sweep-level rule (`sweep-inconsistent`), the *crossover* finding, and
//! [`assess_sweep`], which runs every per-metric rule over one sweep.
//!
//! Method (STATISTICS.md): a level is inconsistent when Cochran's Q over the per-level log
//! ratios has p < 0.01 *and* that level's leave-one-out residual exceeds 3 SE
//! (`crate::cochran`), or when its delta is significant and of the opposite sign to both of
//! its neighbours (in level order) whose CIs exclude 0. The Q rule is applied step-down, as
//! in Rosner's generalized ESD: the level with the largest |residual| is flagged, set aside,
//! and Q re-tested on the rest, while at least 3 levels remain. Without this, one deviant
//! level drags every other level's leave-one-out estimate and all of them exceed 3 SE when
//! the SEs are small. With 2 levels no single level can be singled out by Q. The delta *changes sign* when some
//! levels are significantly better and others significantly worse.
//! * In a comparison that is one run, interleaved, and free of re-baseline flags (which
//!   includes `underpowered`, so it is adequately powered), a sign change is reported as a
//!   [`Crossover`] — a finding, not an error — and does not raise `sweep-inconsistent`.
//! * Otherwise a sign change or an inconsistent level raises `sweep-inconsistent`: at level
//!   re-baseline when the comparison is stale or not interleaved (the pattern cannot be told
//!   from between-session drift: the seed's recalled baseline), else at level look.
//!
//! Reference: STATISTICS.md ("Two levels of flag", `sweep-inconsistent`); Cochran (1954);
//! B. Rosner, "Percentage points for a generalized ESD many-outlier procedure",
//! Technometrics 25(2), 1983.

use serde::{Deserialize, Serialize};

use crate::cochran::{Heterogeneity, cochran_q};
use crate::flags::evidence::{
    ComparisonContext, MetricSettings, NamedP, PointComparison, RuleSettings,
};
use crate::flags::rules::{
    drift, implausible, invalid_trials, not_comparable, outlier_trials, recommended_trials,
    stale_baseline, too_few_trials, underpowered,
};
use crate::flags::{Flag, FlagId, FlagLevel, p_clause, rerun_action};
use crate::verdict::Direction;

/// Whether the candidate is better or worse than the baseline in a region of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// Significantly better (by the metric's direction).
    Better,
    /// Significantly worse.
    Worse,
}

/// A run of consecutive significant levels on the same side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossoverRegion {
    /// Label of the first level of the region.
    pub first_label: String,
    /// Label of the last level.
    pub last_label: String,
    /// First level.
    pub first_level: f64,
    /// Last level.
    pub last_level: f64,
    /// Better or worse.
    pub side: Side,
}

/// A sweep whose delta changes sign in a sound comparison: a finding, not an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crossover {
    /// Regions in level order (levels whose CI includes 0 are skipped).
    pub regions: Vec<CrossoverRegion>,
    /// One sentence, e.g. "the candidate is worse at c=1, better at c=10, and worse from
    /// c=256 to c=1024 (output_throughput, higher is better)".
    pub description: String,
}

/// Everything the rules found for one metric over one sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepAssessment {
    /// Fired flags, re-baseline first.
    pub flags: Vec<Flag>,
    /// The crossover finding, when the comparison is sound and the delta changes sign.
    pub crossover: Option<Crossover>,
    /// Cochran's Q over the levels with a comparison (needs ≥ 2).
    pub heterogeneity: Option<Heterogeneity>,
    /// Trials per arm the re-run actions recommend.
    pub recommended_trials: u64,
    /// One p-value per level (labelled "metric label"), to pool into `rules::multiplicity`.
    pub p_values: Vec<NamedP>,
}

/// Sign of a level's delta in the "better" sense: +1 better, −1 worse, 0 not significant.
fn side_of(point: &PointComparison, direction: Direction) -> i8 {
    match point.comparison.as_ref() {
        Some(c) if c.significant => {
            if direction.is_better(c.test.diff) {
                1
            } else {
                -1
            }
        }
        _ => 0,
    }
}

fn regions(points: &[&PointComparison], direction: Direction) -> Vec<CrossoverRegion> {
    let mut out: Vec<CrossoverRegion> = Vec::new();
    for p in points {
        let side = match side_of(p, direction) {
            1 => Side::Better,
            -1 => Side::Worse,
            _ => continue,
        };
        match out.last_mut() {
            Some(r) if r.side == side => {
                r.last_label.clone_from(&p.label);
                r.last_level = p.level;
            }
            _ => out.push(CrossoverRegion {
                first_label: p.label.clone(),
                last_label: p.label.clone(),
                first_level: p.level,
                last_level: p.level,
                side,
            }),
        }
    }
    out
}

fn describe(regions: &[CrossoverRegion], metric: &MetricSettings) -> String {
    let parts: Vec<String> = regions
        .iter()
        .map(|r| {
            let word = match r.side {
                Side::Better => "better",
                Side::Worse => "worse",
            };
            if r.first_label == r.last_label {
                format!("{word} at {}", r.first_label)
            } else {
                format!("{word} from {} to {}", r.first_label, r.last_label)
            }
        })
        .collect();
    let joined = match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{}, and {last}", rest.join(", ")),
        _ => parts.join(""),
    };
    let dir = match metric.direction {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    };
    format!("the candidate is {joined} ({}, {dir})", metric.name)
}

/// Levels that disagree with the sweep (module docs), with the reason for each, and the
/// heterogeneity statistics. `points` must be in level order.
fn inconsistent_levels(
    points: &[&PointComparison],
    direction: Direction,
    settings: &RuleSettings,
) -> (Vec<String>, Option<Heterogeneity>) {
    let with: Vec<&PointComparison> = points
        .iter()
        .copied()
        .filter(|p| p.comparison.is_some())
        .collect();
    let (d, se): (Vec<f64>, Vec<f64>) = with
        .iter()
        .filter_map(|p| p.comparison.as_ref().map(|c| (c.test.diff, c.test.std_err)))
        .unzip();
    let het = cochran_q(&d, &se).ok();
    // Step-down: flag the most extreme level, set it aside, re-test the rest.
    let mut residual_of: Vec<Option<f64>> = vec![None; with.len()];
    let mut active: Vec<usize> = (0..with.len()).collect();
    while active.len() >= 3 {
        let (da, sa): (Vec<f64>, Vec<f64>) = active.iter().map(|&i| (d[i], se[i])).unzip();
        let Ok(h) = cochran_q(&da, &sa) else { break };
        if h.p >= settings.sweep_q_p {
            break;
        }
        let Some((j, r)) = h
            .residuals
            .iter()
            .copied()
            .enumerate()
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        else {
            break;
        };
        if r.abs() <= settings.sweep_residual_se {
            break;
        }
        residual_of[active[j]] = Some(r);
        active.remove(j);
    }
    let mut reasons = Vec::new();
    for (i, p) in with.iter().enumerate() {
        let mut why = Vec::new();
        if let Some(r) = residual_of[i] {
            why.push(format!("leave-one-out residual {r:.1} SE"));
        }
        let s = side_of(p, direction);
        if s != 0 && i > 0 && i + 1 < with.len() {
            let (l, r) = (
                side_of(with[i - 1], direction),
                side_of(with[i + 1], direction),
            );
            if l == -s && r == -s {
                why.push(format!(
                    "sign opposite to both neighbours ({} and {})",
                    with[i - 1].label,
                    with[i + 1].label
                ));
            }
        }
        if !why.is_empty() {
            reasons.push(format!("{}: {}", p.label, why.join(", ")));
        }
    }
    (reasons, het)
}

/// Run every per-metric rule over one sweep of `points` (any order; sorted by `level`
/// here) measured under `context`, and decide between `sweep-inconsistent` and a crossover
/// (module docs). Multiplicity across metrics is separate: pool `p_values` of every
/// assessment into `rules::multiplicity`.
pub fn assess_sweep(
    metric: &MetricSettings,
    points: &[PointComparison],
    context: &ComparisonContext,
    settings: &RuleSettings,
) -> SweepAssessment {
    let mut ordered: Vec<&PointComparison> = points.iter().collect();
    ordered.sort_by(|a, b| a.level.total_cmp(&b.level));
    let n_rec = recommended_trials(points, settings);

    let mut flags: Vec<Flag> = Vec::new();
    flags.extend(not_comparable(context));
    flags.extend(stale_baseline(context, n_rec));
    for p in &ordered {
        flags.extend(too_few_trials(p, metric, settings, n_rec));
        flags.extend(underpowered(p, metric));
        flags.extend(implausible(p, metric, settings));
        flags.extend(drift(p, metric, settings, n_rec));
        flags.extend(outlier_trials(p, metric, settings));
        flags.extend(invalid_trials(p, metric, settings));
    }

    let side_set: Vec<i8> = ordered
        .iter()
        .map(|p| side_of(p, metric.direction))
        .collect();
    let sign_change = side_set.contains(&1) && side_set.contains(&-1);
    let one_interleaved_run = context.same_run && context.interleaved;
    let sound = one_interleaved_run && !flags.iter().any(|f| f.level == FlagLevel::ReBaseline);
    let (reasons, heterogeneity) = inconsistent_levels(&ordered, metric.direction, settings);

    let mut crossover = None;
    if sign_change && sound {
        let regions = regions(&ordered, metric.direction);
        let description = describe(&regions, metric);
        crossover = Some(Crossover {
            regions,
            description,
        });
    } else if sign_change || !reasons.is_empty() {
        let mut evidence = format!("{} across the sweep", metric.name);
        if let Some(h) = &heterogeneity {
            evidence.push_str(&format!(
                ": Cochran's Q = {:.1} (χ², {} df, p {})",
                h.q,
                h.df,
                p_clause(h.p)
            ));
        }
        if !reasons.is_empty() {
            evidence.push_str(&format!("; {}", reasons.join("; ")));
        }
        if sign_change {
            let r = regions(&ordered, metric.direction);
            evidence.push_str(&format!(
                "; the delta changes sign: {}",
                describe(&r, metric)
            ));
        }
        let (level, action) = if one_interleaved_run {
            (
                FlagLevel::Look,
                "look at the disagreeing level(s): server log, the variant really in effect, \
                 the load actually reached; re-run those levels if anything is off"
                    .to_string(),
            )
        } else {
            (
                FlagLevel::ReBaseline,
                format!(
                    "{}: from a stale or non-interleaved comparison this pattern cannot be told \
                     from between-session drift",
                    rerun_action(n_rec)
                ),
            )
        };
        flags.push(Flag::new(
            FlagId::SweepInconsistent,
            level,
            evidence,
            action,
        ));
    }
    flags.sort_by_key(|f| (f.level, f.id));

    let p_values = ordered
        .iter()
        .filter_map(|p| {
            p.comparison.as_ref().map(|c| NamedP {
                label: format!("{} {}", metric.name, p.label),
                p: c.test.p,
            })
        })
        .collect();
    SweepAssessment {
        flags,
        crossover,
        heterogeneity,
        recommended_trials: n_rec,
        p_values,
    }
}
