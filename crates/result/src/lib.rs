//! servebench-result: the result file as a contract. What `servebench run` writes, what
//! `compare`, `report` and `rerun` read and what `import` produces: the result file of one
//! run (`results/<spec name>/<run id>.json`) and its per-request sidecar
//! (`<run id>.requests.jsonl`), both with committed JSON Schemas
//! (`schemas/result.schema.json`, `schemas/requests.schema.json`), and every metric derived
//! from the raw request records.
//!
//! Pure data and pure functions, above servebench-spec and servebench-stats only: it must
//! not depend on any other servebench crate, nor on an async runtime, an HTTP client, a
//! tokenizer, a terminal or plotting library (no tokio, reqwest, tokenizers, indicatif, nix
//! or plotters), so that whatever only reads results stays small.
//!
//! * [`RunResult`] (with [`TrialResult`], [`ServerStart`], [`PointInfo`], …) is the result
//!   file; [`load_result`] reads one, [`ResultStore`] writes one atomically after every
//!   trial and appends the sidecar's [`RequestLine`]s; [`result_schema_json`] and
//!   [`requests_schema_json`] are the committed schemas.
//! * [`record`]: the raw per-request [`record::RequestRecord`] the load generator fills.
//! * [`metrics`]: every metric of a trial ([`metrics::summarize`] →
//!   [`metrics::TrialSummary`]), derived in this one place.
//! * [`server`]: what is recorded about a server start and stop (types only).
//! * [`cluster`]: what is recorded about a server that spans nodes: the Slurm allocation,
//!   each node's hardware, the step and its ranks (types only).
//! * [`LookRecord`] and [`cell_is_open`]: the looks of a sequential run.
//! * [`SearchLog`]: a capacity search's steps and looks (`spec.search`).
//! * [`table`]: the end-of-run table of means and 95% intervals.
//! * [`import`]: SGLang and vLLM benchmark result files as a [`RunResult`].
//! * [`telemetry`]: what the GPUs and the server were doing during each trial (the
//!   telemetry sidecar `<run id>.telemetry.jsonl.zst`), its summary per trial, and the
//!   memory-bound decode ceiling.
//! * [`estimate`]: how long a plan will take, from its workload and its last result.
//! * [`export`]: trials and request records as CSV tables for dataframes.

pub mod checks;
pub mod costs;
pub mod estimate;
pub mod export;
pub mod import;
pub mod kernels;
mod looks;
pub mod metrics;
mod probe;
pub mod record;
mod search;
pub mod server;
mod store;
pub mod table;
pub mod telemetry;
mod types;

pub use looks::{
    CellLook, LookRecord, MetricLook, StopReason, cell_is_open, cell_looks, cell_stop_reason,
};
pub use probe::{ProbeOutput, ProbeRecord, first_difference};
pub use search::{
    CapacityLook, RatioLook, SearchBlock, SearchLog, SearchLook, SearchOutcome, SearchStep,
};
pub use store::{
    ResultStore, StoreError, load_result, read_requests, read_telemetry, sidecar_path,
    telemetry_path, write_json_atomic,
};
pub use types::*;

/// Version of the result format; bumped when its meaning changes. 2: request flags
/// (`no_usage`, `short_output`, `long_output`, `input_length_mismatch`) are their own kind,
/// apart from the failure kinds, and trials record `input_mismatch` and
/// `batched_event_share`. Version 1 files read unchanged (their `flags` use the same names).
pub const RESULT_SCHEMA_VERSION: u32 = 2;

/// Version of a sidecar line ([`RequestLine::record_version`]). 2: each line carries its
/// request flags. Version 1 lines (no `record_version`) read unchanged.
pub const REQUEST_RECORD_VERSION: u32 = 2;

/// The result file's JSON Schema, pretty, with a trailing newline (as committed).
pub fn result_schema_json() -> String {
    let mut s = serde_json::to_string_pretty(&schemars::schema_for!(RunResult)).unwrap_or_default();
    s.push('\n');
    s
}

/// The sidecar's JSON Schema (one line of `<run id>.requests.jsonl`), as committed.
pub fn requests_schema_json() -> String {
    let mut s =
        serde_json::to_string_pretty(&schemars::schema_for!(RequestLine)).unwrap_or_default();
    s.push('\n');
    s
}
