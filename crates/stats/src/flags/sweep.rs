//! The sweep-level rule (`sweep-inconsistent`), the *crossover* finding, and
//! [`assess_sweep`], which runs every per-metric rule over one sweep.
//!
//! Method (docs/statistics-method.md, `sweep-inconsistent` and "Crossover"): a level is
//! inconsistent when Cochran's Q over the per-level log ratios has p < 0.01 *and* that
//! level's leave-one-out residual exceeds 3 SE (`crate::cochran`), or when its delta is
//! significant and of the opposite sign to both of its neighbours (in level order) whose CIs
//! exclude 0. The Q rule is applied step-down, as in Rosner's generalized ESD: the level with
//! the largest |residual| is flagged, set aside, and Q re-tested on the rest, while at least 3
//! levels remain. Without this, one deviant level drags every other level's leave-one-out
//! estimate and all of them exceed 3 SE when the SEs are small. With 2 levels no single level
//! can be singled out by Q.
//! * **Crossover** (a finding): in one interleaved run, the decided verdicts change sign
//!   across the sweep — some levels *improved*, others *regressed* — and none of the cells
//!   that carry it is threatened by a re-baseline flag. It is stated in words and raises no
//!   flag.
//! * Otherwise, from a stale or non-interleaved comparison, a sign change among significant
//!   levels or an inconsistent level raises `sweep-inconsistent` at level re-baseline: the
//!   pattern cannot be told from between-session drift (the seed's recalled baseline).
//! * In one interleaved run, an effect that varies smoothly with the level is a result, not a
//!   threat: only a *spike* raises `sweep-inconsistent`, at level look — an inconsistent
//!   level that stands out from both neighbours on the same side by more than two standard
//!   errors of the difference, or a level whose sign is opposite to both neighbours — and a
//!   sign change carried by flagged cells.
//!
//! Reference: Cochran (1954); B. Rosner, "Percentage points for a generalized ESD many-outlier
//! procedure", Technometrics 25(2), 1983.

use serde::{Deserialize, Serialize};

use crate::cochran::{Heterogeneity, cochran_q};
use crate::flags::evidence::{
    ComparisonContext, MetricSettings, NamedP, PointComparison, RuleSettings,
};
use crate::flags::rules::{
    implausible, not_comparable, recommended_trials, stale_baseline, too_few_trials,
};
use crate::flags::trials::{drift, invalid_trials, outlier_trials};
use crate::flags::{Flag, FlagId, FlagLevel, Threat, p_clause, rerun_action};
use crate::verdict::{Direction, Verdict};

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

/// A sweep whose decided verdicts change sign in a sound comparison: a finding, not an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Crossover {
    /// Regions in level order (levels without an improved or regressed verdict are skipped).
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

/// Side of a level's *decided* verdict: +1 improved, −1 regressed, 0 anything else.
pub fn decided_side(verdict: Option<Verdict>) -> i8 {
    match verdict {
        Some(Verdict::Improved) => 1,
        Some(Verdict::Regressed) => -1,
        _ => 0,
    }
}

