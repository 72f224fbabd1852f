//! Checks beyond the schema: what a careful reviewer of a spec would catch.

mod bounds;
mod context;
mod datasets;
mod engine;
mod equivalence;
mod evidence;
mod gate;
mod launcher;
pub(crate) mod refs;
mod request_body;
mod search;
mod telemetry;
mod trials;
pub(crate) mod variants;
mod workload;

use crate::diagnostics::Diagnostic;
use crate::position::{KeyPath, PositionIndex};
use crate::types::SpecFile;

/// Every semantic problem of a schema-valid spec: errors and warnings.
pub(crate) fn check(spec: &SpecFile, index: &PositionIndex) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    variants::check(spec, &mut out);
    engine::check(spec, &mut out);
    context::check(spec, &mut out);
    refs::check(spec, &mut out);
    launcher::check(spec, &mut out);
    workload::check(spec, index, &mut out);
    trials::check(spec, &mut out);
    search::check(spec, index, &mut out);
    bounds::check(spec, &mut out);
    gate::check(spec, &mut out);
    telemetry::check(spec, &mut out);
    equivalence::check(spec, &mut out);
    evidence::check(spec, &mut out);
    request_body::check(spec, &mut out);
    out
}

/// `spec.<rest>` as a key path.
pub(crate) fn at(rest: &str) -> KeyPath {
    KeyPath::parse(&format!("spec.{rest}"))
}
pub use variants::is_secret_name;
