//! Inputs and outputs of the engine's step function.

use std::time::Duration;

pub use servebench_engines::dialect::finish::{Finish, FinishReason, Timings};

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
