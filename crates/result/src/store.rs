//! Writing results so a crash loses nothing already measured: the result file is rewritten
//! atomically (temp file, fsync, rename, fsync of the directory) after every trial; the
//! sidecar is appended and fsynced after every trial, and on resume cut back to the trials
//! the result file holds.
//!
//! The sidecar of a new run is `<run id>.requests.jsonl.zst`: one zstd frame per trial
//! (frames concatenate into one valid zstd stream), so a resume cuts it back frame by frame
//! without recompressing, and a frame cut short by a crash is dropped whole. A run started
//! with a plain `<run id>.requests.jsonl` keeps appending plain lines; [`read_requests`]
//! reads either.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use super::types::{RequestLine, RunResult};

/// A result that could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Writing failed; what was measured before this write is still in `path` (the previous
    /// version of the file), and the new data is in memory.
    #[error("cannot write {path}: {error}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// Writing failed, and every trial measured so far was written to `rescue` instead.
    #[error(
        "cannot write {path}: {error}. Every trial measured so far was saved to {rescue}; \
         free space or fix permissions, copy it back to {path}, and continue with `servebench run --resume {path}`"
    )]
    Rescued {
        /// The result file that could not be written.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
        /// Where the result was written instead.
        rescue: PathBuf,
    },
    /// A trial's request records could not be appended to the sidecar (which was cut back
    /// to its previous length). The message says where they went instead and where the
    /// trial's summary is.
    #[error("{message}")]
    Sidecar {
        /// The sidecar.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
        /// What happened to the data, in words, with paths.
        message: String,
    },
    /// Reading failed.
    #[error("cannot read result {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The file is not a servebench result.
    #[error("{path} is not a servebench result file: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// Write `value` as pretty JSON to `path` atomically.
pub fn write_json_atomic<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let err = |source| StoreError::Write {
        path: path.to_owned(),
        error: source,
    };
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| err(std::io::Error::other(e)))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(err)?;
    let tmp = dir.join(format!(
        ".{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("result")
    ));
    {
        let mut f = File::create(&tmp).map_err(err)?;
        f.write_all(&bytes).map_err(err)?;
        f.write_all(b"\n").map_err(err)?;
        f.sync_all().map_err(err)?;
    }
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        err(e)
    })?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Where data goes when its own file cannot be written: the system's temporary folder,
/// named after the run (`servebench-rescue-<run id>.<ext>`).
fn rescue_path(run_id: &str, ext: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("servebench-rescue-{run_id}.{ext}"))
}

/// zstd level of the sidecar's frames: fast (a 7,500-request trial compresses in well under
/// a second) and, with the compact event times, more than 5× smaller than plain JSON lines
/// (docs/performance.md).
const ZSTD_LEVEL: i32 = 3;

fn is_zstd(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "zst")
}

