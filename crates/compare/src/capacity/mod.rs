//! Capacity under SLOs (`spec.search`): each variant's capacity with its repeated confidence
//! interval, and each candidate's capacity ratio to the baseline with a verdict — at every
//! look of the search (what the `servebench` binary hands the runner as its search judge)
//! and at the end (what `compare` and `report` show). docs/search.md is the method.
//!
//! * **The sample.** One server start (block) of a variant bisects the load axis on a grid
//!   shifted by a seeded offset each round (`servebench_spec::search`) and ends with a bracket
//!   — a load that passed next to one that failed. The midpoint on the grid's scale (log for
//!   a relative precision) is that start's capacity estimate; the offset makes its rounding
//!   error uniform with mean zero (subtractive dither), so the estimates of the starts are
//!   independent, unbiased samples of the start-to-start distribution of capacity, rounding
//!   included. Trials are not the unit here; server starts are.
//! * **A variant's capacity** is the mean of its starts' estimates on the grid's scale (a
//!   geometric mean on a relative grid), with a repeated confidence interval: `mean ± t·SE`
//!   with `SE = s/√n`, `n − 1` degrees of freedom and the t quantile at the nominal level of
//!   the look's boundary in a Lan–DeMets design with O'Brien–Fleming-type spending over
//!   `search.max_rounds` starts (`servebench_stats::sequential`; Jennison & Turnbull 2000,
//!   ch. 9). The variance `s²` is floored at one grid step's rounding variance, `step²/12`
//!   (Sheppard 1898): starts that happen to bracket the same grid points would otherwise give
//!   a zero-width interval. The search stops once every interval is as narrow as
//!   `search.precision`: a data-dependent stop, which the repeated intervals allow — they
//!   cover the truth at every look at once with probability ≥ 1 − α.
//! * **The ratio** candidate/baseline is Welch's test on the logs of the starts' estimates
//!   (each arm's variance floored likewise, `(step/capacity)²/12` on a linear grid), read on
//!   the repeated interval at the look's boundary, with the verdict rule of every other
//!   metric against `compare.threshold` (`servebench_stats::verdict::classify`).
//! * **Looks** are the rounds from `search.min_rounds` on at which a variant (or a pair) had
//!   new estimates and at least 3 in all; earlier rounds cannot stop the search, so they
//!   spend no error (their estimates only choose where the next round starts).
//! * **At a bound.** A start that fails even at `lower` or passes even at `upper` brackets
//!   nothing: a variant with such a start gets no number, only what was seen ("capacity below
//!   the lower bound 2 req/s: at 2 req/s 71% of requests met the SLOs").

use serde::Serialize;
use servebench_result::{
    CapacityLook, RatioLook, RunResult, SearchBlock, SearchLook, SearchOutcome,
};
use servebench_spec::search::{GridScale, scale_and_step};
use servebench_spec::{Search, SearchAxis, Slo};
use servebench_stats::Direction;
use servebench_stats::sequential::{Look, SequentialDesign, SpendingFunction, repeated_ci};
use servebench_stats::verdict::classify;

use crate::text::{num, pct};

mod estimate;
mod monotone;
mod queued;
mod render;
use estimate::{comparison, variant_capacity};
pub use render::render_capacity;

/// A load or level as printed: [`num`]'s digits without trailing zeros (`7`, `41.7`,
/// `2.5`), so a bound reads as the spec wrote it.
pub fn load(x: f64) -> String {
    let s = num(x);
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// The fewest server starts that give an interval.
const MIN_STARTS: usize = 3;

/// What a search found for one variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CapacityOutcome {
    /// Every start bracketed its capacity, and there are enough for an interval.
    Estimated,
    /// Every start that ended failed even at the lower bound.
    BelowLower {
        /// Mean attainment over the trials at the lower bound.
        attainment: Option<f64>,
    },
    /// Every start that ended passed even at the upper bound.
    AboveUpper {
        /// Mean attainment over the trials at the upper bound.
        attainment: Option<f64>,
    },
    /// Some starts bracketed, others ended at a bound: the capacity is near it.
    AtABound,
    /// Fewer than 3 starts bracketed.
    TooFewStarts,
}

