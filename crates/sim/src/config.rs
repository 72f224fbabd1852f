//! Resolved configuration: what the engine, the faults and the server run with.
//!
//! [`SimArgs`](crate::SimArgs) (the CLI flags) resolves into a [`SimConfig`] by taking a
//! [`Preset`] and overriding the values given explicitly.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use serde::Serialize;

use crate::SimError;

mod answers;
mod faults;
mod output;

pub(crate) use answers::Answers;
pub use faults::{FaultParams, RequestRange};
pub(crate) use output::AnswerParams;
pub use output::OutputParams;
pub(crate) use servebench_engines::Engine;
pub use servebench_engines::dialect::{FlashAttn, SglangLogForm, WireParams, engine_name};
pub(crate) use servebench_engines::dialect::{ProfilerParams, Served, engine_named, engine_names};

/// Largest accepted per-token or per-step cost, ms.
const MAX_COST_MS: f64 = 60_000.0;
/// Largest accepted start-up delay or stall, ms (one day).
const MAX_DELAY_MS: u64 = 86_400_000;
/// Largest accepted `step_scale` or `time_scale`.
const MAX_SCALE: f64 = 1000.0;

/// Named engine parameter sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// An 8B-class model on one modern GPU: 256 sequences, 10 ms decode steps, small jitter.
    Default,
    /// Short steps (1 ms) for quick functional tests that still batch and queue.
    Fast,
    /// A small engine (4 sequences, 4096 KV tokens, 5 ms + 1 ms/seq steps) that saturates
    /// at low concurrency, to exercise queueing.
    Tiny,
    /// No modelled time at all: tokens stream as fast as the HTTP stack takes them.
    ZeroDelay,
}

impl Preset {
    /// The preset's engine parameters.
    pub fn engine(self) -> EngineParams {
        let default = EngineParams {
            max_num_seqs: 256,
            kv_capacity_tokens: 262_144,
            max_batched_tokens: 8192,
            max_model_len: 8192,
            prefill_ms_per_token: 0.025,
            decode_base_ms: 10.0,
            decode_per_seq_ms: 0.04,
            jitter_cv: 0.02,
            speed_cv: 0.02,
            trial_cv: 0.0,
            trial_requests: 0,
            drift_per_min: 0.0,
            drift_per_repetition: 0.0,
            step_scale: 1.0,
            step_scale_repetitions: None,
            step_scale_requests: None,
            time_scale: 1.0,
            host_speed: 1.0,
            eos_mean_tokens: 0.0,
            default_max_tokens: 256,
        };
        match self {
            Preset::Default => default,
            Preset::Fast => EngineParams {
                prefill_ms_per_token: 0.002,
                decode_base_ms: 1.0,
                decode_per_seq_ms: 0.005,
                jitter_cv: 0.0,
                speed_cv: 0.0,
                ..default
            },
            Preset::Tiny => EngineParams {
                max_num_seqs: 4,
                kv_capacity_tokens: 4096,
                max_batched_tokens: 512,
                max_model_len: 4096,
                prefill_ms_per_token: 0.05,
                decode_base_ms: 5.0,
                decode_per_seq_ms: 1.0,
                jitter_cv: 0.0,
                speed_cv: 0.0,
                ..default
            },
            Preset::ZeroDelay => EngineParams {
                max_num_seqs: 65_536,
                kv_capacity_tokens: u64::MAX / 4,
                max_batched_tokens: 1 << 24,
                max_model_len: 1 << 20,
                ..default
            }
            .zero_delay(),
        }
    }

    /// The preset's name as written on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Default => "default",
            Preset::Fast => "fast",
            Preset::Tiny => "tiny",
            Preset::ZeroDelay => "zero-delay",
        }
    }
}

