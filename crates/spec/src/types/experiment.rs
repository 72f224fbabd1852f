//! Variants, sweep, trials, comparison settings and SLOs.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::duration::HumanDuration;
use crate::rate::Rate;

/// One arm of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Unique name: letters, digits, `.`, `_`, `-`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"))]
    pub name: String,
    /// The arm every other variant is compared against; exactly one variant has it.
    #[serde(default)]
    pub baseline: bool,
    /// What this variant changes in the server launch.
    #[serde(default)]
    pub server: ServerPatch,
    /// Base URL of this variant's already running server (specs without a `server` block
    /// that compare two endpoints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Values read as `${variant.NAME}` in the server block and verify rules.
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
    /// Fields merged over `workload.request_body` (and so over the body servebench builds)
    /// in this variant's generation requests, a `null` removing a key: an A/B whose variable
    /// is a request field (`{chat_template_kwargs: {enable_thinking: true}}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Arguments appended to and environment merged over `server`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerPatch {
    /// Appended after `server.args`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Merged over `server.env`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Verify rules of this variant alone, checked after `server.verify`'s and numbered on
    /// from them: what only this arm can show, e.g. `kernel: {matches: GroupProblemShape}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verify: Vec<crate::types::VerifyRule>,
}

/// Workload keys to sweep over. Each listed key multiplies the sweep points; points are
/// ordered with `max_concurrency` outermost, then `request_rate`, `input_tokens`,
/// `output_tokens`, `trace_speed`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// Values of `workload.max_concurrency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<Vec<u32>>,
    /// Values of `workload.request_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<Vec<Rate>>,
    /// Fixed values of `workload.dataset.input_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<Vec<u32>>,
    /// Fixed values of `workload.dataset.output_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<Vec<u32>>,
    /// Values of `workload.dataset.trace.speed` (a `trace` dataset): e.g. `[1, 2, 4]`
    /// replays the trace at its own pace, twice and four times as fast.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_speed: Option<Vec<f64>>,
    /// Extra points added after the matrix (keys not given take the workload's value). With
    /// no matrix key above, the sweep is exactly these points.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<SweepPointSpec>,
    /// Matrix points removed (a point matches when every key given here matches).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<SweepPointSpec>,
}

/// A (partial) sweep point in `include` / `exclude`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepPointSpec {
    /// `workload.max_concurrency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
    /// `workload.request_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<Rate>,
    /// `workload.dataset.input_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u32>,
    /// `workload.dataset.output_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u32>,
    /// `workload.dataset.trace.speed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_speed: Option<f64>,
    /// `workload.requests` for this point (`include` only): e.g. more requests at high
    /// concurrency, fewer at concurrency 1, so each point runs for a similar time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u32>,
}

/// Repetitions and their order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trials {
    /// Trials per cell (variant × sweep point). Fewer than 3 gives no interval; fewer than 5
    /// is warned about.
    #[serde(default = "default_trial_count")]
    #[schemars(range(min = 1))]
    pub count: u32,
    /// `interleaved` (A, B, A, B…; drift hits both arms alike), `blocked` (all of A, then
    /// B) or `random` (blocks shuffled with `seed`).
    #[serde(default)]
    pub order: TrialOrder,
    /// Seed of the `random` order (default: `workload.seed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// When the server is restarted: `per_block` (each block of one sweep), `per_trial`, or
    /// `once` per variant.
    #[serde(default)]
    pub server_restart: ServerRestart,
    /// Pause after every server start (before warm-up) and between trials.
    #[serde(default = "default_cooldown")]
    pub cooldown: HumanDuration,
    /// Sequential trials: after the first `count` trials per cell, keep adding one
    /// interleaved round of trials to the cells whose verdict is not yet decided, up to `max`
    /// trials per cell (docs/statistics-method.md, "Sequential trials").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_decided: Option<UntilDecided>,
    /// Trials of every cell in each server start (k): each block measures every sweep point
    /// `per_start` times. The start stays the unit of analysis: compare reads the mean of each
    /// start's trials (docs/statistics-method.md, "Nested designs"). Worth more than 1 when
    /// starts are expensive and trials within one start differ.
    #[serde(default = "default_per_start", skip_serializing_if = "is_one")]
    #[schemars(range(min = 1))]
    pub per_start: u32,
    /// `fixed` (default: `count` starts of `per_start` trials) or `optimize`: `count` and
    /// `per_start` are chosen from `optimize` to reach the precision at the least GPU time
    /// (`servebench plan --optimize` says how, and prints the values).
    #[serde(default, skip_serializing_if = "TrialDesign::is_fixed")]
    pub design: TrialDesign,
    /// What `design: optimize` reads: the two variance components and the costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimize: Option<OptimizeDesign>,
}

