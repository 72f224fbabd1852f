//! Reading a PyTorch profiler trace (Chrome trace JSON, gzip or not) as a stream: the
//! `traceEvents` array is visited one event at a time and only the complete (`ph: "X"`)
//! device events — and the `cpu_op` events, for traces of a CPU — are kept, so a trace of
//! gigabytes never sits in memory whole.

use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The kind of a kept event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    /// A device kernel (`cat: kernel`).
    Kernel,
    /// A device copy or fill (`cat: gpu_memcpy`, `gpu_memset`).
    Copy,
    /// A CPU operator (`cat: cpu_op`).
    CpuOp,
}

/// One kept event: its name, kind, where it ran and when.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceEvent {
    /// The kernel's or operator's name.
    pub name: String,
    /// What it is.
    pub kind: EventKind,
    /// The device (kernels: the trace's `pid`, the device index) or the process and thread
    /// of a CPU operator.
    pub lane: (i64, i64),
    /// Start, µs.
    pub ts: f64,
    /// Duration, µs.
    pub dur: f64,
}

/// A trace that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// The text ends before the trace does: still being written, or cut short.
    #[error(
        "{path}: the trace ends early ({error}): still being written by the engine, or cut \
         short (a full disk, a killed profiler)"
    )]
    Incomplete {
        /// The file.
        path: String,
        /// serde_json's message (line and column).
        error: serde_json::Error,
    },
    /// The text is not JSON, or JSON that is not a Chrome trace.
    #[error(
        "{path}: not a Chrome trace ({error}); the file begins `{head}`: the folder \
         `evidence.kernels.dir` must hold only the engine's profiler traces"
    )]
    Json {
        /// The file.
        path: String,
        /// serde_json's message (line and column).
        error: serde_json::Error,
        /// Its first bytes, as text on one line.
        head: String,
    },
    /// A gzip trace that inflates far beyond what a profiler's JSON compresses to.
    #[error(
        "{path}: the gzip trace inflates beyond {MAX_INFLATION}× its {compressed} compressed \
         bytes (a profiler's JSON compresses about 10–30×): not a profiler trace, and not \
         read further"
    )]
    Inflated {
        /// The file.
        path: String,
        /// Its size on disk.
        compressed: u64,
    },
}

impl TraceError {
    /// Whether the trace may still become readable (it is being written): worth waiting
    /// for, where any other error is final.
    pub fn is_incomplete(&self) -> bool {
        matches!(self, TraceError::Incomplete { .. })
    }
}

/// How many times its compressed size a gzip trace may inflate to (plus [`INFLATION_FLOOR`]).
pub const MAX_INFLATION: u64 = 200;

/// The longest kernel name kept, in bytes (C++ template names run to a few thousand): a
/// longer one is cut there and ends in `…`, so a trace's one huge name cannot swell the
/// result file that records it.
pub const MAX_NAME_BYTES: usize = 4096;

/// Bytes any gzip trace may inflate to, whatever its compressed size.
const INFLATION_FLOOR: u64 = 16 << 20;

/// Reads the kept events of the trace at `path` (`.gz`, or gzip by its magic bytes),
/// calling `each` with every one in file order. A gzip trace is read at most to
/// [`MAX_INFLATION`] times its size (a gzip bomb is refused, not inflated for minutes).
pub fn read_trace(path: &Path, each: &mut dyn FnMut(TraceEvent)) -> Result<(), TraceError> {
    let shown = path.display().to_string();
    let io = |error| TraceError::Io {
        path: shown.clone(),
        error,
    };
    let compressed = std::fs::metadata(path).map_err(io)?.len();
    let mut file = BufReader::with_capacity(1 << 20, File::open(path).map_err(io)?);
    let (gzip, head) = {
        let buf = std::io::BufRead::fill_buf(&mut file).map_err(io)?;
        (
            buf.starts_with(&[0x1f, 0x8b]),
            buf[..buf.len().min(64)].to_vec(),
        )
    };
    let limit = compressed
        .saturating_mul(MAX_INFLATION)
        .saturating_add(INFLATION_FLOOR);
    let mut hit = false;
    let read = if gzip {
        let mut bounded = Bounded {
            inner: flate2::read::MultiGzDecoder::new(file),
            left: limit,
            hit: false,
        };
        let out = read_events(BufReader::with_capacity(1 << 20, &mut bounded), each);
        hit = bounded.hit;
        out
    } else {
        read_events(file, each)
    };
    let Err(error) = read else {
        return Ok(());
    };
    if hit {
        return Err(TraceError::Inflated {
            path: shown,
            compressed,
        });
    }
    // A gzip stream cut short fails inside the decoder, as an I/O error "unexpected end".
    let cut = error.io_error_kind() == Some(std::io::ErrorKind::UnexpectedEof);
    if error.is_io() && !cut {
        return Err(TraceError::Io {
            path: shown,
            error: error.into(),
        });
    }
    Err(if error.is_eof() || cut {
        TraceError::Incomplete { path: shown, error }
    } else {
        TraceError::Json {
            path: shown,
            error,
            head: if gzip {
                "(gzip)".to_owned()
            } else {
                String::from_utf8_lossy(&head)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .escape_debug()
                    .to_string()
            },
        }
    })
}