/// One variant's capacity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantCapacity {
    /// Variant name.
    pub variant: String,
    /// The spec's baseline.
    pub baseline: bool,
    /// What was found.
    pub outcome: CapacityOutcome,
    /// Each bracketing start's estimate, in run order.
    pub start_estimates: Vec<f64>,
    /// Starts that failed at `lower`, passed at `upper`, or gave no estimate.
    pub below_lower: u64,
    /// Starts that passed at `upper`.
    pub above_upper: u64,
    /// Starts with an invalid trial.
    pub invalid: u64,
    /// Trials measured for this variant (all starts).
    pub trials: u64,
    /// The capacity (mean of the starts' estimates on the grid's scale).
    pub estimate: Option<f64>,
    /// Lower end of the repeated confidence interval.
    pub lower: Option<f64>,
    /// Upper end.
    pub upper: Option<f64>,
    /// The interval's half-width relative to the estimate (log scale) or in load units
    /// (absolute precision), whichever the precision is written in.
    pub half_width: Option<f64>,
    /// The interval is as narrow as the precision asks.
    pub precise: bool,
    /// The look the interval was read at.
    pub look: Option<Look>,
    /// The outcome in words.
    pub note: String,
}

/// A candidate's capacity against the baseline's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacityComparison {
    /// The candidate.
    pub candidate: String,
    /// The baseline.
    pub baseline: String,
    /// Ratio of geometric means candidate/baseline.
    pub ratio: Option<f64>,
    /// Its repeated confidence interval.
    pub lower: Option<f64>,
    /// Upper end.
    pub upper: Option<f64>,
    /// Verdict (`improved`, … `inconclusive`), or `not-computed`.
    pub verdict: String,
    /// The look it was read at.
    pub look: Option<Look>,
    /// Why it could not be computed, when it could not.
    pub note: Option<String>,
}

/// The capacity analysis of a search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacityReport {
    /// `servebench-capacity/1`.
    pub format: String,
    /// The result's run id.
    pub run_id: String,
    /// The axis searched.
    pub axis: SearchAxis,
    /// Its unit in words.
    pub unit: String,
    /// Lowest and highest load.
    pub lower_bound: f64,
    /// Highest load.
    pub upper_bound: f64,
    /// The attainment target.
    pub attainment: f64,
    /// The SLOs in words (`TTFT ≤ 2s, TPOT ≤ 50ms`).
    pub slo: String,
    /// The precision asked, in words (`±5%`).
    pub precision: String,
    /// Significance level α (simultaneous over the looks).
    pub alpha: f64,
    /// The ratio verdicts' threshold θ.
    pub threshold: f64,
    /// Rounds measured.
    pub rounds: u32,
    /// Why the search stopped (absent: it did not finish).
    pub stopped: Option<String>,
    /// Every variant, in spec order.
    pub variants: Vec<VariantCapacity>,
    /// Every candidate against the baseline.
    pub comparisons: Vec<CapacityComparison>,
    /// Patterns worth a look: attainment that is not monotone in the load (a load passed
    /// while a lower one failed), which the bisection assumes away.
    pub looks: Vec<String>,
    /// The search, to print loads at its grid's precision.
    #[serde(skip)]
    pub(crate) search: Option<Search>,
}

impl CapacityReport {
    /// A load, capacity or interval end as the report prints it: at the grid's precision
    /// (`servebench_spec::search::load_text`), or as [`load`] without the search.
    pub fn load_text(&self, x: f64) -> String {
        match &self.search {
            Some(q) => servebench_spec::search::load_text(q, x),
            None => load(x),
        }
    }
}

/// The SLOs in words, e.g. `TTFT ≤ 2s and TPOT ≤ 50ms`.
pub fn slo_words(slo: Option<&Slo>) -> String {
    let Some(slo) = slo else {
        return "no SLO".into();
    };
    let mut parts = Vec::new();
    for (name, v) in [("TTFT", slo.ttft), ("TPOT", slo.tpot), ("E2E", slo.e2e)] {
        if let Some(v) = v {
            parts.push(format!("{name} ≤ {v}"));
        }
    }
    parts.join(" and ")
}

fn precision_words(q: &Search) -> String {
    match q.precision {
        servebench_spec::Precision::Relative(p) => format!("±{}", pct(p)),
        servebench_spec::Precision::Absolute(p) => format!("±{} {}", load(p), q.axis.unit()),
    }
}

fn variant_names(result: &RunResult) -> (String, Vec<String>) {
    let vs = &result.spec.spec.variants;
    let baseline = vs
        .iter()
        .find(|v| v.baseline)
        .map(|v| v.name.clone())
        .unwrap_or_default();
    (baseline, vs.iter().map(|v| v.name.clone()).collect())
}