/// How `count` and `per_start` are set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrialDesign {
    /// As written.
    #[default]
    Fixed,
    /// Chosen from `trials.optimize` (docs/statistics-method.md, "Choosing n and k").
    Optimize,
}

impl TrialDesign {
    fn is_fixed(&self) -> bool {
        *self == TrialDesign::Fixed
    }
}

/// The stated values `design: optimize` chooses from (`servebench plan --optimize --from
/// RESULT` measures them from a pilot with `per_start` ≥ 2 and prints this block).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptimizeDesign {
    /// SD between server starts on the log scale (σ_between; 0.05 ≈ 5%).
    #[schemars(range(min = 0.0))]
    pub sd_between: f64,
    /// SD between trials within one start on the log scale (σ_within).
    #[schemars(range(min = 0.0))]
    pub sd_within: f64,
    /// Seconds one server start costs before its first trial: launch, readiness, warm-up.
    #[schemars(range(min = 0.0))]
    pub start_seconds: f64,
    /// Seconds one trial of every sweep point costs, cool-down included.
    #[schemars(range(min = 0.0))]
    pub trial_seconds: f64,
    /// The relative difference to detect (default: `compare.threshold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub theta: Option<f64>,
    /// Power 1 − β of detecting it (default 0.8).
    #[serde(default = "default_power")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub power: f64,
    /// Most trials per start (default 10).
    #[serde(default = "default_max_per_start")]
    #[schemars(range(min = 1))]
    pub max_per_start: u32,
}

fn default_per_start() -> u32 {
    1
}
fn is_one(v: &u32) -> bool {
    *v == 1
}
fn default_power() -> f64 {
    0.8
}
fn default_max_per_start() -> u32 {
    10
}

/// The budget of sequential trials. A cell (variant × sweep point) is *decided* when every
/// named metric is improved, regressed or equivalent on its repeated confidence interval;
/// likely-improved, likely-regressed and inconclusive cells get another round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UntilDecided {
    /// Most trials per cell, the first `count` included (at least `count`).
    #[schemars(range(min = 1))]
    pub max: u32,
    /// Metrics that must be decided (default: every metric of `compare.metrics`); each must
    /// be one `compare.metrics` lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<crate::metrics::MetricName>>")]
    pub metrics: Option<Vec<String>>,
    /// How the error rate α is spent over the looks: `obrien_fleming` (default: strict early,
    /// close to the fixed-sample interval at the end) or `pocock` (even: decides large
    /// effects sooner, wider at the end).
    #[serde(default)]
    pub spending: Spending,
}

/// Lan–DeMets alpha-spending function of sequential trials.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Spending {
    /// O'Brien–Fleming type: α(t) = 2 − 2Φ(z₁₋α/₂ / √t).
    #[default]
    ObrienFleming,
    /// Pocock type: α(t) = α·ln(1 + (e − 1)·t).
    Pocock,
}

fn default_trial_count() -> u32 {
    5
}
fn default_cooldown() -> HumanDuration {
    HumanDuration::from_secs(0)
}

impl Default for Trials {
    fn default() -> Self {
        Self {
            count: default_trial_count(),
            order: TrialOrder::default(),
            seed: None,
            server_restart: ServerRestart::default(),
            cooldown: default_cooldown(),
            until_decided: None,
            per_start: default_per_start(),
            design: TrialDesign::Fixed,
            optimize: None,
        }
    }
}

/// Order of blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrialOrder {
    /// For each trial index, one block of every variant.
    #[default]
    Interleaved,
    /// All blocks of the first variant, then the next (drift-prone).
    Blocked,
    /// Blocks shuffled with a seed.
    Random,
}

/// When the server is restarted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServerRestart {
    /// One start per block (one trial of every sweep point).
    #[default]
    PerBlock,
    /// One start per trial.
    PerTrial,
    /// One start per variant for all its trials (between-start variance not captured).
    Once,
}

/// Settings of `servebench compare`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareSettings {
    /// Metric names from the catalogue (listed below and in docs/metrics.md; editors
    /// complete them from the schema).
    #[serde(default = "default_metrics")]
    #[schemars(with = "Vec<crate::metrics::MetricName>")]
    pub metrics: Vec<String>,
    /// Practical threshold θ: a relative change smaller than this does not matter.
    #[serde(default = "default_threshold")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub threshold: f64,
    /// Per-metric thresholds overriding `threshold`, e.g. `{ttft_p99: 0.05}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(with = "crate::metrics::MetricThresholds")]
    pub thresholds: BTreeMap<String, f64>,
    /// Significance level α.
    #[serde(default = "default_alpha")]
    #[schemars(range(min = 0.0, max = 0.5))]
    pub alpha: f64,
    /// How the many tests of a comparison (every metric × point) are corrected for: `holm`
    /// (default: Holm's step-down decides every verdict, so the table and the multiplicity
    /// flag say the same) or `none` (each cell read at its own α).
    #[serde(default, skip_serializing_if = "Multiplicity::is_default")]
    pub multiplicity: Multiplicity,
    /// The CI gate: which conditions fail `servebench run` and `servebench compare` (exit
    /// code 1), at which metrics and points, with which non-inferiority margin
    /// (docs/compare.md, "Gates").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Gate>,
}

