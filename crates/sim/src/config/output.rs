//! What the simulated model writes: reasoning before the answer, and how its greedy output
//! may change with numerics or batch size.

use serde::Serialize;

/// The output text's settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OutputParams {
    /// Chat answers start with this many reasoning tokens (in the personality's reasoning
    /// field), then the answer; they count in `max_tokens` and `completion_tokens`, as a
    /// reasoning model's do.
    pub reasoning_tokens: u32,
}
