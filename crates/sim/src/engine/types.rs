//! Inputs and outputs of the engine's step function.

use std::time::Duration;

use serde::Serialize;

/// Identifies a sequence; chosen by the caller, unique among live sequences.
pub type SeqId = u64;

/// A request reaching the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrival {
    /// The caller's id for it.
    pub id: SeqId,
    /// When it arrived, on the engine's clock.
    pub at: Duration,
    /// Prompt length in tokens.
    pub prompt_tokens: u32,
    /// Most tokens to generate.
    pub max_tokens: u32,
    /// Fewest tokens to generate before a simulated EOS may stop it.
    pub min_tokens: u32,
    /// Never stop at a simulated EOS.
    pub ignore_eos: bool,
    /// Its number among the generation requests the server received, from 1, in arrival
    /// order (what `step_scale_requests` counts).
    pub number: u64,
    /// Leading prompt tokens held by the prefix cache: they skip prefill (at most all but
    /// the last prompt token, which is always computed). `None`: the server keeps no cache.
    pub cached_tokens: Option<u32>,
}

/// What happened outside the engine since its last step.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// New requests, in arrival order.
    pub arrivals: Vec<Arrival>,
    /// Sequences whose client went away; their slot and KV reservation are freed.
    pub cancellations: Vec<SeqId>,
}

/// Why a sequence finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It reached `max_tokens`.
    Length,
    /// It hit a simulated EOS.
    Stop,
}

impl FinishReason {
    /// The OpenAI `finish_reason` string.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Length => "length",
            FinishReason::Stop => "stop",
        }
    }
}

/// Server-side timings of one request, on the engine's clock (milliseconds), in the spirit
/// of llama.cpp's `timings`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timings {
    /// Arrival to admission into the running batch.
    pub queue_ms: f64,
    /// Prompt tokens.
    pub prompt_n: u32,
    /// Admission to the first token (prefill, including chunks shared with other work).
    pub prompt_ms: f64,
    /// Arrival to the first token: the engine's time to first token.
    pub ttft_ms: f64,
    /// Generated tokens.
    pub predicted_n: u32,
    /// First token to last token.
    pub predicted_ms: f64,
    /// `predicted_ms / (predicted_n - 1)`: the engine's time per output token; `null` when
    /// fewer than 2 tokens were generated.
    pub predicted_per_token_ms: Option<f64>,
    /// Arrival to the last token.
    pub e2e_ms: f64,
    /// Prompt tokens taken from the prefix cache (llama.cpp's name); absent without one.
    #[serde(rename = "cache_n", skip_serializing_if = "Option::is_none")]
    pub cached_n: Option<u32>,
}

/// The end of a sequence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finish {
    /// Why it ended.
    pub reason: FinishReason,
    /// Its timings.
    pub timings: Timings,
}

/// One token emitted to one sequence at the end of a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Emission {
    /// The sequence.
    pub seq: SeqId,
    /// Position of the token in the output, from 0.
    pub index: u32,
    /// Set on the sequence's last token.
    pub finish: Option<Finish>,
    /// Sequences in the step that produced it (decoding and prefilling).
    pub batch: u32,
}
