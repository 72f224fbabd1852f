//! `spec.workload`: the load of one trial.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::duration::HumanDuration;
use crate::rate::Rate;

/// The load of one trial at one sweep point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Where prompts come from and how long inputs and outputs are.
    pub dataset: Dataset,
    /// Ask the server to ignore end-of-sequence so every request generates exactly its
    /// output length (peers differ on this default; servebench makes it explicit).
    #[serde(default = "default_true")]
    pub ignore_eos: bool,
    /// Also send `min_tokens` equal to the output length (vLLM, SGLang and the simulator
    /// honour it).
    #[serde(default)]
    pub send_min_tokens: bool,
    /// Sampling temperature.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: f64,
    /// Seed of prompt generation; trial t at sweep point p uses a seed derived from
    /// (seed, t, p), the same for every variant.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Measured requests per trial (after warm-up). Set this or `duration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub requests: Option<u32>,
    /// Length of a trial in time, as an alternative to `requests`: the requests due before
    /// it has passed (by `request_rate` and `arrival`, which must then be a number) are
    /// sent, and the trial ends when the last of them has finished. Their number is drawn
    /// from the trial's seeded schedule before it starts, so exactly those prompts are
    /// prepared. A sweep point with its own `requests` (`sweep.include[].requests`) is a
    /// trial by count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<HumanDuration>,
    /// Requests per second: a number > 0, or `inf` to send as fast as the concurrency
    /// limit allows.
    #[serde(default = "default_rate")]
    pub request_rate: Rate,
    /// Arrival process used when `request_rate` is a number.
    #[serde(default)]
    pub arrival: ArrivalProcess,
    /// Gamma shape with `arrival: gamma`: 1 is Poisson, < 1 burstier, > 1 more regular.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burstiness: Option<f64>,
    /// Requests sent before each trial's measurement (same limit, excluded from metrics).
    #[serde(default)]
    pub warmup_requests: u32,
    /// Hard limit on requests in flight. Leave out for no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_concurrency: Option<u32>,
    /// A request still running after this long is cut and counted as a timeout.
    #[serde(default = "default_request_timeout")]
    pub request_timeout: HumanDuration,
    /// A whole trial (warm-up included) is cut after this long; unfinished requests count
    /// as timeouts. Default: no deadline besides the per-request timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_timeout: Option<HumanDuration>,
}

fn default_true() -> bool {
    true
}
fn default_seed() -> u64 {
    1
}
fn default_rate() -> Rate {
    Rate::Inf
}
fn default_request_timeout() -> HumanDuration {
    HumanDuration::from_secs(600)
}

/// How request arrival times are spaced when `request_rate` is a number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalProcess {
    /// Exponential gaps (the default of vLLM's and SGLang's benchmark clients).
    #[default]
    Poisson,
    /// Equal gaps of 1/rate.
    Constant,
    /// Gamma-distributed gaps with shape `burstiness`.
    Gamma,
}

/// Where prompts come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dataset {
    /// `random` (generated prompts of exact token length), `jsonl` (one `{"prompt"}` or
    /// `{"messages"}` object a line) or `sharegpt` (ShareGPT conversations).
    pub kind: DatasetKind,
    /// Input length in tokens (`random` only): a number, or `{min, max}` drawn uniformly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<TokenCount>,
    /// Output length in tokens (`max_tokens`): a number, or `{min, max}` drawn uniformly.
    /// Required for `random`; for files it overrides the lengths they carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<TokenCount>,
    /// Path of the prompt file (`jsonl`, `sharegpt`), relative to the spec file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Kinds of dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DatasetKind {
    /// Random words, adjusted to an exact token count.
    Random,
    /// A JSON-lines file of prompts.
    Jsonl,
    /// A ShareGPT-format JSON file.
    Sharegpt,
}

/// A token count: fixed, or drawn uniformly from an inclusive range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TokenCount {
    /// Exactly this many tokens.
    Fixed(#[schemars(range(min = 1))] u32),
    /// Uniform on `min..=max`.
    Range(TokenRange),
}

/// An inclusive range of token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenRange {
    /// Smallest count.
    #[schemars(range(min = 1))]
    pub min: u32,
    /// Largest count.
    #[schemars(range(min = 1))]
    pub max: u32,
}

impl TokenCount {
    /// The largest count this can produce.
    pub fn max(self) -> u32 {
        match self {
            TokenCount::Fixed(n) => n,
            TokenCount::Range(r) => r.max,
        }
    }
    /// The smallest count this can produce.
    pub fn min(self) -> u32 {
        match self {
            TokenCount::Fixed(n) => n,
            TokenCount::Range(r) => r.min,
        }
    }
}
