//! Command-line flags of `servebench sim`.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use crate::SimError;
use crate::config::{EngineParams, FaultParams, Preset, RequestRange, SimConfig};

mod output;
mod wire;

pub use output::OutputArgs;
pub use wire::WireArgs;

/// Flags of `servebench sim`. Engine flags left out take the `--preset`'s value.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// Address to bind.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,
    /// Port to bind; 0 picks a free one (the bound address is printed on stdout).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Model name served by /v1/models (alias `--served-model-name`, as SGLang and vLLM
    /// call it).
    #[arg(long, default_value = "sim-model", alias = "served-model-name")]
    pub model: String,
    /// Free-form label reported by /v1/sim/info and the start log line (e.g. a variant name).
    #[arg(long, default_value = "")]
    pub label: String,
    /// Named engine parameter set; the engine flags below override single values.
    #[arg(long, value_enum, default_value_t = Preset::Default)]
    pub preset: Preset,
    /// Seed of jitter, speed factor, EOS positions, generated text and faults.
    #[arg(long, default_value_t = 0, env = "SERVEBENCH_BLOCK_SEED")]
    pub seed: u64,
    /// Repetition index t (from 1) of the trials this server start measures; the runner
    /// sets SERVEBENCH_REPETITION. Drives --drift-per-repetition and
    /// --step-scale-repetitions.
    #[arg(long, default_value_t = 1, env = "SERVEBENCH_REPETITION")]
    pub repetition: u32,
    /// Require `Authorization: Bearer KEY` on /v1/* (except /v1/sim/*), /tokenize and
    /// /detokenize, as vLLM's --api-key does (401 otherwise). Never logged.
    #[arg(long)]
    pub api_key: Option<String>,
    /// Milliseconds a graceful shutdown (SIGTERM/SIGINT) waits for in-flight responses.
    #[arg(long, default_value_t = 5000)]
    pub shutdown_grace_ms: u64,
    /// Keep a prefix cache: leading prompt blocks seen before skip prefill and are reported
    /// as `usage.prompt_tokens_details.cached_tokens` and `timings.cache_n` (off by default).
    #[arg(long)]
    pub prefix_cache: bool,
    /// Tokens per prefix-cache block (only whole blocks are cached).
    #[arg(long, default_value_t = 16, value_name = "TOKENS")]
    pub prefix_cache_block: u32,
    /// Most tokens the prefix cache holds; the least recently used blocks are evicted.
    #[arg(long, default_value_t = 1 << 20, value_name = "TOKENS")]
    pub prefix_cache_capacity: u64,
    /// Serve HTTPS only (TLS 1.2/1.3), with this certificate chain (PEM, leaf first); needs
    /// --tls-key. The listening line then says `https://`.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Append every generation request's JSON body, as received, one line each, to FILE
    /// (created if missing): what a client really sent.
    #[arg(long, value_name = "FILE")]
    pub record_requests: Option<std::path::PathBuf>,
    /// Run as a worker rank of a multi-node server (servebench's Slurm tests): bind nothing,
    /// print a start line with the label, and stay alive until SIGTERM or SIGINT (exit 0), or
    /// until the head at --head-url, having answered once, stops answering (exit 1). Every
    /// other flag is accepted and ignored, so head and workers can share a command line.
    #[arg(long)]
    pub worker: bool,
    /// The head a worker watches: its base URL, e.g. `http://127.0.0.1:8000` (`GET /health`
    /// every half second).
    #[arg(long, value_name = "URL", requires = "worker")]
    pub head_url: Option<String>,
    /// Engine model parameters.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Fault injection.
    #[command(flatten)]
    pub faults: FaultArgs,
    /// The engine personality.
    #[command(flatten)]
    pub wire: WireArgs,
    /// The output text.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Engine flags; `None` means "the preset's value".
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Engine model (defaults from --preset)")]
pub struct EngineArgs {
    /// Set every modelled time and all noise to zero: stream as fast as possible.
    #[arg(long)]
    pub zero_delay: bool,
    /// Most sequences running at once.
    #[arg(long)]
    pub max_num_seqs: Option<u32>,
    /// KV-cache capacity in tokens; a request reserves prompt + max_tokens.
    #[arg(long)]
    pub kv_capacity_tokens: Option<u64>,
    /// Token budget of one engine step (decode tokens + prefill chunk).
    #[arg(long, alias = "max-num-batched-tokens")]
    pub max_batched_tokens: Option<u32>,
    /// Longest prompt + max_tokens accepted.
    #[arg(long)]
    pub max_model_len: Option<u32>,
    /// Prefill cost per prompt token, ms.
    #[arg(long)]
    pub prefill_ms_per_token: Option<f64>,
    /// Fixed cost of every step, ms.
    #[arg(long)]
    pub decode_base_ms: Option<f64>,
    /// Step cost per decoding sequence, ms.
    #[arg(long)]
    pub decode_per_seq_ms: Option<f64>,
    /// Coefficient of variation of per-step lognormal noise.
    #[arg(long)]
    pub jitter_cv: Option<f64>,
    /// Coefficient of variation of the per-process speed factor drawn from the seed.
    #[arg(long)]
    pub speed_cv: Option<f64>,
    /// Coefficient of variation of a per-trial factor within a server start: every
    /// --trial-requests generation requests (warm-up included) draw a new factor (seeded).
    #[arg(long, value_name = "C")]
    pub trial_cv: Option<f64>,
    /// Generation requests of one trial, warm-up included (what --trial-cv counts in).
    #[arg(long, value_name = "N")]
    pub trial_requests: Option<u64>,
    /// Relative step-time change per minute since start (0.01 = 1% slower each minute).
    #[arg(long, allow_negative_numbers = true)]
    pub drift_per_min: Option<f64>,
    /// Relative step-time change per repetition of the run: every step of a server start at
    /// repetition t is × (1 + F·(t − 1)) (0.02 = 2% slower per trial).
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    pub drift_per_repetition: Option<f64>,
    /// Multiply step times by F (> 0; below 1 is faster) for the server starts and requests
    /// chosen by --step-scale-repetitions and --step-scale-requests (default: all). A step is
    /// scaled when any request in it is chosen.
    #[arg(long, value_name = "F")]
    pub step_scale: Option<f64>,
    /// Repetitions (t, from 1, comma-separated) whose server starts --step-scale applies to.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub step_scale_repetitions: Option<Vec<u32>>,
    /// Requests --step-scale applies to: A..B (inclusive) or A.., numbered from 1 over the
    /// generation requests this server start received, warm-up included, in arrival order.
    #[arg(long, value_name = "A..B")]
    pub step_scale_requests: Option<RequestRange>,
    /// Multiply every modelled time by F (> 0): 0.1 runs ten times quicker with the same
    /// shape (throughput × 10, latencies ÷ 10).
    #[arg(long, value_name = "F")]
    pub time_scale: Option<f64>,
    /// Speed of the simulated host relative to the modelled one (> 0): every step takes
    /// 1/S as long (0.8: a host 20% slower). Given to every variant it moves every arm
    /// alike, to one variant that arm alone (docs/rerun.md, "Levels and effects").
    #[arg(long, value_name = "S")]
    pub host_speed: Option<f64>,
    /// Mean output length before a simulated EOS (requests without ignore_eos); 0 = never.
    #[arg(long)]
    pub eos_mean_tokens: Option<f64>,
    /// max_tokens used when a request gives none.
    #[arg(long)]
    pub default_max_tokens: Option<u32>,
}

