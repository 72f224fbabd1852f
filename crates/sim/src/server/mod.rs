//! The HTTP side: router, shared state, and the public ways to start a server.

mod arrival;
mod auth;
pub(crate) mod encode;
mod endpoints;
mod faults;
mod generate;
mod handle;
mod stats;
mod stream;
mod tls;

// The engines' dialects and what they share, from each engine's folder in
// `servebench-engines` (docs/architecture.md, "Where an engine lives").
use servebench_engines::dialect;
use servebench_engines::dialect::request as wire;
use servebench_engines::dialect::{api_error, text};

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use serde::Serialize;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use handle::{SimHandle, run, run_until, spawn};
pub use stats::SimStats;
pub use tls::TestPki;

use crate::config::{EngineParams, FaultParams, OutputParams, SimConfig, WireParams};
use crate::driver::EngineHandle;
use crate::engine::{Finish, FinishReason};
use crate::tokenizer;

/// Largest request body accepted (long prompts are long).
const BODY_LIMIT: usize = 64 << 20;

/// What `GET /v1/sim/info` (also `/server_info`) reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimInfo {
    /// Always `servebench-sim`.
    pub server: &'static str,
    /// The crate version.
    pub version: &'static str,
    /// The `--label` given.
    pub label: String,
    /// Served model name.
    pub model: String,
    /// The preset the engine parameters came from.
    pub preset: &'static str,
    /// The seed.
    pub seed: u64,
    /// This process's speed factor, drawn from the seed.
    pub speed_factor: f64,
    /// The repetition index t (from 1) of this server start (`SERVEBENCH_REPETITION`).
    pub repetition: u32,
    /// The factor `drift_per_repetition` puts on every step of this start:
    /// `1 + drift_per_repetition × (t − 1)`.
    pub repetition_factor: f64,
    /// True when `step_scale` applies at this start (it is not 1 and this repetition is
    /// selected); which requests it applies to is `engine.step_scale_requests`.
    pub step_scale_active: bool,
    /// True when every modelled time is zero.
    pub zero_delay: bool,
    /// Engine parameters in effect.
    pub engine: EngineParams,
    /// Faults in effect.
    pub faults: FaultParams,
    /// The tokenizer's constants.
    pub tokenizer: TokenizerInfo,
    /// The engine personality (`--engine`) and its settings.
    pub wire: WireParams,
    /// What the simulated model writes.
    pub output: OutputParams,
}

/// Tokenizer constants reported by the info endpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TokenizerInfo {
    /// `whitespace`: one token per whitespace-separated word.
    pub kind: &'static str,
    /// Number of token ids.
    pub vocab_size: u32,
    /// Template tokens per chat message.
    pub chat_tokens_per_message: u32,
    /// Template tokens after the last chat message.
    pub chat_reply_tokens: u32,
}

/// State shared by every handler of one server.
#[derive(Debug)]
pub(crate) struct AppState {
    pub(crate) config: SimConfig,
    /// What the dialect reads of `config`.
    pub(crate) served: dialect::Served,
    pub(crate) engine: EngineHandle,
    pub(crate) stats: Arc<stats::Stats>,
    pub(crate) speed: f64,
    pub(crate) created_unix: u64,
    ready_at: Instant,
    requests: AtomicU64,
    answered: AtomicU64,
    /// Cancelled when the exit-after fault fires.
    pub(crate) exited: CancellationToken,
    /// Stops the engine (cutting every stream).
    kill: CancellationToken,
    /// Stops accepting connections.
    stop: CancellationToken,
    /// The prefix cache, when `--prefix-cache` is on.
    pub(crate) prefix_cache: Option<std::sync::Mutex<crate::prefix_cache::PrefixCache>>,
    /// `--record-requests`: the file every generation request's body is appended to.
    pub(crate) record: Option<std::sync::Mutex<std::fs::File>>,
    /// Requests served in full that ended at a simulated EOS.
    pub(crate) served_stop: AtomicU64,
    /// The metrics snapshot taken when the last request was served in full, where the engine
    /// records its metrics then (`Dialect::records_on_finish`).
    pub(crate) last_finish: std::sync::Mutex<Option<dialect::Snapshot>>,
}

