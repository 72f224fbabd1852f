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

mod read;
mod reserve;

use read::zstd_frames;
pub use read::{load_result, read_requests, read_telemetry, sidecar_path, telemetry_path};

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
    /// The disk filled: the write was made in the space kept in reserve (see `reserve`),
    /// so every trial measured so far is in `path`; the run must stop.
    #[error(
        "the disk holding {path} is full ({error}): every trial measured so far is in {path}, \
         written into the {reserve_mib} MiB servebench keeps in reserve beside it for this. \
         Free space there (`df -h {dir}` shows how much is left) and continue with \
         `servebench run --resume {path}`",
        dir = .path.parent().unwrap_or(Path::new(".")).display()
    )]
    DiskFull {
        /// The result file, which holds every trial.
        path: PathBuf,
        /// The error of the write that found the disk full.
        error: std::io::Error,
        /// The reserve's size, MiB.
        reserve_mib: u64,
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
    // A temporary file left half-written (a full disk) would hold the very space a retry
    // needs: it goes on every failure.
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(err(e));
    }
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
fn append_lines<T: serde::Serialize>(path: &Path, lines: &[T]) -> std::io::Result<u64> {
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
        f.sync_all()?;
        Ok(f.metadata()?.len() - before)
    })();
    if written.is_err() {
        let _ = f.set_len(before);
    }
    written
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

    /// Rewrite the result file. When that fails because the disk is full, the run's reserve
    /// is freed and the write made there ([`StoreError::DiskFull`]: the run must stop); when
    /// it fails otherwise (folder unwritable), the result is written to a rescue file in the
    /// system's temporary folder instead, and the error says where the measured data is.
    pub fn save(&self, result: &RunResult) -> Result<(), StoreError> {
        let mut freed = None;
        match self.with_reserve(&mut freed, || write_json_atomic(&self.result_path, result)) {
            Ok(()) => self.after_write(freed, 0),
            Err(e) => Err(self.rescue_result(e, result)),
        }
    }

    /// A result that could not be written to its file, written to a rescue file instead:
    /// the error that says where it is.
    fn rescue_result(&self, e: StoreError, result: &RunResult) -> StoreError {
        let StoreError::Write {
            path,
            error: source,
        } = e
        else {
            return e;
        };
        let rescue = rescue_path(&result.run_id, "json");
        match write_json_atomic(&rescue, result) {
            Ok(()) => StoreError::Rescued {
                path,
                error: source,
                rescue,
            },
            Err(_) => StoreError::Write {
                path,
                error: source,
            },
        }
    }

    /// `.<run id>.reserve` beside the result: space kept for the writes a full disk would
    /// refuse (`store/reserve.rs`).
    pub fn reserve_path(&self) -> PathBuf {
        reserve::path_of(&self.result_path)
    }

    /// Deletes the reserve (the run is over).
    pub fn release_reserve(&self) {
        let _ = reserve::release(&self.reserve_path());
    }

    /// Runs `write`; when it fails because the disk is full and the reserve is there, frees
    /// the reserve (its size and the error kept in `freed`) and runs it once more.
    fn with_reserve<T>(
        &self,
        freed: &mut Option<(u64, std::io::Error)>,
        write: impl Fn() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match write() {
            Err(StoreError::Write { path, error }) if reserve::is_full(&error) => {
                match reserve::release(&self.reserve_path()) {
                    Some(len) => {
                        *freed = Some((len, error));
                        write()
                    }
                    None => Err(StoreError::Write { path, error }),
                }
            }
            r => r,
        }
    }

    /// After writes that succeeded: the disk-full error when they needed the reserve, else
    /// the reserve grown to hold the next ones (`frame_len`: the sidecar frame just written).
    fn after_write(
        &self,
        freed: Option<(u64, std::io::Error)>,
        frame_len: u64,
    ) -> Result<(), StoreError> {
        if let Some((len, error)) = freed {
            return Err(StoreError::DiskFull {
                path: self.result_path.clone(),
                error,
                reserve_mib: len.div_ceil(1 << 20),
            });
        }
        let result_len = fs::metadata(&self.result_path).map_or(0, |m| m.len());
        reserve::keep(&self.reserve_path(), reserve::wanted(result_len, frame_len));
        Ok(())
    }

    /// Append a trial's requests to the sidecar and fsync it (the sidecar half of
    /// [`Self::save_trial`]). On failure the sidecar is cut back to its length before the
    /// append, so it never holds half a trial.
    pub fn append_requests(&self, lines: &[RequestLine]) -> Result<(), StoreError> {
        self.append_frame(lines).map(|_| ())
    }

    /// [`Self::append_requests`], giving the bytes appended.
    fn append_frame(&self, lines: &[RequestLine]) -> Result<u64, StoreError> {
        append_lines(&self.requests_path, lines).map_err(|source| StoreError::Write {
            path: self.requests_path.clone(),
            error: source,
        })
    }

    /// Record one finished trial: its requests to the sidecar, then the result file (already
    /// holding the trial) rewritten; on a full disk, both into the space of the reserve
    /// ([`Self::save`]). When the sidecar cannot be written, the result is still saved (or
    /// rescued) and the requests go to a rescue file in the temporary folder; the error says
    /// where everything is.
    pub fn save_trial(&self, result: &RunResult, lines: &[RequestLine]) -> Result<(), StoreError> {
        let mut freed = None;
        let sidecar = if lines.is_empty() {
            Ok(0)
        } else {
            self.with_reserve(&mut freed, || self.append_frame(lines))
        };
        let saved = self
            .with_reserve(&mut freed, || write_json_atomic(&self.result_path, result))
            .map_err(|e| self.rescue_result(e, result));
        let source = match sidecar {
            Ok(frame) => return saved.and_then(|()| self.after_write(freed, frame)),
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
            Ok(_) => format!(
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
            .map(|_| ())
            .map_err(|error| StoreError::Write { path, error })
    }
}

/// Replace a file's bytes atomically; a temporary file left by a failure is removed (on a
/// full disk it would hold the space a retry needs).
fn replace_file(path: &Path, kept: &[u8]) -> Result<(), StoreError> {
    let tmp = path.with_extension("tmp");
    let written = (|| {
        let mut out = File::create(&tmp)?;
        out.write_all(kept)?;
        out.sync_all()?;
        fs::rename(&tmp, path)
    })();
    written.map_err(|source| {
        let _ = fs::remove_file(&tmp);
        StoreError::Write {
            path: path.to_owned(),
            error: source,
        }
    })
}
