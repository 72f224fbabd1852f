//! Live counters of one server, readable in-process ([`SimHandle::stats`](crate::SimHandle))
//! and over HTTP (`GET /v1/sim/stats`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use serde::Serialize;

/// A snapshot of the counters. Generation requests are those to `/v1/completions` and
/// `/v1/chat/completions`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SimStats {
    /// Generation requests being handled now (from arrival to the end of the response).
    pub in_flight: u64,
    /// Highest `in_flight` seen (since start or the last [`reset_peak`](crate::SimHandle::reset_peak)).
    pub max_in_flight: u64,
    /// Generation requests received.
    pub requests_received: u64,
    /// Generation requests answered in full with status 200.
    pub requests_served: u64,
    /// Generation requests that got an error status or whose response was cut.
    pub requests_failed: u64,
    /// Tokens delivered in full responses.
    pub tokens_generated: u64,
    /// Injected HTTP 500 answers.
    pub injected_500: u64,
    /// Injected HTTP 429 answers.
    pub injected_429: u64,
    /// Injected mid-response disconnects.
    pub injected_disconnects: u64,
    /// Injected stalls.
    pub injected_stalls: u64,
    /// Injected malformed events.
    pub injected_malformed: u64,
    /// Generation requests handed to the engine that `--step-scale` selects (the steps that
    /// hold them are scaled).
    pub step_scaled_requests: u64,
    /// Prompt tokens of the generation requests handed to the engine (the server's count,
    /// chat template included).
    pub prompt_tokens: u64,
    /// Longest prompt handed to the engine, in tokens.
    pub max_prompt_tokens: u64,
    /// Prompt tokens found in the prefix cache (`--prefix-cache`; 0 without it).
    pub cached_tokens: u64,
    /// Streams whose text `--held-back-rate` held back (no content chunk, usage only).
    pub held_back_streams: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Stats {
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    pub(crate) received: AtomicU64,
    pub(crate) served: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) tokens: AtomicU64,
    pub(crate) injected_500: AtomicU64,
    pub(crate) injected_429: AtomicU64,
    pub(crate) injected_disconnects: AtomicU64,
    pub(crate) injected_stalls: AtomicU64,
    pub(crate) injected_malformed: AtomicU64,
    pub(crate) step_scaled: AtomicU64,
    pub(crate) prompt_tokens: AtomicU64,
    pub(crate) max_prompt_tokens: AtomicU64,
    pub(crate) cached_tokens: AtomicU64,
    pub(crate) held_back: AtomicU64,
}

impl Stats {
    pub(crate) fn snapshot(&self) -> SimStats {
        SimStats {
            in_flight: self.in_flight.load(Relaxed),
            max_in_flight: self.max_in_flight.load(Relaxed),
            requests_received: self.received.load(Relaxed),
            requests_served: self.served.load(Relaxed),
            requests_failed: self.failed.load(Relaxed),
            tokens_generated: self.tokens.load(Relaxed),
            injected_500: self.injected_500.load(Relaxed),
            injected_429: self.injected_429.load(Relaxed),
            injected_disconnects: self.injected_disconnects.load(Relaxed),
            injected_stalls: self.injected_stalls.load(Relaxed),
            injected_malformed: self.injected_malformed.load(Relaxed),
            step_scaled_requests: self.step_scaled.load(Relaxed),
            prompt_tokens: self.prompt_tokens.load(Relaxed),
            max_prompt_tokens: self.max_prompt_tokens.load(Relaxed),
            cached_tokens: self.cached_tokens.load(Relaxed),
            held_back_streams: self.held_back.load(Relaxed),
        }
    }

    pub(crate) fn reset_peak(&self) {
        self.max_in_flight
            .store(self.in_flight.load(Relaxed), Relaxed);
    }

    /// Counts a request in flight until the guard drops.
    /// Requests in flight now.
    pub(crate) fn in_flight_now(&self) -> u64 {
        self.in_flight.load(Relaxed)
    }

    pub(crate) fn enter(self: &Arc<Self>) -> InFlight {
        let n = self.in_flight.fetch_add(1, Relaxed) + 1;
        self.max_in_flight.fetch_max(n, Relaxed);
        InFlight(Arc::clone(self))
    }
}

/// Decrements the in-flight count on drop.
#[derive(Debug)]
pub(crate) struct InFlight(Arc<Stats>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Relaxed);
    }
}

/// Adds one to a counter.
pub(crate) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Relaxed);
}
