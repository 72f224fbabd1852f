//! The end of a simulated sequence, as the simulator's engine model reports it to a dialect:
//! why it ended and its server-side timings.

use serde::Serialize;

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
