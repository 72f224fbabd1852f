//! The engines' transcripts: what each engine really sent, kept in its folder as
//! `<engine>/transcripts/<version>/` (a README.md there says where every file came from).
//! Transcripts are never made by a dialect: they are recorded from the real engine where it
//! runs here (llama.cpp, transformers serve), made by the engine's own code where it imports
//! without a GPU (SGLang's metrics collector), or written by hand with the version, file and
//! line of every field.
//!
//! [`provenance`] refuses a transcript folder that does not say so; `replay` (with the
//! `dialect` feature) plays the transcripts through the simulator's dialects and checks the
//! dialect answers in the transcript's shape. The client's parsers replay the same files in
//! servebench-runner (`tests/it/engine_facts.rs`, `telemetry/prom.rs`, `engine/checks.rs`).

mod provenance;
#[cfg(feature = "dialect")]
mod replay;

use std::path::{Path, PathBuf};

/// This crate's `src/`, where each engine's folder is.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The text of a transcript, `path` under `src/` (`tgi/transcripts/db931fcf/info.json`).
#[cfg_attr(not(feature = "dialect"), allow(dead_code))]
fn read(path: &str) -> String {
    let p = src().join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}
