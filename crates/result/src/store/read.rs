//! Reading a result and its sidecars back: the result file, every line of a request or
//! telemetry sidecar (plain or zstd frames), and the frames a resume keeps.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::{StoreError, is_zstd};
use crate::types::{RequestLine, RunResult};

/// The sidecar of the result at `result_path`: `<stem>.requests.jsonl.zst`, else
/// `<stem>.requests.jsonl`, whichever exists (the compressed name when neither does).
pub fn sidecar_path(result_path: &Path) -> PathBuf {
    let stem = result_path
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.trim_end_matches(".json").to_owned())
        .unwrap_or_default();
    let dir = result_path.parent().unwrap_or(Path::new("."));
    let zst = dir.join(format!("{stem}.requests.jsonl.zst"));
    let plain = dir.join(format!("{stem}.requests.jsonl"));
    if !zst.exists() && plain.exists() {
        plain
    } else {
        zst
    }
}

/// Every line of a sidecar, plain (`.jsonl`) or compressed (`.jsonl.zst`, any number of
/// frames), record versions 1 and 2.
pub fn read_requests(path: &Path) -> Result<Vec<RequestLine>, StoreError> {
    read_lines(path)
}

/// The telemetry sidecar of the result at `result_path`: `<stem>.telemetry.jsonl.zst` (one
/// zstd frame per trial, like the request sidecar).
pub fn telemetry_path(result_path: &Path) -> PathBuf {
    let stem = result_path
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.trim_end_matches(".json").to_owned())
        .unwrap_or_default();
    result_path
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!("{stem}.telemetry.jsonl.zst"))
}

/// Every trial's telemetry in a telemetry sidecar ([`telemetry_path`]); empty when there is
/// none (telemetry off, or a result written before telemetry existed).
pub fn read_telemetry(path: &Path) -> Result<Vec<crate::telemetry::TrialTelemetry>, StoreError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    read_lines(path)
}

fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, StoreError> {
    let read_err = |error| StoreError::Read {
        path: path.to_owned(),
        error,
    };
    let f = File::open(path).map_err(read_err)?;
    let reader: Box<dyn Read> = if is_zstd(path) {
        Box::new(zstd::stream::read::Decoder::new(f).map_err(read_err)?)
    } else {
        Box::new(f)
    };
    let mut out = Vec::new();
    for (i, line) in BufReader::new(reader).lines().enumerate() {
        let line = line.map_err(read_err)?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(&line).map_err(|e| StoreError::Parse {
            path: path.to_owned(),
            message: format!("line {}: {e}", i + 1),
        })?);
    }
    Ok(out)
}

/// The complete zstd frames of `bytes`, each with the `seq` of its first line; reading
/// stops at the first frame that is cut short or unreadable (a crash mid-append).
pub(super) fn zstd_frames(bytes: &[u8]) -> Vec<(std::ops::Range<usize>, Option<u64>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let Ok(n) = zstd::zstd_safe::find_frame_compressed_size(&bytes[at..]) else {
            break;
        };
        let frame = &bytes[at..at + n];
        let Ok(plain) = zstd::stream::decode_all(frame) else {
            break;
        };
        let seq = plain
            .split(|b| *b == b'\n')
            .next()
            .and_then(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
            .and_then(|v| v.get("seq").and_then(serde_json::Value::as_u64));
        out.push((at..at + n, seq));
        at += n;
    }
    out
}

/// Read a result file.
pub fn load_result(path: &Path) -> Result<RunResult, StoreError> {
    let text = fs::read_to_string(path).map_err(|source| StoreError::Read {
        path: path.to_owned(),
        error: source,
    })?;
    if servebench_spec::text::starts_with_bom(text.as_bytes()) {
        return Err(StoreError::Parse {
            path: path.to_owned(),
            message: servebench_spec::text::BOM_WORDS.to_owned(),
        });
    }
    let parse = |message: String| StoreError::Parse {
        path: path.to_owned(),
        message,
    };
    let mut de = serde_json::Deserializer::from_str(&text);
    let result: RunResult = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let at = e.path().to_string();
        let inner = e.into_inner();
        parse(if at == "." {
            inner.to_string()
        } else {
            format!("at `{at}`: {inner}")
        })
    })?;
    host_probes_measured(&result).map_err(parse)?;
    Ok(result)
}

/// Every figure of the host probes a result holds (the run's and each server start's) is a
/// rate above 0: a 0, a negative or a non-finite figure is no measurement (a file edited or
/// damaged), refused with its key rather than compared as one.
fn host_probes_measured(r: &RunResult) -> Result<(), String> {
    let starts = r
        .servers
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("servers[{i}].host_probe"), &s.host_probe));
    for (key, probe) in std::iter::once(("host_probe".to_owned(), &r.host_probe)).chain(starts) {
        let Some(p) = probe else { continue };
        for (field, v) in [
            ("single_thread", p.single_thread),
            ("all_core", p.all_core),
            ("memory_gbps", p.memory_gbps),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!(
                    "`{key}.{field}` is {v}: a figure of the host probe is a rate above 0, so \
                     the file was edited or damaged; restore it as servebench wrote it, or \
                     delete `{key}` to compare without the probe"
                ));
            }
        }
    }
    Ok(())
}
