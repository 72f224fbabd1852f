//! Levels apart from effects between two runs of the same spec (a re-run, or `compare`
//! across runs): per metric, the change common to every cell that both runs measured,
//! with server starts as the unit, and the arms, points and cells that moved apart from it
//! (servebench_stats::levels; docs/rerun.md, "Levels and effects"). Set beside the host
//! probe's change between the runs ([`crate::host_probe`]): a common shift of the levels
//! with a slower probe is the machine's, not the variants'.

use serde::{Deserialize, Serialize};
use servebench_result::{RunResult, TrialStatus};
use servebench_spec::metrics::metric;
use servebench_stats::levels::{CellPlace, LevelObs, LevelSettings, Scope, Shape, levels};
use servebench_stats::reproduce::Reproduction;
use servebench_stats::{Direction, Estimate};

use crate::evidence::{PointPair, match_points};
use crate::text::signed_pct as pct_signed;

/// One departure from the common change, named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedDeparture {
    /// `arm`, `point` or `cell`.
    pub kind: String,
    /// The arm (`grouped_mm`), the point (`c=16`) or the cell (`grouped_mm c=16`).
    pub what: String,
    /// Its own change new/published (ratio).
    pub own: f64,
    /// own / common, with the contrast's interval.
    pub departure: Estimate,
    /// Unadjusted p.
    pub p_value: f64,
    /// Adjusted for every departure of the metric (Holm within arms, points, cells;
    /// Bonferroni over the three).
    pub adjusted_p: f64,
    /// Adjusted p below α.
    pub significant: bool,
}

/// One cell judged relative to the common level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRelative {
    /// Variant.
    pub variant: String,
    /// Short point label.
    pub point: String,
    /// Its change over the common change (ratio), with the interval.
    pub relative: Estimate,
    /// The value rule on it (inside ±θ: reproduced relative to the common level).
    pub outcome: Reproduction,
}

/// The levels of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricLevels {
    /// Metric.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// θ.
    pub threshold: f64,
    /// The common change new/published (ratio) with its interval; `None` when it could not
    /// be computed (see `why`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common: Option<Estimate>,
    /// Its p.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_p: Option<f64>,
    /// Uniform, none, or not uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    /// Server starts behind the trials, in the first run and in the second.
    pub starts: [usize; 2],
    /// Every departure tested.
    pub departures: Vec<NamedDeparture>,
    /// Each cell relative to the common change.
    pub cells: Vec<CellRelative>,
    /// The finding in words.
    pub statement: String,
    /// Why there is no estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The levels of every metric, and the host probe beside them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelsReport {
    /// One per metric on the log scale.
    pub metrics: Vec<MetricLevels>,
    /// The host probe's change between the runs, in words, or why it is not known.
    pub host_probe: String,
    /// Whether the probe's change is beyond its repeatability in any figure; `None` when
    /// the probes could not be compared (a run without one, or no figure in common).
    pub host_probe_moved: Option<bool>,
}

/// A metric the levels are computed for (one on the log scale: a metric that can be 0 has
/// no ratio).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LevelMetric {
    /// Catalogue name.
    pub name: String,
    /// Unit.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// θ.
    pub threshold: f64,
}

struct Cells {
    places: Vec<CellPlace>,
    names: Vec<(String, String)>,
    arms: Vec<String>,
    points: Vec<String>,
}

fn cells(base: &RunResult, cand: &RunResult, pairs: &[PointPair]) -> Cells {
    let arms: Vec<String> = base
        .spec
        .spec
        .variants
        .iter()
        .filter(|v| cand.spec.spec.variants.iter().any(|w| w.name == v.name))
        .map(|v| v.name.clone())
        .collect();
    let mut out = Cells {
        places: Vec::new(),
        names: Vec::new(),
        arms: arms.clone(),
        points: pairs.iter().map(|p| p.label.clone()).collect(),
    };
    for (a, arm) in arms.iter().enumerate() {
        for (p, pair) in pairs.iter().enumerate() {
            out.places.push(CellPlace { arm: a, point: p });
            out.names.push((arm.clone(), pair.label.clone()));
        }
    }
    out
}

fn observations(
    r: &RunResult,
    new_run: bool,
    metric: &str,
    c: &Cells,
    pairs: &[PointPair],
) -> Vec<LevelObs> {
    let mut out = Vec::new();
    for t in r.trials.iter().filter(|t| t.status == TrialStatus::Ok) {
        let Some(a) = c.arms.iter().position(|v| *v == t.variant) else {
            continue;
        };
        let Some(p) = pairs
            .iter()
            .position(|q| if new_run { q.cand_point } else { q.base_point } == t.point)
        else {
            continue;
        };
        let Some(value) = t.summary.as_ref().and_then(|s| s.metric(metric)) else {
            continue;
        };
        if value.is_finite() && value > 0.0 {
            out.push(LevelObs {
                new_run,
                start: t.block,
                cell: a * pairs.len() + p,
                value,
            });
        }
    }
    out
}

fn direction_word(d: Direction, ratio: f64) -> &'static str {
    if d.is_better(ratio.ln()) {
        "better"
    } else {
        "worse"
    }
}

fn interval(e: &Estimate) -> String {
    format!(
        "{} [{}, {}]",
        pct_signed(e.point - 1.0),
        pct_signed(e.ci.lower - 1.0),
        pct_signed(e.ci.upper - 1.0)
    )
}