/// The engine model's parameters. Times are milliseconds of simulated GPU time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineParams {
    /// Most sequences running at once (vLLM `--max-num-seqs`).
    pub max_num_seqs: u32,
    /// KV-cache capacity in tokens. A sequence reserves `prompt + max_tokens` when admitted;
    /// admission waits (FIFO) while the reservation does not fit.
    pub kv_capacity_tokens: u64,
    /// Token budget of one step (vLLM `--max-num-batched-tokens`): one per decoding sequence,
    /// the rest goes to prompt chunks (chunked prefill).
    pub max_batched_tokens: u32,
    /// Longest `prompt + max_tokens` a request may ask for (larger: HTTP 400).
    pub max_model_len: u32,
    /// Prefill cost of one prompt token.
    pub prefill_ms_per_token: f64,
    /// Fixed cost of every step.
    pub decode_base_ms: f64,
    /// Extra step cost for every decoding sequence in the batch.
    pub decode_per_seq_ms: f64,
    /// Coefficient of variation of the per-step multiplicative lognormal noise (0: none).
    pub jitter_cv: f64,
    /// Coefficient of variation of the per-process speed factor drawn from the seed (0: 1.0).
    pub speed_cv: f64,
    /// Coefficient of variation of a per-trial factor within one server start (0: none):
    /// every `trial_requests` generation requests (warm-up included, in arrival order) draw a
    /// new lognormal factor of mean 1 from the seed and their number — the within-start
    /// variance of nested designs (`trials.per_start`).
    pub trial_cv: f64,
    /// Generation requests of one trial, warm-up included (what `trial_cv` counts in).
    pub trial_requests: u64,
    /// Relative slowdown per minute since start: step time × (1 + drift × minutes), in
    /// modelled minutes (wall minutes ÷ `time_scale`).
    pub drift_per_min: f64,
    /// Relative slowdown per repetition of the run: every step of a server start at
    /// repetition t ([`SimConfig::repetition`]) × (1 + drift × (t − 1)), floored at 0.05.
    pub drift_per_repetition: f64,
    /// Factor on the time of every step that holds a selected request, at a selected server
    /// start (1: off; below 1: faster).
    pub step_scale: f64,
    /// Repetitions (t, from 1) whose server starts `step_scale` applies to; `None`: all.
    pub step_scale_repetitions: Option<Vec<u32>>,
    /// Requests that select `step_scale`, numbered from 1 over the generation requests one
    /// server start received (warm-up included) in arrival order; `None`: all.
    pub step_scale_requests: Option<RequestRange>,
    /// Factor on every modelled time (1: as modelled; 0.1: ten times quicker).
    pub time_scale: f64,
    /// Speed of the simulated host (1: as modelled; 0.8: every step takes 1/0.8 as long).
    pub host_speed: f64,
    /// Mean output length at which a simulated EOS stops a request that does not set
    /// `ignore_eos` (geometric, seeded); 0 disables EOS.
    pub eos_mean_tokens: f64,
    /// `max_tokens` when a request gives none.
    pub default_max_tokens: u32,
}

impl EngineParams {
    /// These parameters with every modelled time and all noise set to zero.
    pub fn zero_delay(self) -> Self {
        EngineParams {
            prefill_ms_per_token: 0.0,
            decode_base_ms: 0.0,
            decode_per_seq_ms: 0.0,
            jitter_cv: 0.0,
            speed_cv: 0.0,
            drift_per_min: 0.0,
            drift_per_repetition: 0.0,
            ..self
        }
    }

    /// True when `step_scale` applies at a server start of repetition `t` (from 1).
    pub fn step_scale_at(&self, t: u32) -> bool {
        self.step_scale != 1.0
            && self
                .step_scale_repetitions
                .as_ref()
                .is_none_or(|reps| reps.contains(&t))
    }

    /// True when `step_scale` applies to request number `n` (from 1) of a server start of
    /// repetition `t`.
    pub fn step_scale_selects(&self, t: u32, n: u64) -> bool {
        self.step_scale_at(t) && self.step_scale_requests.is_none_or(|r| r.contains(n))
    }

    /// The factor on every step of a server start at repetition `t` (from 1):
    /// `1 + drift_per_repetition × (t − 1)`, floored at 0.05.
    pub fn repetition_factor(&self, t: u32) -> f64 {
        (1.0 + self.drift_per_repetition * f64::from(t.saturating_sub(1))).max(0.05)
    }

    /// True when no step takes any modelled time.
    pub fn is_zero_delay(&self) -> bool {
        self.prefill_ms_per_token == 0.0
            && self.decode_base_ms == 0.0
            && self.decode_per_seq_ms == 0.0
    }

