//! What the engines' simulator dialects share, moving here from `servebench-sim`'s
//! `server::dialect` piece by piece (docs/architecture.md, "Where an engine lives"): the
//! pure writers of the engines' text so far (JSON in an engine's key order, Python `repr()`
//! and log timestamps). The pieces that need an HTTP server (the `Dialect` trait, its
//! `Host`, routes) follow behind a `dialect` feature that only the simulator turns on.

pub mod json;
pub mod pyrepr;
