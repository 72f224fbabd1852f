//! `spec.evidence`: proof taken from the server while it runs, beyond what it says about
//! itself — the kernels it launched (docs/kernels.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::duration::HumanDuration;

/// Evidence taken at each server start, after its warm-up and before its first trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// The engine's profiler around a short probe load: the kernels (or, on a CPU, the
    /// operators) that ran, per rank, and where the time went (docs/kernels.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels: Option<KernelEvidenceSpec>,
}

/// `evidence.kernels`: start the engine's profiler, send probe load, stop it, read the
/// traces it wrote. `server.verify` rules of kind `kernel` are judged on them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelEvidenceSpec {
    /// The directory the engine writes its traces to, readable from this host (under Slurm:
    /// shared storage). servebench makes it. Engines told the directory per request
    /// (SGLang, servebench's transformers launcher) write each start's traces to its own
    /// folder below it; vLLM is told it at launch (`--profiler-config`), so its server
    /// arguments must name the same directory.
    pub dir: String,
    /// Concurrency of the probe load. Default: the smallest sweep point's `max_concurrency`
    /// (1 where a point has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub concurrency: Option<u32>,
    /// Requests of the probe load, prompts drawn like a trial's at the smallest point
    /// (prefill and decode both). Default: twice the concurrency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub requests: Option<u32>,
    /// Output tokens of each probe request (a random or shared-prefix dataset's; others keep
    /// their own): fewer decode steps, a smaller trace. Default: the point's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub output_tokens: Option<u32>,
    /// How long to wait, after the profiler was stopped, for its traces to be fully written.
    #[serde(default = "default_trace_timeout")]
    pub timeout: HumanDuration,
}

fn default_trace_timeout() -> HumanDuration {
    HumanDuration::from_secs(120)
}

/// A verify rule on the kernel evidence (`evidence.kernels`): `matches` (with `min_share`)
/// or `absent`. Judged on every rank's trace: it holds only if it holds on each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelCheck {
    /// A regular expression: the kernels whose names match it must have run, with at least
    /// `min_share` of the busy time together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// With `matches`: the least share of the rank's busy time (0–1) the matching kernels
    /// must take. Default: any time at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_share: Option<f64>,
    /// A regular expression no kernel name may match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
}