fn statement(m: &MetricLevels, direction: Direction, arms: usize, points: usize) -> String {
    let Some(common) = &m.common else {
        return format!(
            "{}: no common change computed ({})",
            m.metric,
            m.why.clone().unwrap_or_default()
        );
    };
    let everywhere = match (arms, points) {
        (a, p) if a >= 2 && p >= 2 => format!("in all {a} arms at every point"),
        (a, _) if a >= 2 => format!("in all {a} arms"),
        (_, p) if p >= 2 => "at every point".to_owned(),
        _ => "in its one cell".to_owned(),
    };
    match m.shape {
        Some(Shape::Uniform) => format!(
            "{}: levels moved {} alike {everywhere} ({}): a change of the machine or its load, \
             not of the variants; the A/B effects within each run are not touched by it",
            m.metric,
            interval(common),
            direction_word(direction, common.point)
        ),
        Some(Shape::None) => format!(
            "{}: no common change of the levels ({}, the interval holds 0) and no arm or point \
             moved apart",
            m.metric,
            interval(common)
        ),
        _ => {
            let apart: Vec<String> = m
                .departures
                .iter()
                .filter(|d| d.significant)
                .map(|d| {
                    format!(
                        "{} {} ({} against the common {}; apart by {})",
                        d.kind,
                        d.what,
                        pct_signed(d.own - 1.0),
                        pct_signed(common.point - 1.0),
                        interval(&d.departure)
                    )
                })
                .collect();
            format!(
                "{}: the levels did not move alike — {} moved apart: a change that differs \
                 between arms or points is not the machine's alone",
                m.metric,
                apart.join("; ")
            )
        }
    }
}

fn metric_levels(
    base: &RunResult,
    cand: &RunResult,
    spec: &LevelMetric,
    alpha: f64,
    pairs: &[PointPair],
) -> MetricLevels {
    let c = cells(base, cand, pairs);
    let mut obs = observations(base, false, &spec.name, &c, pairs);
    obs.extend(observations(cand, true, &spec.name, &c, pairs));
    let settings = LevelSettings {
        alpha,
        threshold: spec.threshold,
    };
    let mut m = MetricLevels {
        metric: spec.name.clone(),
        unit: spec.unit.clone(),
        threshold: spec.threshold,
        common: None,
        common_p: None,
        shape: None,
        starts: [0, 0],
        departures: Vec::new(),
        cells: Vec::new(),
        statement: String::new(),
        why: None,
    };
    match levels(&obs, &c.places, &settings) {
        Ok(l) => {
            m.common = Some(l.common);
            m.common_p = Some(l.common_p);
            m.shape = Some(l.shape);
            m.starts = l.starts;
            m.departures = l
                .departures
                .iter()
                .map(|d| {
                    let (kind, what) = match d.scope {
                        Scope::Arm(a) => ("arm", c.arms[a].clone()),
                        Scope::Point(p) => ("point", c.points[p].clone()),
                        Scope::Cell(i) => ("cell", format!("{} {}", c.names[i].0, c.names[i].1)),
                    };
                    NamedDeparture {
                        kind: kind.into(),
                        what,
                        own: d.own,
                        departure: d.departure,
                        p_value: d.p_value,
                        adjusted_p: d.holm_p,
                        significant: d.significant,
                    }
                })
                .collect();
            m.cells = l
                .cells
                .iter()
                .map(|x| CellRelative {
                    variant: c.names[x.cell].0.clone(),
                    point: c.names[x.cell].1.clone(),
                    relative: x.relative,
                    outcome: x.outcome,
                })
                .collect();
        }
        Err(e) => m.why = Some(e.to_string()),
    }
    m.statement = statement(&m, spec.direction, c.arms.len(), c.points.len());
    m
}

/// The levels of `base` (the published or first run) against `cand` for each metric on the
/// log scale (metrics that can be 0 are left out: a ratio of them is not defined).
pub(crate) fn between(
    base: &RunResult,
    cand: &RunResult,
    specs: &[LevelMetric],
    alpha: f64,
) -> LevelsReport {
    let (pairs, _) = match_points(base, cand);
    let metrics = specs
        .iter()
        .filter(|s| metric(&s.name).is_some())
        .map(|s| metric_levels(base, cand, s, alpha, &pairs))
        .collect();
    let (host_probe, host_probe_moved) = match crate::host_probe::changes(base, cand) {
        Ok(ch) if !ch.is_empty() => (
            format!(
                "host probe, second run against first: {}",
                crate::host_probe::describe(&ch)
            ),
            Some(ch.iter().any(|c| c.differs())),
        ),
        Ok(_) => ("host probe: no figure to compare".into(), None),
        Err(why) => (format!("host probe: {why}"), None),
    };
    LevelsReport {
        metrics,
        host_probe,
        host_probe_moved,
    }
}

/// The report's lines as text, first in a re-run's and a cross-run comparison's output.
pub fn lines(r: &LevelsReport) -> Vec<String> {
    let mut out = vec![
        "levels (the change common to every arm and point, server starts as the unit; then \
         what moved apart from it):"
            .to_owned(),
    ];
    for m in &r.metrics {
        out.push(format!("  {}", m.statement));
    }
    let any_uniform = r.metrics.iter().any(|m| m.shape == Some(Shape::Uniform));
    let mut probe = format!("  {}", r.host_probe);
    if let (true, Some(moved)) = (any_uniform, r.host_probe_moved) {
        probe.push_str(if moved {
            " — the host's own speed moved too: the common change is the machine's"
        } else {
            " — the probe did not move beyond its repeatability: the common change is not \
             explained by the host's CPU or memory speed (load, GPU, or the software stack)"
        });
    }
    out.push(probe);
    out
}