/// Appends `lines` to `path` as JSON lines (one zstd frame when `path` ends in `.zst`) and
/// fsyncs; on failure cuts the file back to its previous length (best effort).
fn append_lines<T: serde::Serialize>(path: &Path, lines: &[T]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let f = OpenOptions::new().create(true).append(true).open(path)?;
    let before = f.metadata()?.len();
    // Streamed through a small buffer: a trial of a million requests must not need a second
    // copy of its records as one JSON text in memory.
    let written = (|| {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, &f);
        if is_zstd(path) {
            let mut z = zstd::stream::write::Encoder::new(&mut w, ZSTD_LEVEL)?;
            for l in lines {
                serde_json::to_writer(&mut z, l).map_err(std::io::Error::other)?;
                z.write_all(b"\n")?;
            }
            z.finish()?;
        } else {
            for l in lines {
                serde_json::to_writer(&mut w, l).map_err(std::io::Error::other)?;
                w.write_all(b"\n")?;
            }
        }
        w.flush()?;
        drop(w);
        f.sync_all()
    })();
    if written.is_err() {
        let _ = f.set_len(before);
    }
    written
}

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
fn zstd_frames(bytes: &[u8]) -> Vec<(std::ops::Range<usize>, Option<u64>)> {
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
    serde_json::from_str(&text).map_err(|e| StoreError::Parse {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// Where one run's files live.
#[derive(Debug, Clone)]
pub struct ResultStore {
    /// The result JSON.
    pub result_path: PathBuf,
    /// The requests sidecar.
    pub requests_path: PathBuf,
}

impl ResultStore {
    /// `dir/<run_id>.json` and `dir/<run_id>.requests.jsonl`.
    pub fn new(dir: &Path, run_id: &str) -> Self {
        Self {
            result_path: dir.join(format!("{run_id}.json")),
            requests_path: dir.join(format!("{run_id}.requests.jsonl.zst")),
        }
    }

    /// The store of an existing result file.
    pub fn for_result(result_path: &Path) -> Self {
        Self {
            result_path: result_path.to_owned(),
            requests_path: sidecar_path(result_path),
        }
    }

    /// Rewrite the result file. When that fails (disk full, folder unwritable), the result
    /// is written to a rescue file in the system's temporary folder instead, and the error
    /// says where the measured data is.
    pub fn save(&self, result: &RunResult) -> Result<(), StoreError> {
        match write_json_atomic(&self.result_path, result) {
            Ok(()) => Ok(()),
            Err(StoreError::Write {
                path,
                error: source,
            }) => {
                let rescue = rescue_path(&result.run_id, "json");
                match write_json_atomic(&rescue, result) {
                    Ok(()) => Err(StoreError::Rescued {
                        path,
                        error: source,
                        rescue,
                    }),
                    Err(_) => Err(StoreError::Write {
                        path,
                        error: source,
                    }),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Append a trial's requests to the sidecar and fsync it (the sidecar half of
    /// [`Self::save_trial`]). On failure the sidecar is cut back to its length before the
    /// append, so it never holds half a trial.
    pub fn append_requests(&self, lines: &[RequestLine]) -> Result<(), StoreError> {
        append_lines(&self.requests_path, lines).map_err(|source| StoreError::Write {
            path: self.requests_path.clone(),
            error: source,
        })
    }

    /// Record one finished trial: its requests to the sidecar, then the result file (already
    /// holding the trial) rewritten. When the sidecar cannot be written, the result is still
    /// saved (or rescued) and the requests go to a rescue file in the temporary folder; the
    /// error says where everything is.
    pub fn save_trial(&self, result: &RunResult, lines: &[RequestLine]) -> Result<(), StoreError> {
        let sidecar = if lines.is_empty() {
            Ok(())
        } else {
            self.append_requests(lines)
        };
        let saved = self.save(result);
        let source = match sidecar {
            Ok(()) => return saved,
            Err(StoreError::Write { error, .. }) => error,
            Err(e) => return Err(e),
        };
        let ext = if is_zstd(&self.requests_path) {
            "requests.jsonl.zst"
        } else {
            "requests.jsonl"
        };
        let rescue = rescue_path(&result.run_id, ext);
        let requests = match append_lines(&rescue, lines) {
            Ok(()) => format!(
                "this trial's {} request records were saved to {} instead",
                lines.len(),
                rescue.display()
            ),
            Err(e) => format!(
                "this trial's {} request records could not be saved anywhere ({}: {e}); its summary and histograms are kept",
                lines.len(),
                rescue.display()
            ),
        };
        let summaries = match &saved {
            Ok(()) => format!(
                "every trial's summary, this one included, is in {}",
                self.result_path.display()
            ),
            Err(StoreError::Rescued { rescue, .. }) => format!(
                "the result file could not be written either: every trial's summary was saved to {}",
                rescue.display()
            ),
            Err(e) => format!(
                "the result file could not be written either ({e}); {} holds the trials before this one",
                self.result_path.display()
            ),
        };
        let message = format!(
            "cannot write {}: {source}. {requests}; {summaries}. Free space or fix permissions, \
             copy the rescued files back (append the requests to the sidecar), and continue with \
             `servebench run --resume {}`",
            self.requests_path.display(),
            self.result_path.display()
        );
        Err(StoreError::Sidecar {
            path: self.requests_path.clone(),
            error: source,
            message,
        })
    }

    /// Keep only sidecar lines of trials in `keep` (after a crash between the sidecar append
    /// and the result rewrite, or a torn last line).
    pub fn prune_requests(&self, keep: &dyn Fn(usize) -> bool) -> Result<(), StoreError> {
        let telemetry = telemetry_path(&self.result_path);
        if let Ok(bytes) = fs::read(&telemetry) {
            let mut kept = Vec::new();
            for (range, seq) in zstd_frames(&bytes) {
                if seq.is_some_and(|s| keep(s as usize)) {
                    kept.extend_from_slice(&bytes[range]);
                }
            }
            replace_file(&telemetry, &kept)?;
        }
        let Ok(f) = File::open(&self.requests_path) else {
            return Ok(());
        };
        let mut kept = Vec::new();
        if is_zstd(&self.requests_path) {
            // One frame per trial: keep the frames of kept trials, byte for byte.
            let mut bytes = Vec::new();
            BufReader::new(f)
                .read_to_end(&mut bytes)
                .map_err(|error| StoreError::Read {
                    path: self.requests_path.clone(),
                    error,
                })?;
            for (range, seq) in zstd_frames(&bytes) {
                if seq.is_some_and(|s| keep(s as usize)) {
                    kept.extend_from_slice(&bytes[range]);
                }
            }
            return self.replace_requests(&kept);
        }
        for line in BufReader::new(f).lines() {
            let Ok(line) = line else { break };
            let seq = serde_json::from_str::<serde_json::Value>(&line)
                .ok()
                .and_then(|v| v.get("seq").and_then(serde_json::Value::as_u64));
            if let Some(seq) = seq
                && keep(seq as usize)
            {
                kept.extend_from_slice(line.as_bytes());
                kept.push(b'\n');
            }
        }
        self.replace_requests(&kept)
    }

    /// How many measured (not warm-up) request records the sidecar holds for each trial
    /// `seq`; empty when there is no sidecar. A resume compares them with the trials' own
    /// counts, so a trial whose records were cut short is not carried on silently.
    pub fn measured_counts(&self) -> Result<std::collections::BTreeMap<usize, usize>, StoreError> {
        #[derive(serde::Deserialize)]
        struct Of {
            seq: usize,
            #[serde(default)]
            warmup: bool,
        }
        let mut out = std::collections::BTreeMap::new();
        let Ok(f) = File::open(&self.requests_path) else {
            return Ok(out);
        };
        let read_err = |error| StoreError::Read {
            path: self.requests_path.clone(),
            error,
        };
        let reader: Box<dyn Read> = if is_zstd(&self.requests_path) {
            Box::new(zstd::stream::read::Decoder::new(f).map_err(read_err)?)
        } else {
            Box::new(f)
        };
        for line in BufReader::new(reader).lines() {
            let line = line.map_err(read_err)?;
            if let Ok(Of { seq, warmup: false }) = serde_json::from_str::<Of>(&line) {
                *out.entry(seq).or_insert(0) += 1;
            }
        }
        Ok(out)
    }

    /// Replace the sidecar's bytes atomically.
    fn replace_requests(&self, kept: &[u8]) -> Result<(), StoreError> {
        replace_file(&self.requests_path, kept)
    }

    /// Append one trial's telemetry to the telemetry sidecar ([`telemetry_path`]) as one
    /// zstd frame, fsynced; on failure the file is cut back (it never holds half a trial).
    pub fn append_telemetry(
        &self,
        line: &crate::telemetry::TrialTelemetry,
    ) -> Result<(), StoreError> {
        let path = telemetry_path(&self.result_path);
        append_lines(&path, std::slice::from_ref(line))
            .map_err(|error| StoreError::Write { path, error })
    }
}

/// Replace a file's bytes atomically.
fn replace_file(path: &Path, kept: &[u8]) -> Result<(), StoreError> {
    let tmp = path.with_extension("tmp");
    let err = |source| StoreError::Write {
        path: path.to_owned(),
        error: source,
    };
    let mut out = File::create(&tmp).map_err(err)?;
    out.write_all(kept).map_err(err)?;
    out.sync_all().map_err(err)?;
    fs::rename(&tmp, path).map_err(err)
}
