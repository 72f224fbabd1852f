//! The load generator: a streaming OpenAI-compatible client driven on a precomputed arrival
//! schedule under a hard concurrency limit.
//!
//! One trial is [`run_trial`]`(&Target, &LoadConfig, &TrialPrompts) -> TrialOutcome`: raw
//! per-request [`RequestRecord`]s (instants as nanosecond offsets, token events, usage,
//! server timings, a typed [`ErrorKind`] on failure) and the
//! [`servebench_result::metrics::TrialSummary`] derived from them. What is stored per request
//! is servebench-result's [`servebench_result::record`], re-exported here.
//!
//! Modules, one responsibility each: [`config`] (inputs and their validation), [`schedule`]
//! (arrival offsets), [`sse`] (event-stream framing), [`chunk`] (the JSON of one event),
//! [`stream`] (bytes → record), [`body`] (request bodies), [`client`] (HTTP, reqwest), [`h1`]
//! (the lean HTTP/1.1 executor), [`trial`] (warm-up, gate, deadlines).

pub mod body;
pub mod chunk;
pub mod client;
pub mod config;
pub mod h1;
pub mod limits;
pub mod progress;
pub mod reading;
pub mod schedule;
pub mod sse;
pub mod stream;
pub mod trial;
mod wait;

pub use client::{ClientError, Clock, Executor, HttpClient};
pub use config::{ApiKind, Arrival, ConfigError, LoadConfig, MinTokens, Target, Transport};
pub use h1::LeanClient;
pub use limits::raise_open_file_limit;
/// The records a trial produces are servebench-result's (the result file's contract).
pub use servebench_result::record::{
    ErrorKind, ReceiveStamps, RequestRecord, ServerTimings, TokenEvent, Usage,
};
pub use trial::{LoadError, TrialOutcome, run_trial, run_trial_with};
