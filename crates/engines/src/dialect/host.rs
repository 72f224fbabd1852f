//! What a dialect is handed of the running server: [`Host`], the state of its handlers and
//! middleware. The dialects are a room (`scripts/check-layers`): they read the server
//! through this type and never reach back up to the server's own state.

use std::sync::Arc;

use serde_json::Value;

use crate::dialect::profiler::ProfilerState;
use crate::dialect::{Dialect, Served};

/// What the server answers a dialect at the moment it asks.
pub trait Live: Send + Sync {
    /// Ready to generate (after `--startup-delay-ms`, outside a flap's down time).
    fn ready(&self) -> bool;
    /// Generation and the tokenizer are served (ready, or in SGLang's warm-up).
    fn serving(&self) -> bool;
    /// Generation requests in flight.
    fn in_flight(&self) -> u64;
    /// What the engine model says now, for the metrics.
    fn metrics(&self) -> Snapshot;
    /// What it said when the last generation request finished; `None` before the first
    /// (kept only where [`Dialect::records_on_finish`]).
    fn at_last_finish(&self) -> Option<Snapshot>;
    /// The simulator's description of itself (`/v1/sim/info`), as JSON.
    fn info(&self) -> Value;
}

/// The state a dialect's routes and hooks run with.
pub struct Host {
    /// The server's configuration.
    pub config: Served,
    /// When the server was made (Unix seconds): the `created` of model cards.
    pub created_unix: u64,
    /// Its simulated profiler (where its engine has one).
    pub profiler: ProfilerState,
    dialect: &'static dyn Dialect,
    live: Arc<dyn Live>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("config", &self.config)
            .field("created_unix", &self.created_unix)
            .field("dialect", &self.dialect.engine())
            .finish_non_exhaustive()
    }
}

impl Host {
    /// The state of a server speaking `dialect` (the one its settings' engine names, picked
    /// by the server) with these settings, reading `live`.
    pub fn new(
        dialect: &'static dyn Dialect,
        config: Served,
        created_unix: u64,
        live: Arc<dyn Live>,
    ) -> Self {
        Host {
            config,
            created_unix,
            profiler: ProfilerState::default(),
            dialect,
            live,
        }
    }

    /// The dialect it speaks.
    pub fn dialect(&self) -> &'static dyn Dialect {
        self.dialect
    }

    /// The version its version endpoints report ([`Dialect::reported_version`]).
    pub fn version(&self) -> &str {
        self.dialect.reported_version(&self.config.wire)
    }

    /// Ready to generate ([`Live::ready`]).
    pub fn ready(&self) -> bool {
        self.live.ready()
    }

    /// Generation and the tokenizer are served ([`Live::serving`]).
    pub fn serving(&self) -> bool {
        self.live.serving()
    }

    /// Generation requests in flight.
    pub fn in_flight(&self) -> u64 {
        self.live.in_flight()
    }

    /// What the engine model says now.
    pub fn metrics(&self) -> Snapshot {
        self.live.metrics()
    }

    /// What the engine model said when the last request finished ([`Live::at_last_finish`]).
    pub fn at_last_finish(&self) -> Option<Snapshot> {
        self.live.at_last_finish()
    }

    /// The simulator's description of itself (`/v1/sim/info`).
    pub fn info(&self) -> Value {
        self.live.info()
    }
}

/// What the engine model says now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Sequences running (in the batch).
    pub running: u64,
    /// Requests waiting for admission.
    pub waiting: u64,
    /// Running sequences past their prefill.
    pub decoding: u64,
    /// KV reserved / capacity, 0–1.
    pub kv_usage: f64,
    /// KV cache tokens reserved.
    pub kv_used_tokens: u64,
    /// Preemptions so far (a counter).
    pub preemptions: u64,
    /// Prompt tokens prefilled so far (a counter).
    pub prompt_tokens: u64,
    /// Tokens generated so far (a counter).
    pub generation_tokens: u64,
    /// Engine steps so far (a counter).
    pub steps: u64,
    /// Generation requests received so far (a counter).
    pub requests: u64,
    /// Generation requests answered in full so far.
    pub finished: u64,
    /// Of those, the ones that ended at a simulated EOS (the rest reached `max_tokens`).
    pub finished_stop: u64,
    /// (priority, running, waiting) of every priority seen so far, where requests carry
    /// one (SGLang's `--enable-priority-scheduling`); empty otherwise.
    pub by_priority: Vec<(i64, u64, u64)>,
}