/// Regions of adjacent levels on one side, by `side` (+1, −1, 0 skipped).
fn regions(
    points: &[&PointComparison],
    side: impl Fn(&PointComparison) -> i8,
) -> Vec<CrossoverRegion> {
    let mut out: Vec<CrossoverRegion> = Vec::new();
    for p in points {
        let side = match side(p) {
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

/// One level that disagrees with the sweep.
struct Disagreement {
    /// Index into the points with a comparison.
    index: usize,
    /// Why, in words.
    why: String,
    /// A spike: its neighbours both lie on the same side of it, or its sign is opposite to
    /// both (module docs).
    spike: bool,
}

/// Levels that disagree with the sweep (module docs), with the reason for each, and the
/// heterogeneity statistics. `points` must be in level order.
fn inconsistent_levels<'p>(
    points: &[&'p PointComparison],
    direction: Direction,
    settings: &RuleSettings,
) -> (
    Vec<&'p PointComparison>,
    Vec<Disagreement>,
    Option<Heterogeneity>,
) {
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
    let mut out = Vec::new();
    for (i, p) in with.iter().enumerate() {
        let mut why = Vec::new();
        let interior = i > 0 && i + 1 < with.len();
        let mut spike = false;
        if let Some(r) = residual_of[i] {
            why.push(format!("leave-one-out residual {r:.1} SE"));
            // A spike stands out from both neighbours, on the same side of both, by more
            // than two standard errors of the difference: a level on a smooth step or
            // trend does not.
            let apart = |j: usize| {
                let gap = d[i] - d[j];
                (gap.abs() > 2.0 * (se[i] * se[i] + se[j] * se[j]).sqrt()).then_some(gap.signum())
            };
            spike |= interior && apart(i - 1).is_some() && apart(i - 1) == apart(i + 1);
        }
        let s = side_of(p, direction);
        if s != 0 && interior {
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
                spike = true;
            }
        }
        if !why.is_empty() {
            out.push(Disagreement {
                index: i,
                why: format!("{}: {}", p.label, why.join(", ")),
                spike,
            });
        }
    }
    (with, out, het)
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
        flags.extend(implausible(p, metric, settings));
        flags.extend(drift(p, metric, settings, n_rec));
        flags.extend(outlier_trials(p, metric, settings));
        flags.extend(invalid_trials(p, metric, settings));
    }

    let one_interleaved_run = context.same_run && context.interleaved;
    let decided: Vec<i8> = ordered.iter().map(|p| decided_side(p.verdict())).collect();
    let decided_change = decided.contains(&1) && decided.contains(&-1);
    let carriers_flagged = ordered.iter().zip(&decided).any(|(p, side)| {
        *side != 0
            && flags.iter().any(|f| {
                f.level == FlagLevel::ReBaseline && f.threatens_cell(&metric.name, &p.label)
            })
    });
    let significant: Vec<i8> = ordered
        .iter()
        .map(|p| side_of(p, metric.direction))
        .collect();
    let sign_change = significant.contains(&1) && significant.contains(&-1);
    let (with, disagreements, heterogeneity) =
        inconsistent_levels(&ordered, metric.direction, settings);

    let mut crossover = None;
    let mut named: Vec<&Disagreement> = Vec::new();
    let mut carried_by_flagged = false;
    if one_interleaved_run {
        if decided_change && !carriers_flagged {
            let regions = regions(&ordered, |p| decided_side(p.verdict()));
            let description = describe(&regions, metric);
            crossover = Some(Crossover {
                regions,
                description,
            });
        } else {
            named = disagreements.iter().filter(|d| d.spike).collect();
            carried_by_flagged = decided_change;
        }
    } else if sign_change || !disagreements.is_empty() {
        named = disagreements.iter().collect();
    }
    let stale_change = !one_interleaved_run && sign_change;
    if !named.is_empty() || carried_by_flagged || stale_change {
        let mut evidence = format!("{} across the sweep", metric.name);
        if let Some(h) = &heterogeneity {
            evidence.push_str(&format!(
                ": Cochran's Q = {:.1} (χ², {} df, p {})",
                h.q,
                h.df,
                p_clause(h.p)
            ));
        }
        if !named.is_empty() {
            let words: Vec<&str> = named.iter().map(|d| d.why.as_str()).collect();
            evidence.push_str(&format!("; {}", words.join("; ")));
        }
        if carried_by_flagged || stale_change {
            let r = if carried_by_flagged {
                regions(&ordered, |p| decided_side(p.verdict()))
            } else {
                regions(&ordered, |p| side_of(p, metric.direction))
            };
            evidence.push_str(&format!(
                "; the delta changes sign: {}",
                describe(&r, metric)
            ));
            if carried_by_flagged {
                evidence.push_str(", carried by cells with re-baseline flags");
            }
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
        let mut threatened: Vec<&PointComparison> = named.iter().map(|d| with[d.index]).collect();
        if carried_by_flagged || (stale_change && named.is_empty()) {
            threatened = ordered
                .iter()
                .zip(&significant)
                .filter(|(_, s)| **s != 0)
                .map(|(p, _)| *p)
                .collect();
        }
        let threats = threatened
            .iter()
            .map(|p| Threat {
                metric: metric.name.clone(),
                point: p.label.clone(),
                verdict: p.verdict(),
                otherwise: None,
            })
            .collect();
        flags.push(
            Flag::new(FlagId::SweepInconsistent, level, evidence, action).threatening(threats),
        );
    }
    flags.sort_by_key(|f| (f.level, f.id));

    let p_values = ordered
        .iter()
        .filter_map(|p| {
            p.comparison.as_ref().map(|c| NamedP {
                metric: metric.name.clone(),
                point: p.label.clone(),
                verdict: c.verdict,
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