    /// Checks ranges and consistency.
    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |m: String| Err(SimError::InvalidConfig(m));
        if self.max_num_seqs == 0 {
            return bad("max_num_seqs must be at least 1".into());
        }
        if self.max_batched_tokens < self.max_num_seqs {
            return bad(format!(
                "max_batched_tokens ({}) must be >= max_num_seqs ({}), as in vLLM: every running \
                 sequence needs one token of the step budget",
                self.max_batched_tokens, self.max_num_seqs
            ));
        }
        if self.max_model_len < 2 {
            return bad("max_model_len must be at least 2".into());
        }
        if self.kv_capacity_tokens < u64::from(self.max_model_len) {
            return bad(format!(
                "kv_capacity_tokens ({}) must hold at least one max_model_len ({}) request",
                self.kv_capacity_tokens, self.max_model_len
            ));
        }
        let non_negative = [
            ("prefill_ms_per_token", self.prefill_ms_per_token),
            ("decode_base_ms", self.decode_base_ms),
            ("decode_per_seq_ms", self.decode_per_seq_ms),
            ("jitter_cv", self.jitter_cv),
            ("speed_cv", self.speed_cv),
            ("trial_cv", self.trial_cv),
            ("eos_mean_tokens", self.eos_mean_tokens),
        ];
        for (name, v) in non_negative {
            if !v.is_finite() || v < 0.0 {
                return bad(format!("{name} must be a finite number >= 0, got {v}"));
            }
        }
        let costs = [
            ("prefill_ms_per_token", self.prefill_ms_per_token),
            ("decode_base_ms", self.decode_base_ms),
            ("decode_per_seq_ms", self.decode_per_seq_ms),
        ];
        for (name, v) in costs {
            if v > MAX_COST_MS {
                return bad(format!("{name} must be at most {MAX_COST_MS} ms, got {v}"));
            }
        }
        for (name, v) in [
            ("drift_per_min", self.drift_per_min),
            ("drift_per_repetition", self.drift_per_repetition),
        ] {
            if !v.is_finite() || v <= -1.0 {
                return bad(format!("{name} must be finite and > -1, got {v}"));
            }
        }
        for (name, v) in [
            ("step_scale", self.step_scale),
            ("time_scale", self.time_scale),
        ] {
            if !v.is_finite() || v <= 0.0 || v > MAX_SCALE {
                return bad(format!(
                    "{name} must be a number > 0 and at most {MAX_SCALE} (1 = unchanged, below \
                     1 = faster), got {v}"
                ));
            }
        }
        let speed = self.host_speed;
        if !speed.is_finite() || !(1.0 / MAX_SCALE..=MAX_SCALE).contains(&speed) {
            return bad(format!(
                "host_speed must be a number from {} to {MAX_SCALE} (1 = the modelled host, 0.8 \
                 = 20% slower, 1.25 = 25% faster), got {speed}",
                1.0 / MAX_SCALE
            ));
        }
        if let Some(reps) = &self.step_scale_repetitions {
            if reps.is_empty() {
                return bad(
                    "step_scale_repetitions must name at least one repetition (leave it out \
                     for all)"
                        .into(),
                );
            }
            if reps.contains(&0) {
                return bad(format!(
                    "step_scale_repetitions counts from 1 (the first trial of a run is \
                     repetition 1), got {}",
                    join(reps)
                ));
            }
        }
        if let Some(r) = self.step_scale_requests {
            r.check()
                .or_else(|m| bad(format!("step_scale_requests: {m}")))?;
        }
        if self.trial_cv > 0.0 && self.trial_requests == 0 {
            return bad(
                "trial_cv draws a factor per trial: give --trial-requests N, the generation \
                 requests of one trial (warm-up included)"
                    .into(),
            );
        }
        if self.default_max_tokens == 0 {
            return bad("default_max_tokens must be at least 1".into());
        }
        Ok(())
    }
}