/// The look after round `after_round` of a search: every variant's capacity and interval on
/// the starts so far, the ratios, and whether the search stops (every variant precise or at a
/// bound, or `max_rounds` spent; never before `min_rounds`).
pub fn search_look(result: &RunResult, after_round: u32) -> SearchLook {
    let Some(q) = result.spec.spec.search.as_ref() else {
        return SearchLook {
            after_round,
            variants: Vec::new(),
            comparisons: Vec::new(),
            stop: true,
            why: "the spec has no search".into(),
        };
    };
    let (baseline, names) = variant_names(result);
    let caps: Vec<VariantCapacity> = names
        .iter()
        .map(|n| variant_capacity(result, q, n, after_round))
        .collect();
    let variants: Vec<CapacityLook> = caps
        .iter()
        .map(|c| {
            let at_bound = matches!(
                c.outcome,
                CapacityOutcome::BelowLower { .. }
                    | CapacityOutcome::AboveUpper { .. }
                    | CapacityOutcome::AtABound
            );
            CapacityLook {
                variant: c.variant.clone(),
                starts: c.start_estimates.len() as u64,
                below_lower: c.below_lower,
                above_upper: c.above_upper,
                invalid: c.invalid,
                estimate: c.estimate,
                lower: c.lower,
                upper: c.upper,
                fraction: c.look.map(|l| l.fraction),
                nominal_alpha: c.look.map(|l| l.nominal_alpha),
                precise: c.precise,
                settled: c.precise || at_bound,
                note: c.note.clone(),
            }
        })
        .collect();
    let comparisons: Vec<RatioLook> = names
        .iter()
        .filter(|n| **n != baseline)
        .map(|n| {
            let c = comparison(result, q, &baseline, n, after_round);
            RatioLook {
                candidate: c.candidate,
                ratio: c.ratio,
                lower: c.lower,
                upper: c.upper,
                verdict: c.verdict,
            }
        })
        .collect();
    let open: Vec<String> = variants
        .iter()
        .filter(|v| !v.settled)
        .map(|v| format!("{}: {}", v.variant, v.note))
        .collect();
    let (stop, why) = if !variants.is_empty() && variants.iter().all(|v| v.settled && !v.precise) {
        // Nothing left to narrow: more rounds would only repeat the bound.
        (
            true,
            format!(
                "every variant's capacity is outside the bounds {}..{} {}: widen \
                 `search.lower`..`upper` to measure it",
                load(q.lower),
                load(q.upper),
                q.axis.unit()
            ),
        )
    } else if after_round < q.min_rounds {
        (
            false,
            format!("round {after_round} of at least {}", q.min_rounds),
        )
    } else if open.is_empty() {
        (
            true,
            format!(
                "every variant's capacity is within {} or outside the bounds",
                precision_words(q)
            ),
        )
    } else if after_round >= q.max_rounds {
        (
            true,
            format!(
                "`max_rounds` ({}) spent; not as precise as asked: {}",
                q.max_rounds,
                open.join("; ")
            ),
        )
    } else {
        (false, format!("not yet precise: {}", open.join("; ")))
    };
    SearchLook {
        after_round,
        variants,
        comparisons,
        stop,
        why,
    }
}

/// The capacity analysis of `result`, at its last round; `None` when it is not a search.
pub fn capacity_report(result: &RunResult) -> Option<CapacityReport> {
    let q = result.spec.spec.search.as_ref()?;
    let log = result.search.clone().unwrap_or_default();
    let rounds = log.blocks.iter().map(|b| b.round).max().unwrap_or(0);
    let (baseline, names) = variant_names(result);
    Some(CapacityReport {
        format: "servebench-capacity/1".into(),
        run_id: result.run_id.clone(),
        axis: q.axis,
        unit: q.axis.unit().into(),
        lower_bound: q.lower,
        upper_bound: q.upper,
        attainment: q.attainment,
        slo: slo_words(result.spec.spec.slo.as_ref()),
        precision: precision_words(q),
        alpha: result.spec.spec.compare.alpha,
        threshold: result.spec.spec.compare.threshold,
        rounds,
        stopped: log.stopped.clone(),
        variants: names
            .iter()
            .map(|n| variant_capacity(result, q, n, rounds))
            .collect(),
        comparisons: names
            .iter()
            .filter(|n| **n != baseline)
            .map(|n| comparison(result, q, &baseline, n, rounds))
            .collect(),
        looks: names
            .iter()
            .flat_map(|n| monotone::not_monotone(result, q, n))
            .collect(),
        search: Some(q.clone()),
    })
}

#[cfg(test)]
mod tests;
