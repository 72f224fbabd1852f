//! The looks of a sequential run (`trials.until_decided`), as the result file records them:
//! after the first stage, then after every round, the cells examined, their repeated
//! confidence intervals and whether each stopped. `servebench compare` reads each cell at
//! the look it stopped at; `run --resume` continues from the last look.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One look: every cell still open before it, examined on the trials so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LookRecord {
    /// The repetition index t of the last trials in this look: `trials.count` for the look
    /// after the first stage, then one more per round.
    pub after_trial: u32,
    /// The cells examined (candidate variant × sweep point), in variant then point order.
    pub cells: Vec<CellLook>,
}

/// One cell (a candidate variant at one sweep point) at one look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellLook {
    /// The candidate variant (the baseline is compared with every candidate).
    pub variant: String,
    /// Sweep point index.
    pub point: usize,
    /// Baseline trials with a summary, up to `after_trial`.
    pub n_baseline: u64,
    /// Candidate trials with a summary, up to `after_trial`.
    pub n_candidate: u64,
    /// The look's information fraction (1 when the budget is reached).
    pub fraction: f64,
    /// The look's boundary on the z scale.
    pub z_boundary: f64,
    /// Its nominal two-sided level (the repeated interval is at `1 − nominal_alpha`, with the
    /// t quantile for the trials' degrees of freedom).
    pub nominal_alpha: f64,
    /// Every compared metric at this look.
    pub metrics: Vec<MetricLook>,
    /// Every metric `until_decided.metrics` names is improved, regressed or equivalent.
    pub decided: bool,
    /// Why the cell stopped here, or `null`: it takes another round.
    pub stopped: Option<StopReason>,
}

/// One metric of a cell at a look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricLook {
    /// Catalogue name.
    pub metric: String,
    /// Whether the cell must decide it (`until_decided.metrics`).
    pub required: bool,
    /// The verdict on the repeated interval (`improved`, `likely-regressed`, …), or
    /// `not-computed` when no interval could be computed.
    pub verdict: String,
    /// Ratio candidate/baseline (log-scale metrics) or difference (metrics that can be 0).
    pub effect: Option<f64>,
    /// Lower end of the repeated confidence interval of `effect`.
    pub lower: Option<f64>,
    /// Upper end.
    pub upper: Option<f64>,
    /// At a gated point of a run with a gate (`compare.gate`, `run --fail-on`): the gate's
    /// answer on the repeated interval — `shown`, `shown-not` or `not-shown` (absent
    /// elsewhere, and in files from before gates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

/// Why a cell took no more rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Every required metric is decided.
    Decided,
    /// At a gated point: the gate's question is answered, either way, at every gated
    /// metric (docs/compare.md, "Gates and sequential trials").
    Answered,
    /// The budget (`until_decided.max` trials per cell) is spent.
    Budget,
}

impl StopReason {
    /// As written in tables: `decided`, `budget spent`.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Decided => "decided",
            StopReason::Answered => "gate answered",
            StopReason::Budget => "budget spent",
        }
    }
}

/// Every look of one cell (candidate `variant` at sweep `point`) in `looks`, oldest first.
pub fn cell_looks<'r>(
    looks: &'r [LookRecord],
    variant: &str,
    point: usize,
) -> impl Iterator<Item = &'r CellLook> {
    looks
        .iter()
        .flat_map(|l| l.cells.iter())
        .filter(move |c| c.variant == variant && c.point == point)
}

/// Whether the cell takes another round: it has not stopped at its latest look (a cell never
/// looked at yet is open). What the runner schedules and `compare` reads agree on this one
/// rule.
pub fn cell_is_open(looks: &[LookRecord], variant: &str, point: usize) -> bool {
    cell_looks(looks, variant, point)
        .last()
        .is_none_or(|c| c.stopped.is_none())
}

/// Why the cell stopped, at its latest look (`None`: it never did — the run was cut short).
pub fn cell_stop_reason(looks: &[LookRecord], variant: &str, point: usize) -> Option<StopReason> {
    cell_looks(looks, variant, point)
        .last()
        .and_then(|c| c.stopped)
}

impl LookRecord {
    /// The points still open for `variant` after this look (cells not stopped).
    pub fn open_points(&self, variant: &str) -> Vec<usize> {
        self.cells
            .iter()
            .filter(|c| c.variant == variant && c.stopped.is_none())
            .map(|c| c.point)
            .collect()
    }
}
