//! servebench-spec: the experiment spec format (`servebench/v1alpha1`): types, YAML parsing
//! with locations, JSON Schema, semantic validation, plan expansion and the canonical hash.
//!
//! Near the bottom with servebench-stats: of servebench's crates it depends only on
//! servebench-engines (the one list of engines, [`Engine`]), and does no I/O beyond reading
//! the spec file.
//!
//! Entry points: [`load()`] / [`parse_str`] read and check a spec; [`plan::plan`] expands it;
//! [`hash::spec_hash`] fingerprints it; [`schema::spec_schema_json`] is the committed schema;
//! [`metrics::catalogue`] lists every metric; [`engine::profile`] holds what servebench
//! knows of each engine (the crate servebench-engines, one folder per engine, re-exported
//! here as `engine`); [`search`] is the capacity search's procedure; [`peer`] turns
//! SGLang's and vLLM's benchmark command lines into specs.

pub mod bounds;
pub mod diagnostics;
pub mod duration;
pub mod hash;
pub mod load;
pub mod metrics;
pub mod model_facts;
pub mod overrides;
pub mod peer;
pub mod plan;
pub mod position;
pub mod rate;
pub mod reference;
pub mod request_body;
pub mod schema;
pub mod search;
mod semantic;
pub mod substitute;
pub mod text;
pub mod types;

/// Every engine-specific fact servebench relies on: the profiles of servebench-engines.
pub use servebench_engines as engine;

pub use diagnostics::{Diagnostic, Severity, SpecErrors};
pub use duration::HumanDuration;
pub use load::{LoadError, Spec, load, parse_str};
pub use rate::Rate;
pub use semantic::is_secret_name;
pub use semantic::refs::env_references;
pub use semantic::variants::is_plain_load;
pub use types::*;
