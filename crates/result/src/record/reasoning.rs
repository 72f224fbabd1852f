//! What a request's stream said about reasoning: where the reasoning and the answer began,
//! and how many tokens the reasoning carried (docs/metrics.md, "Reasoning and answer").

use serde::{Deserialize, Serialize};

/// `usage.completion_tokens_details` (OpenAI's shape, sent by vLLM and SGLang with a
/// reasoning parser; which engine sends it is in its profile, docs/engines.md).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct CompletionTokensDetails {
    /// Output tokens the server counted as reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u32>,
}

/// A request whose stream carried reasoning deltas (`reasoning_content` or `reasoning`):
/// when the first reasoning and the first answer event arrived, and the reasoning's tokens
/// as the client counted them. Absent for a request whose stream carried no reasoning.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ReasoningRecord {
    /// Arrival of the first event carrying reasoning text, in ns from the trial start.
    pub first_ns: u64,
    /// Tokens of the events that carried reasoning and no answer, counted as output tokens
    /// are (each event 1, or the server's usage delta with continuous usage).
    pub tokens: u32,
    /// Arrival of the first event carrying answer text (`content`, `text` or a tool call),
    /// in ns from the trial start; absent when the request ended still reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_ns: Option<u64>,
}