impl AppState {
    /// Appends a generation request's body to the `--record-requests` file, one line (a
    /// body holding a newline is written with it escaped, as JSON would have it).
    pub(crate) fn record(&self, body: &[u8]) {
        use std::io::Write;
        let Some(file) = &self.record else { return };
        let line: Vec<u8> = match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(v) => serde_json::to_vec(&v).unwrap_or_default(),
            Err(_) => body
                .iter()
                .map(|&b| if b == b'\n' { b' ' } else { b })
                .collect(),
        };
        if let Ok(mut f) = file.lock() {
            let _ = f.write_all(&line);
            let _ = f.write_all(b"\n");
        }
    }

    /// The dialect it speaks (`SimConfig::dialect`).
    pub(crate) fn dialect(&self) -> &'static dyn dialect::Dialect {
        self.config.dialect()
    }

    pub(crate) fn ready(&self) -> bool {
        let now = Instant::now();
        if now < self.ready_at {
            return false;
        }
        let f = &self.config.faults;
        if f.flap_period_ms == 0 {
            return true;
        }
        // Each flap period: up first, then `flap_down_ms` unready.
        let into = (now - self.ready_at).as_millis() % u128::from(f.flap_period_ms);
        into < u128::from(f.flap_period_ms - f.flap_down_ms)
    }

    /// True when generation and the tokenizer are served: once ready, and during SGLang's
    /// warm-up (its HTTP server is up once the model is loaded).
    pub(crate) fn serving(&self) -> bool {
        self.ready() || self.dialect().readiness() == dialect::Readiness::Warmup
    }

    pub(crate) fn exiting(&self) -> bool {
        self.exited.is_cancelled()
    }

    /// Number of this generation request, from 0.
    pub(crate) fn next_request(&self) -> u64 {
        self.requests.fetch_add(1, Relaxed)
    }

    /// A generation request got its whole answer, whatever the status.
    pub(crate) fn answered(&self) {
        let n = self.answered.fetch_add(1, Relaxed) + 1;
        if self.config.faults.exit_after_requests == Some(n) {
            self.exited.cancel();
            self.kill.cancel();
            self.stop.cancel();
        }
    }

    /// A generation request was served in full, ending with `finish`.
    pub(crate) fn served(&self, finish: &Finish) {
        stats::bump(&self.stats.served);
        if finish.reason == FinishReason::Stop {
            stats::bump(&self.served_stop);
        }
        let tokens = finish.timings.predicted_n;
        self.stats.tokens.fetch_add(u64::from(tokens), Relaxed);
        if self.dialect().records_on_finish() {
            let now = dialect::Live::metrics(self);
            if let Ok(mut last) = self.last_finish.lock() {
                *last = Some(now);
            }
        }
        self.answered();
    }

    pub(crate) fn info(&self) -> SimInfo {
        let c = &self.config;
        SimInfo {
            server: "servebench-sim",
            version: crate::VERSION,
            label: c.label.clone(),
            model: c.model.clone(),
            preset: c.preset.name(),
            seed: c.seed,
            speed_factor: self.speed,
            repetition: c.repetition,
            repetition_factor: c.engine.repetition_factor(c.repetition),
            step_scale_active: c.engine.step_scale_at(c.repetition),
            zero_delay: c.engine.is_zero_delay(),
            engine: c.engine.clone(),
            faults: c.faults.clone(),
            tokenizer: TokenizerInfo {
                kind: "whitespace",
                vocab_size: tokenizer::VOCAB_SIZE,
                chat_tokens_per_message: tokenizer::CHAT_TOKENS_PER_MESSAGE,
                chat_reply_tokens: tokenizer::CHAT_REPLY_TOKENS,
            },
            wire: c.wire.clone(),
            output: c.output.clone(),
        }
    }

    /// The one-line start log: `key=value` pairs, greppable (`label=fast`).
    pub(crate) fn log_line(&self, addr: std::net::SocketAddr) -> String {
        let c = &self.config;
        let e = &c.engine;
        let f = &c.faults;
        let exit = f
            .exit_after_requests
            .map_or_else(|| "none".to_owned(), |n| n.to_string());
        let reps = e
            .step_scale_repetitions
            .as_deref()
            .map_or_else(|| "all".to_owned(), crate::config::join);
        let requests = e
            .step_scale_requests
            .map_or_else(|| "all".to_owned(), |r| r.to_string());
        let cache = c.prefix_cache.map_or_else(
            || "off".to_owned(),
            |p| {
                format!(
                    "on block_tokens={} capacity_tokens={}",
                    p.block_tokens, p.capacity_tokens
                )
            },
        );
        format!(
            "servebench sim: start version={} addr={addr} label={} model={} preset={} seed={} \
             repetition={} speed_factor={:.6} max_num_seqs={} kv_capacity_tokens={} \
             max_batched_tokens={} max_model_len={} prefill_ms_per_token={} decode_base_ms={} \
             decode_per_seq_ms={} jitter_cv={} speed_cv={} drift_per_min={} \
             drift_per_repetition={} step_scale={} step_scale_repetitions={reps} \
             step_scale_requests={requests} time_scale={} host_speed={} eos_mean_tokens={} \
             default_max_tokens={} zero_delay={} startup_delay_ms={} error_rate_500={} \
             error_rate_429={} disconnect_rate={} stall_rate={} stall_ms={} malformed_rate={} \
             exit_after_requests={exit} flap_period_ms={} flap_down_ms={} api_key={} \
             reasoning_tokens={} numerics_change={} batch_variance={} engine={} moe_backend={} \
             prefix_cache={cache}",
            crate::VERSION,
            c.label,
            c.model,
            c.preset.name(),
            c.seed,
            c.repetition,
            self.speed,
            e.max_num_seqs,
            e.kv_capacity_tokens,
            e.max_batched_tokens,
            e.max_model_len,
            e.prefill_ms_per_token,
            e.decode_base_ms,
            e.decode_per_seq_ms,
            e.jitter_cv,
            e.speed_cv,
            e.drift_per_min,
            e.drift_per_repetition,
            e.step_scale,
            e.time_scale,
            e.host_speed,
            e.eos_mean_tokens,
            e.default_max_tokens,
            e.is_zero_delay(),
            f.startup_delay_ms,
            f.error_rate_500,
            f.error_rate_429,
            f.disconnect_rate,
            f.stall_rate,
            f.stall_ms,
            f.malformed_rate,
            f.flap_period_ms,
            f.flap_down_ms,
            if c.api_key.is_some() {
                "required"
            } else {
                "none"
            },
            c.output.reasoning_tokens,
            c.output.numerics_change,
            c.output.batch_variance,
            crate::config::engine_name(c.wire.engine),
            c.wire.moe_backend.as_deref().unwrap_or("none"),
        )
    }
}