/// Fault-injection flags; all off by default.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Fault injection")]
pub struct FaultArgs {
    /// Answer 503 on /health, /v1/models and generation for this long after start, ms.
    #[arg(long, default_value_t = 0)]
    pub startup_delay_ms: u64,
    /// Share of generation requests answered with HTTP 500.
    #[arg(long, default_value_t = 0.0)]
    pub error_rate_500: f64,
    /// Share of generation requests answered with HTTP 429.
    #[arg(long, default_value_t = 0.0)]
    pub error_rate_429: f64,
    /// Share of generation requests whose connection is cut mid-response.
    #[arg(long, default_value_t = 0.0)]
    pub disconnect_rate: f64,
    /// Share of generation requests that pause --stall-ms mid-response.
    #[arg(long, default_value_t = 0.0)]
    pub stall_rate: f64,
    /// Length of an injected stall, ms.
    #[arg(long, default_value_t = 1000)]
    pub stall_ms: u64,
    /// Share of streaming requests that get one broken-JSON SSE event.
    #[arg(long, default_value_t = 0.0)]
    pub malformed_rate: f64,
    /// Share of streaming requests whose generation fails mid-stream, ended as the
    /// engine ends it (an error event, or TensorRT-LLM's chat: the connection cut).
    #[arg(long, default_value_t = 0.0)]
    pub stream_error_rate: f64,
    /// Exit the whole server right after this many generation requests were answered.
    #[arg(long)]
    pub exit_after_requests: Option<u64>,
    /// Readiness flaps: after the start-up delay, each period of this many ms ends with
    /// --flap-down-ms of 503s on /health, /v1/models and generation; 0 = off.
    #[arg(long, default_value_t = 0)]
    pub flap_period_ms: u64,
    /// The unready part of each flap period, ms.
    #[arg(long, default_value_t = 0)]
    pub flap_down_ms: u64,
}

