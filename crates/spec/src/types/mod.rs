//! The spec types of `apiVersion: servebench/v1alpha1`.
//!
//! Every struct denies unknown keys; every default is written here once and documented in
//! `docs/spec.md` (a test keeps the two in step).

mod equivalence;
mod evidence;
mod experiment;
mod launcher;
mod search;
mod server;
mod setup;
mod target;
mod telemetry;
mod workload;

pub use equivalence::*;
pub use evidence::*;
pub use experiment::*;
pub use launcher::*;
pub use search::*;
pub use server::*;
pub use setup::Setup;
pub use target::*;
pub use telemetry::{GpuSampling, ModelFacts, ServerMetrics, TelemetrySettings, default_interval};
pub use workload::*;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The only spec format version this build reads.
pub const API_VERSION: &str = "servebench/v1alpha1";

/// A whole spec file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "servebench experiment spec")]
pub struct SpecFile {
    /// Format version: `servebench/v1alpha1`.
    #[serde(rename = "apiVersion")]
    pub api_version: ApiVersion,
    /// Document kind: `Experiment`.
    pub kind: Kind,
    /// Name, description and labels.
    pub metadata: Metadata,
    /// The experiment.
    pub spec: ExperimentSpec,
}

/// Spec format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ApiVersion {
    /// The first, alpha format.
    #[serde(rename = "servebench/v1alpha1")]
    V1Alpha1,
}

/// Document kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Kind {
    /// An experiment: variants compared under a workload.
    Experiment,
}

/// Who the experiment is, for people and for result paths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    /// Lower-case letters, digits, `.`, `_` and `-`; names the folder `results/<name>/`.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9._-]{0,127}$"))]
    pub name: String,
    /// What the experiment asks, in a sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Free-form labels (team, ticket, hardware class…).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// The body of an experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    /// How to launch the server. Leave out to benchmark an already running `target.base_url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Server>,
    /// The API the load is sent to.
    pub target: Target,
    /// The arms being compared; exactly one is the baseline.
    #[schemars(length(min = 1))]
    pub variants: Vec<Variant>,
    /// The load of one trial.
    pub workload: Workload,
    /// Workload values to sweep over; each combination is a sweep point.
    #[serde(default)]
    pub sweep: Sweep,
    /// Repetitions, their order and server restarts.
    #[serde(default)]
    pub trials: Trials,
    /// Metrics and thresholds for `servebench compare`.
    #[serde(default)]
    pub compare: CompareSettings,
    /// Service-level objectives that define goodput.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,
    /// Find each variant's capacity under `slo` instead of measuring `sweep` points
    /// (docs/search.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<Search>,
    /// Commands whose output and files whose hashes are recorded with each result.
    #[serde(default)]
    pub provenance: Provenance,
    /// GPU samples and the server's Prometheus metrics during every trial, and the validity
    /// flags `compare` reads from them (docs/gpu.md, "Telemetry"): `telemetry: on`, or the
    /// settings; absent, the server's metrics alone are scraped where the engine profile
    /// names an endpoint; `off`, nothing. Not in the spec hash.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "telemetry::deserialize_telemetry"
    )]
    #[schemars(schema_with = "telemetry::telemetry_schema")]
    pub telemetry: Option<TelemetrySettings>,
    /// The model's parameters, bytes per weight and KV bytes per token (or a local
    /// `config.json`): the memory-bound decode ceiling each point's throughput is shown
    /// against (docs/gpu.md, "The physical limit"). Not in the spec hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_facts: Option<ModelFacts>,
    /// The output-equivalence probe: at each server start, a fixed set of prompts sent
    /// greedily, so that `compare` can say whether a variant still computes what the
    /// baseline computes (docs/equivalence.md). Off unless given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equivalence: Option<Equivalence>,
    /// Evidence taken from the server at each start, after its warm-up and before its
    /// first trial: the kernels it launched (`evidence.kernels`, docs/kernels.md). Off
    /// unless given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// Files a named set-up script makes before the run (`script`, `makes`): `validate`
    /// on a machine that has not run it says each is made by it instead of failing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Setup>,
}

/// Recorded context of a run: e.g. `pip show sglang`, the model weights' hashes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Shell commands (run with `sh -c`) whose output is stored in the result.
    #[serde(default)]
    pub commands: Vec<String>,
    /// Files whose sha256 is stored in the result.
    #[serde(default)]
    pub files: Vec<String>,
}