/// What the dialects read of the running server (`dialect::Host`).
impl dialect::Live for AppState {
    fn ready(&self) -> bool {
        AppState::ready(self)
    }

    fn serving(&self) -> bool {
        AppState::serving(self)
    }

    fn in_flight(&self) -> u64 {
        self.stats.snapshot().in_flight
    }

    fn metrics(&self) -> dialect::Snapshot {
        let g = &self.engine.gauges;
        let (running, waiting, kv) = g.load();
        let load = |a: &AtomicU64| a.load(Relaxed);
        let cap = self.config.engine.kv_capacity_tokens.max(1);
        let stats = self.stats.snapshot();
        dialect::Snapshot {
            running,
            waiting,
            decoding: load(&g.decoding),
            kv_usage: kv as f64 / cap as f64,
            kv_used_tokens: kv,
            preemptions: 0,
            prompt_tokens: load(&g.prompt_tokens),
            generation_tokens: load(&g.tokens),
            steps: load(&g.steps),
            requests: stats.requests_received,
            finished: stats.requests_served,
            finished_stop: load(&self.served_stop),
            by_priority: self.engine.gauges.priorities(),
        }
    }

    fn at_last_finish(&self) -> Option<dialect::Snapshot> {
        self.last_finish.lock().ok().and_then(|s| s.clone())
    }

    fn info(&self) -> serde_json::Value {
        serde_json::to_value(AppState::info(self)).unwrap_or_default()
    }
}

pub(crate) fn router(state: Arc<AppState>) -> Router {
    let d = state.dialect();
    let host = Arc::new(dialect::Host::new(
        d,
        state.served.clone(),
        state.created_unix,
        state.clone(),
    ));
    let r = Router::new()
        .route("/v1/completions", post(generate::completions))
        .route("/v1/chat/completions", post(generate::chat_completions))
        .route("/v1/sim/info", get(endpoints::info))
        .route("/v1/sim/stats", get(endpoints::stats))
        .merge(dialect::routes(d).with_state::<Arc<AppState>>(host.clone()))
        .fallback(endpoints::not_found)
        .method_not_allowed_fallback(endpoints::method_not_allowed)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_key,
        ));
    let r = if d.restyles() {
        r.layer(axum::middleware::from_fn_with_state(
            host,
            dialect::personality_layer,
        ))
    } else {
        r
    };
    r.with_state(state)
}