impl Default for FaultArgs {
    fn default() -> Self {
        let d = FaultParams::default();
        FaultArgs {
            startup_delay_ms: d.startup_delay_ms,
            error_rate_500: d.error_rate_500,
            error_rate_429: d.error_rate_429,
            disconnect_rate: d.disconnect_rate,
            stall_rate: d.stall_rate,
            stall_ms: d.stall_ms,
            malformed_rate: d.malformed_rate,
            stream_error_rate: d.stream_error_rate,
            exit_after_requests: d.exit_after_requests,
            flap_period_ms: d.flap_period_ms,
            flap_down_ms: d.flap_down_ms,
        }
    }
}

impl EngineArgs {
    fn apply(&self, base: EngineParams) -> EngineParams {
        let p = EngineParams {
            max_num_seqs: self.max_num_seqs.unwrap_or(base.max_num_seqs),
            kv_capacity_tokens: self.kv_capacity_tokens.unwrap_or(base.kv_capacity_tokens),
            max_batched_tokens: self.max_batched_tokens.unwrap_or(base.max_batched_tokens),
            max_model_len: self.max_model_len.unwrap_or(base.max_model_len),
            prefill_ms_per_token: self
                .prefill_ms_per_token
                .unwrap_or(base.prefill_ms_per_token),
            decode_base_ms: self.decode_base_ms.unwrap_or(base.decode_base_ms),
            decode_per_seq_ms: self.decode_per_seq_ms.unwrap_or(base.decode_per_seq_ms),
            jitter_cv: self.jitter_cv.unwrap_or(base.jitter_cv),
            speed_cv: self.speed_cv.unwrap_or(base.speed_cv),
            trial_cv: self.trial_cv.unwrap_or(base.trial_cv),
            trial_requests: self.trial_requests.unwrap_or(base.trial_requests),
            drift_per_min: self.drift_per_min.unwrap_or(base.drift_per_min),
            drift_per_repetition: self
                .drift_per_repetition
                .unwrap_or(base.drift_per_repetition),
            step_scale: self.step_scale.unwrap_or(base.step_scale),
            step_scale_repetitions: self
                .step_scale_repetitions
                .clone()
                .or(base.step_scale_repetitions),
            step_scale_requests: self.step_scale_requests.or(base.step_scale_requests),
            time_scale: self.time_scale.unwrap_or(base.time_scale),
            host_speed: self.host_speed.unwrap_or(base.host_speed),
            eos_mean_tokens: self.eos_mean_tokens.unwrap_or(base.eos_mean_tokens),
            default_max_tokens: self.default_max_tokens.unwrap_or(base.default_max_tokens),
        };
        if self.zero_delay { p.zero_delay() } else { p }
    }
}

impl SimArgs {
    /// Resolves the preset and overrides into a validated configuration.
    pub fn to_config(&self) -> Result<SimConfig, SimError> {
        let e = &self.engine;
        if e.step_scale.is_none()
            && (e.step_scale_repetitions.is_some() || e.step_scale_requests.is_some())
        {
            return Err(SimError::InvalidConfig(
                "--step-scale-repetitions and --step-scale-requests choose where --step-scale \
                 applies: give --step-scale F too"
                    .into(),
            ));
        }
        let f = &self.faults;
        let config = SimConfig {
            host: self.host,
            port: self.port,
            model: self.model.clone(),
            label: self.label.clone(),
            preset: self.preset,
            seed: self.seed,
            repetition: self.repetition,
            engine: self.engine.apply(self.preset.engine()),
            faults: FaultParams {
                startup_delay_ms: f.startup_delay_ms,
                error_rate_500: f.error_rate_500,
                error_rate_429: f.error_rate_429,
                disconnect_rate: f.disconnect_rate,
                stall_rate: f.stall_rate,
                stall_ms: f.stall_ms,
                malformed_rate: f.malformed_rate,
                stream_error_rate: f.stream_error_rate,
                exit_after_requests: f.exit_after_requests,
                flap_period_ms: f.flap_period_ms,
                flap_down_ms: f.flap_down_ms,
            },
            api_key: self.api_key.clone().map(crate::config::ApiKey),
            shutdown_grace: Duration::from_millis(self.shutdown_grace_ms),
            prefix_cache: self
                .prefix_cache
                .then_some(crate::prefix_cache::PrefixCacheParams {
                    block_tokens: self.prefix_cache_block,
                    capacity_tokens: self.prefix_cache_capacity,
                }),
            tls: match (&self.tls_cert, &self.tls_key) {
                (Some(cert), Some(key)) => Some(crate::config::TlsFiles {
                    cert: cert.clone(),
                    key: key.clone(),
                }),
                _ => None,
            },
            wire: self.wire.to_params(),
            output: self.output.to_params()?,
            record_requests: self.record_requests.clone(),
        };
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests;
