//! `spec.telemetry` (what the GPUs and the server were doing during each trial) and
//! `spec.model_facts` (what the memory-bound decode ceiling is computed from).
//!
//! Both describe how a run is observed, not what it measures: they are left out of the spec
//! hash (`crate::hash`), so turning telemetry on keeps a spec's hash, and `run --resume`
//! may change them.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::duration::HumanDuration;

/// Telemetry during every trial (docs/gpu.md, "Telemetry"): GPU samples and the server's
/// Prometheus metrics. Turned on by `telemetry: on` (or `true`, or this map). Absent: the
/// server's metrics are scraped where its engine profile names an endpoint (an A/A with and
/// without the scrape showed no shift, docs/statistics-measured.md) and no GPU is sampled;
/// `off` (or `false`): nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySettings {
    /// Where GPU samples come from: `auto` (NVML, loaded at run time, else `nvidia-smi`),
    /// `nvml`, `nvidia-smi`, or `off`. A machine without a GPU records that it sampled none.
    #[serde(default)]
    pub gpu: GpuSampling,
    /// Scrape the engine's Prometheus endpoint (path and names from its engine profile):
    /// `auto` or `off`.
    #[serde(default)]
    pub server_metrics: ServerMetrics,
    /// The endpoint to scrape instead of the engine profile's (e.g. `/metrics`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_path: Option<String>,
    /// Time between two samples (GPU and server), from 50ms to 5s.
    #[serde(default = "default_interval")]
    pub interval: HumanDuration,
    /// Peak memory bandwidth of one GPU in GB/s, instead of the table's figure for its name
    /// (docs/gpu.md, "The physical limit").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hbm_gb_per_s: Option<f64>,
}

impl TelemetrySettings {
    /// `telemetry: off`: nothing sampled, nothing scraped.
    pub fn off() -> Self {
        TelemetrySettings {
            gpu: GpuSampling::Off,
            server_metrics: ServerMetrics::Off,
            ..TelemetrySettings::default()
        }
    }

    /// `telemetry` absent: the engine's metrics scraped where its profile names an
    /// endpoint, GPUs not sampled (that stays opt-in: it needs NVML or `nvidia-smi`).
    pub fn unasked() -> Self {
        TelemetrySettings {
            gpu: GpuSampling::Off,
            ..TelemetrySettings::default()
        }
    }

    /// Nothing sampled and nothing scraped.
    pub fn is_off(&self) -> bool {
        self.gpu == GpuSampling::Off && self.server_metrics == ServerMetrics::Off
    }
}

/// The default sampling interval: 200 ms.
pub fn default_interval() -> HumanDuration {
    HumanDuration::from_millis(200)
}

impl Default for TelemetrySettings {
    fn default() -> Self {
        TelemetrySettings {
            gpu: GpuSampling::Auto,
            server_metrics: ServerMetrics::Auto,
            metrics_path: None,
            interval: default_interval(),
            hbm_gb_per_s: None,
        }
    }
}

/// Where GPU samples come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GpuSampling {
    /// NVML where `libnvidia-ml.so.1` loads, else `nvidia-smi` where it is on `PATH`, else
    /// none (recorded, not an error).
    #[default]
    Auto,
    /// NVML only.
    Nvml,
    /// `nvidia-smi --query-gpu` only.
    NvidiaSmi,
    /// No GPU sampling.
    Off,
}

/// Whether the server's metrics are scraped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ServerMetrics {
    /// Where the engine profile (or `metrics_path`) names an endpoint.
    #[default]
    Auto,
    /// Never.
    Off,
}

/// How `telemetry` may be written: `on`/`off`, `true`/`false`, or the settings.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum TelemetryInput {
    /// `true` / `false`.
    Switch(bool),
    /// `on` / `off`.
    Word(OnOff),
    /// The settings (on).
    Settings(TelemetrySettings),
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum OnOff {
    On,
    Off,
}

/// Reads `telemetry: on | off | true | false | {…}` into the settings: `on` the defaults,
/// `off` [`TelemetrySettings::off`]; absent stays `None` (the runner's default,
/// [`TelemetrySettings::unasked`]).
pub(crate) fn deserialize_telemetry<'de, D>(d: D) -> Result<Option<TelemetrySettings>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(match Option::<TelemetryInput>::deserialize(d)? {
        None => None,
        Some(TelemetryInput::Switch(false)) | Some(TelemetryInput::Word(OnOff::Off)) => {
            Some(TelemetrySettings::off())
        }
        Some(TelemetryInput::Switch(true)) | Some(TelemetryInput::Word(OnOff::On)) => {
            Some(TelemetrySettings::default())
        }
        Some(TelemetryInput::Settings(s)) => Some(s),
    })
}

/// The schema of `telemetry`: the switch or the settings.
pub(crate) fn telemetry_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    <Option<TelemetryInput>>::json_schema(g)
}

/// What the memory-bound decode ceiling is computed from (docs/gpu.md, "The physical
/// limit"): the parameters read per decode step and the KV cache read per token in context.
/// Either every figure is given, or `config` names a Hugging Face `config.json` they are
/// computed from (figures given here win).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelFacts {
    /// Parameters of the whole model (e.g. `8.03e9`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_params: Option<f64>,
    /// Parameters one token passes through (a mixture of experts: the shared ones and the
    /// experts of one token); the total for a dense model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_params: Option<f64>,
    /// Bytes per weight as served: 2 for bf16/fp16, 1 for fp8, 0.5 for 4-bit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_weight: Option<f64>,
    /// Bytes of KV cache per token in context (all layers, keys and values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_bytes_per_token: Option<f64>,
    /// A local Hugging Face `config.json` (relative to the spec's folder) the figures not
    /// given are computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// Bytes of one KV-cache element, for `kv_bytes_per_token` from `config` (default: 2,
    /// bf16/fp16; 1 for an fp8 cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_bytes_per_element: Option<f64>,
}
