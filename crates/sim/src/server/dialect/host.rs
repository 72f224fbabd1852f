//! What a dialect is handed of the running server: [`Host`], the state of its handlers and
//! middleware. The dialects are a room (`scripts/check-layers`): they read the server
//! through this type and never reach back up to the server's own state.

use std::sync::Arc;

use serde_json::Value;

use crate::config::SimConfig;

/// What the server answers a dialect at the moment it asks.
pub(crate) trait Live: Send + Sync {
    /// Ready to generate (after `--startup-delay-ms`, outside a flap's down time).
    fn ready(&self) -> bool;
    /// Generation and the tokenizer are served (ready, or in SGLang's warm-up).
    fn serving(&self) -> bool;
    /// Generation requests in flight.
    fn in_flight(&self) -> u64;
    /// What the engine model says now, for the metrics.
    fn metrics(&self) -> Snapshot;
    /// The simulator's description of itself (`/v1/sim/info`), as JSON.
    fn info(&self) -> Value;
}

/// The state a dialect's routes and hooks run with.
pub(crate) struct Host {
    /// The server's configuration.
    pub(crate) config: SimConfig,
    /// When the server was made (Unix seconds): the `created` of model cards.
    pub(crate) created_unix: u64,
    live: Arc<dyn Live>,
}

impl Host {
    pub(crate) fn new(config: SimConfig, created_unix: u64, live: Arc<dyn Live>) -> Self {
        Host {
            config,
            created_unix,
            live,
        }
    }

    pub(crate) fn ready(&self) -> bool {
        self.live.ready()
    }

    pub(crate) fn serving(&self) -> bool {
        self.live.serving()
    }

    pub(crate) fn in_flight(&self) -> u64 {
        self.live.in_flight()
    }

    pub(crate) fn metrics(&self) -> Snapshot {
        self.live.metrics()
    }

    pub(crate) fn info(&self) -> Value {
        self.live.info()
    }
}

/// What the engine model says now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Snapshot {
    pub(crate) running: u64,
    pub(crate) waiting: u64,
    pub(crate) decoding: u64,
    /// KV reserved / capacity, 0–1.
    pub(crate) kv_usage: f64,
    pub(crate) kv_used_tokens: u64,
    pub(crate) preemptions: u64,
    pub(crate) prompt_tokens: u64,
    pub(crate) generation_tokens: u64,
    pub(crate) steps: u64,
    pub(crate) requests: u64,
    /// Generation requests answered in full so far.
    pub(crate) finished: u64,
}