/// A reader that fails once it has given `left` bytes (and says so in `hit`).
struct Bounded<R> {
    inner: R,
    left: u64,
    hit: bool,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            self.hit = true;
            return Err(std::io::Error::other("inflated beyond the bound"));
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// [`read_trace`] over any reader of the JSON text.
pub fn read_events(
    reader: impl Read,
    each: &mut dyn FnMut(TraceEvent),
) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_reader(reader);
    serde::Deserializer::deserialize_any(&mut de, Top { each })?;
    de.end()
}

/// The top level: `{"traceEvents": [...], ...}`, or a bare array of events (both are
/// Chrome trace formats).
struct Top<'a> {
    each: &'a mut dyn FnMut(TraceEvent),
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Chrome trace: an object with `traceEvents`, or an array of events")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "traceEvents" {
                map.next_value_seed(Events { each: self.each })?;
                seen = true;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if seen {
            Ok(())
        } else {
            Err(de::Error::missing_field("traceEvents"))
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Events { each: self.each }.visit_seq(seq)
    }
}

struct Events<'a> {
    each: &'a mut dyn FnMut(TraceEvent),
}

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(raw) = seq.next_element::<RawEvent>()? {
            if let Some(e) = raw.keep() {
                (self.each)(e);
            }
        }
        Ok(())
    }
}

/// The fields of an event servebench reads; `args` and the rest are skipped unparsed.
#[derive(Deserialize)]
struct RawEvent {
    #[serde(default)]
    ph: Option<String>,
    #[serde(default)]
    cat: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    ts: Option<f64>,
    #[serde(default)]
    dur: Option<f64>,
    #[serde(default)]
    pid: Option<Id>,
    #[serde(default)]
    tid: Option<Id>,
}

/// A `pid` or `tid`: a number, or a string (PyTorch writes some lanes as text).
#[derive(Deserialize)]
#[serde(untagged)]
enum Id {
    Num(i64),
    Float(f64),
    Text(String),
}

impl Id {
    fn value(&self) -> i64 {
        match self {
            Id::Num(n) => *n,
            Id::Float(f) => *f as i64,
            Id::Text(s) => s.trim().parse().unwrap_or_else(|_| {
                // A named lane: a stable number from its text.
                s.bytes()
                    .fold(0i64, |h, b| h.wrapping_mul(31).wrapping_add(i64::from(b)))
            }),
        }
    }
}

impl RawEvent {
    fn keep(self) -> Option<TraceEvent> {
        if self.ph.as_deref() != Some("X") {
            return None;
        }
        let kind = match self.cat.as_deref()? {
            "kernel" | "Kernel" => EventKind::Kernel,
            "gpu_memcpy" | "gpu_memset" | "Memcpy" | "Memset" => EventKind::Copy,
            "cpu_op" | "CPU Op" => EventKind::CpuOp,
            _ => return None,
        };
        let lane = (
            self.pid.as_ref().map_or(0, Id::value),
            match kind {
                EventKind::CpuOp => self.tid.as_ref().map_or(0, Id::value),
                // A device's kernels on every stream are one device's busy time.
                _ => 0,
            },
        );
        let mut name = self.name?;
        if name.len() > MAX_NAME_BYTES {
            let mut end = MAX_NAME_BYTES;
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            name.truncate(end);
            name.push('…');
        }
        Some(TraceEvent {
            name,
            kind,
            lane,
            ts: self.ts?,
            dur: self.dur.unwrap_or(0.0).max(0.0),
        })
    }
}
