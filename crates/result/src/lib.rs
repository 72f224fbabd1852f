//! The result file of one run (`results/<spec name>/<run id>.json`) and its per-request
//! sidecar (`<run id>.requests.jsonl`). Both have committed JSON Schemas
//! (`schemas/result.schema.json`, `schemas/requests.schema.json`).

mod looks;
mod store;
mod types;

pub use looks::{
    CellLook, LookRecord, MetricLook, StopReason, cell_is_open, cell_looks, cell_stop_reason,
};
pub use store::{ResultStore, StoreError, load_result, write_json_atomic};
pub use types::*;

/// Version of the result format; bumped on any incompatible change.
pub const RESULT_SCHEMA_VERSION: u32 = 1;

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
