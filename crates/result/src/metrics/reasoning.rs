//! Reasoning and answer, per request and over a window (docs/metrics.md, "Reasoning and
//! answer").
//!
//! - TTFR (time to first reasoning token) = the first event carrying reasoning − send; absent
//!   for a request whose stream carried no reasoning;
//! - TTFA (time to first answer token) = the first event carrying answer text (`content`,
//!   `text`, a tool call) − send; for a request without reasoning it is its TTFT; absent for
//!   one that ended still reasoning;
//! - reasoning tokens: the server's `usage.completion_tokens_details.reasoning_tokens` where
//!   it sent a count above 0, else the stream's (the tokens of the events that carried only
//!   reasoning, scaled by N_out / events when usage says the events packed several tokens);
//!   a server count of 0 against a stream that reasoned loses (vLLM's reasoning parsers that
//!   do not implement `count_reasoning_tokens` report 0, reasoning/abs_reasoning_parsers.py
//!   :133-150 in 0.33.0), and either disagreement is flagged `reasoning_count_mismatch`;
//! - answer tokens = N_out − reasoning tokens.

use super::latency::LatencyStats;
use crate::record::RequestRecord;

/// The reasoning metrics of one successful request, in ms and tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct ReasoningMetrics {
    /// Time to the first reasoning token.
    pub(super) ttfr_ms: Option<f64>,
    /// Time to the first answer token.
    pub(super) ttfa_ms: Option<f64>,
    /// Reasoning tokens.
    pub(super) reasoning_tokens: u64,
    /// Answer tokens.
    pub(super) answer_tokens: u64,
    /// The server's and the stream's counts disagree (`reasoning_count_mismatch`).
    pub(super) mismatch: bool,
}

/// The reasoning metrics of a successful request sent at `send`, with its TTFT, N_out and
/// whether its event counts were reconciled with usage.
pub(super) fn derive_reasoning(
    r: &RequestRecord,
    send: u64,
    ttft_ms: f64,
    n_out: u64,
    reconciled: bool,
) -> ReasoningMetrics {
    let ms = |t: u64| (t as f64 - send as f64) / 1e6;
    let stream = r.reasoning.map(|x| {
        let tokens = u64::from(x.tokens);
        let client = r.client_output_tokens();
        if reconciled && client > 0 {
            (tokens as f64 * n_out as f64 / client as f64).round() as u64
        } else {
            tokens
        }
    });
    let usage = r.usage_reasoning_tokens().map(u64::from);
    let reasoning = match (usage, stream) {
        (Some(0), Some(s)) if s > 0 => s,
        (Some(u), _) => u,
        (None, s) => s.unwrap_or(0),
    };
    let mismatch = usage.is_some_and(|u| {
        let s = stream.unwrap_or(0);
        let (lo, hi) = (u.min(s), u.max(s));
        (lo == 0 && hi > 0) || (hi - lo > 2 && (hi - lo) as f64 > 0.1 * hi as f64)
    });
    let (ttfr_ms, ttfa_ms) = match r.reasoning {
        Some(x) => (Some(ms(x.first_ns)), x.answer_ns.map(ms)),
        None => (None, Some(ttft_ms)),
    };
    ReasoningMetrics {
        ttfr_ms,
        ttfa_ms,
        reasoning_tokens: reasoning.min(n_out),
        answer_tokens: n_out.saturating_sub(reasoning),
        mismatch,
    }
}

/// The reasoning statistics of a window's successful requests.
#[derive(Default)]
pub(super) struct ReasoningValues {
    ttfr: Vec<f64>,
    ttfa: Vec<f64>,
    reasoning: Vec<f64>,
    answer: Vec<f64>,
    any: bool,
}

impl ReasoningValues {
    /// Adds a successful request's TTFR, TTFA, reasoning and answer tokens.
    pub(super) fn add(
        &mut self,
        ttfr: Option<f64>,
        ttfa: Option<f64>,
        reasoning: Option<u64>,
        answer: Option<u64>,
    ) {
        self.ttfr.extend(ttfr);
        self.ttfa.extend(ttfa);
        self.reasoning.extend(reasoning.map(|n| n as f64));
        self.answer.extend(answer.map(|n| n as f64));
        // A request reasoned: its stream carried reasoning, or the server counted some.
        self.any |= ttfr.is_some() || reasoning.is_some_and(|n| n > 0);
    }

    /// `(ttfr, ttfa, reasoning_tokens, answer_tokens)`: TTFA and answer tokens over every
    /// successful request; TTFR over those that reasoned; reasoning tokens only when one did
    /// (a run that never reasoned has no reasoning statistics, not zeros).
    pub(super) fn stats(self) -> [Option<LatencyStats>; 4] {
        let reasoning = if self.any {
            LatencyStats::from_values(self.reasoning)
        } else {
            None
        };
        [
            LatencyStats::from_values(self.ttfr),
            LatencyStats::from_values(self.ttfa),
            reasoning,
            LatencyStats::from_values(self.answer),
        ]
    }
}
