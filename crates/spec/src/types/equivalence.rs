//! `spec.equivalence`: the output-equivalence probe (docs/equivalence.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The output-equivalence probe: after each server start's warm-up, before its trials, a
/// fixed set of prompts — the same for every block, variant and repetition — is sent
/// greedily (`temperature: 0`, a fixed `seed`) at each of `concurrency`, and every
/// completion's tokens are recorded (token ids where the engine returns them, else the
/// text; log-probabilities where it gives them). `servebench compare` judges each variant's
/// outputs against the baseline's own repeatability across its server starts
/// (docs/equivalence.md). Off unless this block is given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Equivalence {
    /// How many prompts: drawn from the workload's dataset (default 16), or the first this
    /// many of `prompts_file` or `reference` (default: all of its lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub prompts: Option<u32>,
    /// Output tokens asked of each prompt (`max_tokens`).
    #[serde(default = "default_output_tokens")]
    #[schemars(range(min = 1))]
    pub output_tokens: u32,
    /// A JSONL file of your own prompts, one `{"prompt": "…"}` or `{"messages": […]}` a line
    /// (relative to the spec's folder), instead of prompts drawn from the workload's dataset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_file: Option<String>,
    /// A JSONL file of prompts with reference answers (relative to the spec's folder), one
    /// `{"prompt": "…", "answer": "…"}` (right when the completion's first line, trimmed,
    /// equals the answer) or `{"prompt": "…", "regex": "…"}` (right when the regex matches
    /// in the completion) a line: its prompts are the probe's, every completion is scored,
    /// and `servebench compare` compares the variants' accuracy with McNemar's paired test
    /// (docs/equivalence.md). Instead of `prompts_file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The concurrencies the prompts are sent at, in order: the first is the one variants
    /// are judged at (1: one request at a time); a second, e.g. `[1, 8]`, also judges them
    /// at that batch and measures each arm's batch invariance (its outputs at the first
    /// against the second).
    #[serde(default = "default_concurrency")]
    #[schemars(length(min = 1, max = 2))]
    pub concurrency: Vec<u32>,
    /// Sent as `seed` with every probe request where the engine takes it.
    #[serde(default)]
    pub seed: u64,
    /// The most likely tokens asked per position where the engine returns log-probabilities
    /// (its own ceiling applies; 0 asks only the chosen token's).
    #[serde(default = "default_top_logprobs")]
    #[schemars(range(max = 20))]
    pub top_logprobs: u32,
    /// Requests of a fixed warm-up prompt (not one of the probe's, so nothing it caches is a
    /// probe prompt) sent before the probe at each server start.
    #[serde(default = "default_warmup")]
    pub warmup_requests: u32,
    /// `unchanged` needs the interval on (candidate's divergence − the baseline's own) to
    /// end at or below this share of prompts: a larger change than this is ruled out.
    #[serde(default = "default_margin")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub margin: f64,
    /// With `reference`: `unchanged` accuracy needs the interval on the difference of
    /// accuracies within ±this.
    #[serde(default = "default_accuracy_margin")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub accuracy_margin: f64,
}

fn default_output_tokens() -> u32 {
    64
}
fn default_concurrency() -> Vec<u32> {
    vec![1]
}
fn default_top_logprobs() -> u32 {
    5
}
fn default_warmup() -> u32 {
    2
}
fn default_margin() -> f64 {
    0.25
}
fn default_accuracy_margin() -> f64 {
    0.05
}

/// Prompts drawn from the workload's dataset when `prompts` is not given.
pub const DEFAULT_PROBE_PROMPTS: u32 = 16;

impl Equivalence {
    /// The concurrency variants are judged at (the first of `concurrency`).
    pub fn reference_concurrency(&self) -> u32 {
        self.concurrency.first().copied().unwrap_or(1)
    }
}

impl Default for Equivalence {
    fn default() -> Self {
        Self {
            prompts: None,
            output_tokens: default_output_tokens(),
            prompts_file: None,
            reference: None,
            concurrency: default_concurrency(),
            seed: 0,
            top_logprobs: default_top_logprobs(),
            warmup_requests: default_warmup(),
            margin: default_margin(),
            accuracy_margin: default_accuracy_margin(),
        }
    }
}
