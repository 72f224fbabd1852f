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
    /// The text is not a Chrome trace (or it ends early: still being written).
    #[error("{path}: not a complete Chrome trace: {error}")]
    Json {
        /// The file.
        path: String,
        /// serde_json's message (line and column).
        error: serde_json::Error,
    },
}

/// Reads the kept events of the trace at `path` (`.gz`, or gzip by its magic bytes),
/// calling `each` with every one in file order.
pub fn read_trace(path: &Path, each: &mut dyn FnMut(TraceEvent)) -> Result<(), TraceError> {
    let io = |error| TraceError::Io {
        path: path.display().to_string(),
        error,
    };
    let mut file = BufReader::with_capacity(1 << 20, File::open(path).map_err(io)?);
    let gzip = {
        let buf = std::io::BufRead::fill_buf(&mut file).map_err(io)?;
        buf.starts_with(&[0x1f, 0x8b])
    };
    let reader: Box<dyn Read> = if gzip {
        Box::new(BufReader::with_capacity(
            1 << 20,
            flate2::read::MultiGzDecoder::new(file),
        ))
    } else {
        Box::new(file)
    };
    read_events(reader, each).map_err(|error| TraceError::Json {
        path: path.display().to_string(),
        error,
    })
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
        Some(TraceEvent {
            name: self.name?,
            kind,
            lane,
            ts: self.ts?,
            dur: self.dur.unwrap_or(0.0).max(0.0),
        })
    }
}
