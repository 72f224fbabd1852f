//! The log of a capacity search (`spec.search`), as the result file records it: every server
//! start's steps — which load, why, its attainment, pass or fail — and where it ended, and
//! the look after every round: each variant's capacity with its interval, the ratios to the
//! baseline, and whether the search stopped. `servebench compare` and `report` read it with
//! the trials; `run --resume` continues from it (docs/search.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A capacity search as it went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchLog {
    /// Every server start's search, in run order (one per variant and round; a start cut
    /// short by an interruption stays, with no outcome, and its round is measured again).
    #[serde(default)]
    pub blocks: Vec<SearchBlock>,
    /// The look after every round, in order.
    #[serde(default)]
    pub looks: Vec<SearchLook>,
    /// Why the search stopped; absent while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// One server start's search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchBlock {
    /// The round (from 1).
    pub round: u32,
    /// Variant name.
    pub variant: String,
    /// The block (server start) index, as in `servers[].block` and `trials[].block`.
    pub block: usize,
    /// The round's grid offset, a share of one step in `[0, 1)`.
    pub offset: f64,
    /// Loads on this start's grid.
    pub grid_points: usize,
    /// The load the search started at (the estimate of the earlier rounds); absent: the
    /// first round, which bisects the whole grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<f64>,
    /// The trials of this start, in order.
    #[serde(default)]
    pub steps: Vec<SearchStep>,
    /// Where it ended; absent while it runs, or when it was cut short (then it is not used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<SearchOutcome>,
}

/// One trial of a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchStep {
    /// The trial's `seq`.
    pub seq: usize,
    /// The trial's sweep point (`points[]`), one per load.
    pub point: usize,
    /// Index of the load on the start's grid.
    pub index: usize,
    /// The load.
    pub load: f64,
    /// Why this load: `bisect`, `start at the estimate so far`, `step up`, `step down`.
    pub why: String,
    /// Share of the trial's requests that met every SLO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attainment: Option<f64>,
    /// At or above the attainment target; absent for an invalid trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// Why the trial could not be judged (failed, or the client fell behind its schedule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
}

/// Where one server start's search ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SearchOutcome {
    /// A load that passed next to one that failed on the grid: the capacity of this start is
    /// between them.
    Bracketed {
        /// The highest load that passed.
        pass_load: f64,
        /// The lowest load that failed.
        fail_load: f64,
        /// The midpoint (geometric on a relative grid; on the concurrency axis, of the whole
        /// numbers between): this start's capacity estimate.
        estimate: f64,
    },
    /// Even `search.lower` failed.
    BelowLower {
        /// Attainment at `lower`.
        attainment: Option<f64>,
    },
    /// Even `search.upper` passed.
    AboveUpper {
        /// Attainment at `upper`.
        attainment: Option<f64>,
    },
    /// A trial could not be judged; the start gives no estimate.
    Invalid {
        /// What happened.
        reason: String,
    },
}

/// The look after one round: what every variant's capacity is so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchLook {
    /// The round just finished.
    pub after_round: u32,
    /// Every variant, in spec order.
    pub variants: Vec<CapacityLook>,
    /// Every candidate against the baseline.
    #[serde(default)]
    pub comparisons: Vec<RatioLook>,
    /// The search stops here.
    pub stop: bool,
    /// Why it stops, or what it still waits for.
    pub why: String,
}

/// One variant's capacity at a look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CapacityLook {
    /// Variant name.
    pub variant: String,
    /// Server starts that bracketed the capacity (the estimate's sample).
    pub starts: u64,
    /// Server starts that failed even at `lower`.
    #[serde(default)]
    pub below_lower: u64,
    /// Server starts that passed even at `upper`.
    #[serde(default)]
    pub above_upper: u64,
    /// Server starts that gave no estimate (an invalid trial).
    #[serde(default)]
    pub invalid: u64,
    /// Capacity estimate: the mean of the starts' estimates on the grid's scale (geometric
    /// on a relative grid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<f64>,
    /// Lower end of the repeated confidence interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    /// Upper end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    /// The look's information fraction (starts over `max_rounds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    /// The look's nominal two-sided level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominal_alpha: Option<f64>,
    /// The interval is as narrow as `search.precision` asks.
    pub precise: bool,
    /// This variant needs no more rounds (precise, or its capacity is outside the bounds).
    pub settled: bool,
    /// What the look says about it, in words.
    pub note: String,
}

/// A candidate's capacity over the baseline's at a look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RatioLook {
    /// The candidate variant.
    pub candidate: String,
    /// Capacity ratio candidate/baseline (geometric means).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// Lower end of its repeated confidence interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    /// Upper end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    /// `improved`, `regressed`, `equivalent`, `likely-improved`, `likely-regressed`,
    /// `inconclusive`, or `not-computed`.
    pub verdict: String,
}

impl SearchLog {
    /// The blocks of `variant` that ended with an outcome.
    pub fn finished_blocks<'a>(
        &'a self,
        variant: &'a str,
    ) -> impl Iterator<Item = &'a SearchBlock> {
        self.blocks
            .iter()
            .filter(move |b| b.variant == variant && b.outcome.is_some())
    }

    /// The estimate of `variant` at the last look, if any.
    pub fn last_estimate(&self, variant: &str) -> Option<f64> {
        self.looks
            .last()?
            .variants
            .iter()
            .find(|v| v.variant == variant)?
            .estimate
    }
}
