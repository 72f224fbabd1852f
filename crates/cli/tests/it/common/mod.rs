//! Helpers shared by the end-to-end tests (each test binary uses a subset).
#![allow(dead_code)]

pub(crate) mod faults;
pub(crate) mod slurm;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// Held by each test that runs a real engine (llama.cpp, transformers serve): they share the
/// machine's cores, so they run one at a time.
pub(crate) static REAL_ENGINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The repository's root.
pub(crate) fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A fresh folder `target/tmp/<test>/<name>` (not /tmp: shared machines clean it).
pub(crate) fn scratch(test: &str, name: &str) -> PathBuf {
    let d = repo().join("target/tmp").join(test).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Every file below `dir`, depth first (nothing when `dir` is missing).
pub(crate) fn walk(dir: &Path) -> Vec<PathBuf> {
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
pub(crate) fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json")
}

/// `servebench` run in `dir`.
pub(crate) fn sb(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("servebench").expect("binary");
    c.current_dir(dir);
    c
}

pub(crate) fn write_spec(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("spec.yaml");
    std::fs::write(&p, text).expect("write spec");
    p
}

/// The only result file under `dir/results`.
pub(crate) fn result_file(dir: &Path) -> PathBuf {
    let found: Vec<PathBuf> = walk(&dir.join("results"))
        .into_iter()
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".json") && !name.starts_with('.')
        })
        .collect();
    assert_eq!(found.len(), 1, "expected one result file, found {found:?}");
    found[0].clone()
}

/// One HTTP/1.1 request from a test server's connection, its headers and body read: its
/// path, or `None` once the client has closed the connection.
pub(crate) fn read_request(
    reader: &mut std::io::BufReader<std::net::TcpStream>,
) -> std::io::Result<Option<String>> {
    use std::io::{BufRead as _, Read as _};
    let mut first = String::new();
    if reader.read_line(&mut first)? == 0 {
        return Ok(None);
    }
    let mut length = 0usize;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(first.split_whitespace().nth(1).map(str::to_owned))
}
