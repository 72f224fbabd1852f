//! Helpers shared by the end-to-end tests (each test binary uses a subset).
#![allow(dead_code)]

pub mod faults;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Every file below `dir`, depth first (nothing when `dir` is missing).
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p))
            } else {
                out.push(p)
            }
        }
    }
    out
}

/// A JSON file, parsed.
pub fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json")
}