/// `1,3,5`.
pub(crate) fn join(xs: &[u32]) -> String {
    xs.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// Everything one simulator instance runs with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimConfig {
    /// Address to bind.
    pub host: IpAddr,
    /// Port to bind; 0 picks a free one.
    pub port: u16,
    /// Model name served by `/v1/models` and required (when given) in requests.
    pub model: String,
    /// Free-form label reported by the info endpoint and the start log line.
    pub label: String,
    /// The preset the engine parameters started from.
    pub preset: Preset,
    /// Seed of every random draw (jitter, speed factor, EOS, text, faults).
    pub seed: u64,
    /// Repetition index t (from 1) of the trials this server start measures (the runner's
    /// `SERVEBENCH_REPETITION`); drives `drift_per_repetition` and `step_scale_repetitions`.
    pub repetition: u32,
    /// The engine model.
    pub engine: EngineParams,
    /// Injected faults.
    pub faults: FaultParams,
    /// When set, `/v1/*` (except `/v1/sim/*`), `/tokenize` and `/detokenize` require
    /// `Authorization: Bearer <key>` (401 otherwise), as vLLM's `--api-key` does. Never
    /// serialised, logged or reported.
    #[serde(skip)]
    pub api_key: Option<ApiKey>,
    /// How long a graceful shutdown waits for in-flight responses before dropping them.
    #[serde(serialize_with = "ser_ms")]
    pub shutdown_grace: Duration,
    /// The prefix cache (`--prefix-cache`); `None`: off, every prompt token is prefilled.
    pub prefix_cache: Option<crate::prefix_cache::PrefixCacheParams>,
    /// Serve HTTPS only, with this certificate and key (`--tls-cert`, `--tls-key`); `None`:
    /// plain HTTP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsFiles>,
    /// The engine whose wire format is spoken (`--engine`) and its own settings.
    pub wire: WireParams,
    /// What the simulated model writes.
    pub output: OutputParams,
    /// Append every generation request's JSON body, as received, one line each, to this
    /// file (`--record-requests`): what a client really sent, for tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_requests: Option<std::path::PathBuf>,
}

/// The certificate chain and key a simulator serves HTTPS with (PEM files).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TlsFiles {
    /// The certificate chain, leaf first (PEM).
    pub cert: std::path::PathBuf,
    /// Its private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: std::path::PathBuf,
}

/// An API key: compared, never shown (its `Debug` is redacted).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(pub String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl SimConfig {
    /// A configuration from a preset with every other value at its default: loopback, port
    /// 0, model `sim-model`, empty label, seed 0, no faults.
    pub fn from_preset(preset: Preset) -> Self {
        SimConfig {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            model: "sim-model".into(),
            label: String::new(),
            preset,
            seed: 0,
            repetition: 1,
            engine: preset.engine(),
            faults: FaultParams::default(),
            api_key: None,
            shutdown_grace: Duration::from_secs(5),
            prefix_cache: None,
            tls: None,
            wire: WireParams::default(),
            output: OutputParams::default(),
            record_requests: None,
        }
    }

    /// Checks the whole configuration.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.model.is_empty() {
            return Err(SimError::InvalidConfig(
                "model name must not be empty".into(),
            ));
        }
        if self.repetition == 0 {
            return Err(SimError::InvalidConfig(
                "repetition counts from 1 (SERVEBENCH_REPETITION is the trial index t of the \
                 run, from 1), got 0"
                    .into(),
            ));
        }
        if let Some(p) = self.prefix_cache
            && (p.block_tokens == 0 || p.capacity_tokens < u64::from(p.block_tokens))
        {
            return Err(SimError::InvalidConfig(format!(
                "the prefix cache needs a block of at least 1 token and room for one block; got \
                 {} tokens per block and a capacity of {} tokens",
                p.block_tokens, p.capacity_tokens
            )));
        }
        self.engine.validate()?;
        self.wire
            .validate()
            .and_then(|()| self.dialect().check_wire(&self.wire))
            .map_err(SimError::InvalidConfig)?;
        self.output.validate()?;
        self.faults.validate()
    }
}

impl SimConfig {
    /// The dialect `--engine` names: the one place the simulator turns its engine into the
    /// dialect it hands to everything that speaks (the table of engines' `of`).
    pub fn dialect(&self) -> &'static dyn servebench_engines::dialect::Dialect {
        servebench_engines::of(self.wire.engine)
    }

    /// What a dialect reads of it (the engines' dialects never see the rest).
    pub fn served(&self) -> Served {
        Served {
            model: self.model.clone(),
            host: self.host,
            port: self.port,
            max_model_len: self.engine.max_model_len,
            max_num_seqs: self.engine.max_num_seqs,
            max_batched_tokens: self.engine.max_batched_tokens,
            default_max_tokens: self.engine.default_max_tokens,
            kv_capacity_tokens: self.engine.kv_capacity_tokens,
            prefix_cache: self.prefix_cache.is_some(),
            seed: self.seed,
            api_key: self.api_key.is_some(),
            wire: self.wire.clone(),
        }
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig::from_preset(Preset::Default)
    }
}

#[cfg(test)]
mod tests;