/// How a comparison's many tests are corrected for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Multiplicity {
    /// Holm's step-down over every metric × point: the verdicts shown are the corrected ones.
    #[default]
    Holm,
    /// None: each cell's verdict at its own α (the multiplicity flag says what that means).
    None,
}

impl Multiplicity {
    /// Whether this is the default (`holm`), which the canonical spec leaves out so that
    /// specs written before the setting existed keep their hash.
    pub fn is_default(&self) -> bool {
        *self == Multiplicity::Holm
    }
}

/// The CI gate of a comparison (docs/compare.md, "Gates").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    /// Conditions that fail the gate, as `--fail-on` names them: `not-shown-non-inferior`,
    /// `not-shown-superior`, `regressed`, `likely-regressed`, `inconclusive`, `suspicious`.
    /// `--fail-on` on the command line replaces them; with neither, nothing is gated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_on: Vec<GateCondition>,
    /// The gated metrics (default: every metric of `compare.metrics`); each must be one it
    /// lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Vec<String>>,
    /// The gated sweep points (default: every point): a point is gated when every key of
    /// some entry has its value, e.g. `[{max_concurrency: 32}]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<GatePoint>,
    /// θ of the non-inferiority and superiority gates, as a fraction (0.05: a loss of 5%),
    /// in place of each metric's `compare.threshold` / `compare.thresholds` entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub margin: Option<f64>,
}

/// Sweep keys that choose gated points: a point is gated when it has the value of every key
/// given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GatePoint {
    /// `workload.max_concurrency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
    /// `workload.request_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<Rate>,
    /// `workload.dataset.input_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u32>,
    /// `workload.dataset.output_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u32>,
    /// `workload.dataset.trace.speed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_speed: Option<f64>,
}

impl GatePoint {
    /// The same keys as a sweep entry, for [`crate::plan::SweepPoint::matches`].
    pub fn as_sweep_point(&self) -> SweepPointSpec {
        SweepPointSpec {
            max_concurrency: self.max_concurrency,
            request_rate: self.request_rate,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            trace_speed: self.trace_speed,
            requests: None,
        }
    }
}

/// A condition that fails a gate (docs/compare.md, "Gates").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GateCondition {
    /// A gated cell whose interval is not wholly above −θ: the candidate is not shown to
    /// be no worse than θ (an undecided cell fails).
    #[serde(alias = "not_shown_non_inferior")]
    NotShownNonInferior,
    /// A gated cell whose interval is not wholly above +θ: the candidate is not shown to be
    /// better by more than θ.
    #[serde(alias = "not_shown_superior")]
    NotShownSuperior,
    /// A gated cell that is regressed (significant and beyond −θ).
    Regressed,
    /// A gated cell that is regressed or likely regressed.
    #[serde(alias = "likely_regressed")]
    LikelyRegressed,
    /// A gated cell that is inconclusive, or could not be compared.
    Inconclusive,
    /// A re-baseline flag on a gated cell or on the whole comparison.
    Suspicious,
    /// The candidate's outputs changed beyond the baseline's own variation (the
    /// output-equivalence verdict `changed`, docs/equivalence.md).
    #[serde(alias = "output_changed")]
    OutputChanged,
    /// The candidate's task accuracy on `equivalence.reference` is significantly lower than
    /// the baseline's (McNemar's exact test at α, docs/equivalence.md).
    #[serde(alias = "accuracy_dropped")]
    AccuracyDropped,
}

fn default_metrics() -> Vec<String> {
    ["output_throughput", "ttft_p50", "tpot_p50", "e2e_mean"]
        .into_iter()
        .map(String::from)
        .collect()
}
fn default_threshold() -> f64 {
    0.02
}
fn default_alpha() -> f64 {
    0.05
}

impl Default for CompareSettings {
    fn default() -> Self {
        Self {
            metrics: default_metrics(),
            threshold: default_threshold(),
            thresholds: BTreeMap::new(),
            alpha: default_alpha(),
            multiplicity: Multiplicity::default(),
            gate: None,
        }
    }
}

/// Service-level objectives: a request counts toward goodput when it meets every one set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Slo {
    /// Time to first token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft: Option<HumanDuration>,
    /// Time per output token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot: Option<HumanDuration>,
    /// End-to-end latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e: Option<HumanDuration>,
}
