//! What the simulated profilers share: the state of a profiling session, the kernels of a
//! simulated step and the trace writer. Each engine's routes, file names and answers live in
//! its own folder (`vllm/dialect/profiler.rs`, `sglang/dialect/profiler.rs`,
//! `transformers/profiler.rs`): the simulator serves `/start_profile` and `/stop_profile`
//! where the engine does, and at the stop writes small Chrome traces whose kernels are named
//! after the MoE backend it runs (docs/simulator.md, "Profilers").

pub mod kernels;
mod trace;

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

pub use kernels::SimKernel;
pub use trace::{TraceSpec, write_trace};

use crate::dialect::Served;

/// Layers of the simulated model a step's trace holds.
const LAYERS: usize = 2;

/// What a start asked for, and where the engine stood then.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// Where the traces go.
    pub dir: PathBuf,
    /// The engine's id of the session (SGLang's profile id, the launcher's count).
    pub id: String,
    /// CPU operators recorded.
    pub cpu: bool,
    /// Device kernels recorded.
    pub gpu: bool,
    /// Python stacks recorded.
    pub with_stack: bool,
    /// Input shapes recorded.
    pub record_shapes: bool,
    /// The engine's step count at the start.
    pub steps_at_start: u64,
}

impl Session {
    /// Engine steps taken since the start, the engine's count being `steps_now`.
    pub fn steps(&self, steps_now: u64) -> u64 {
        steps_now.saturating_sub(self.steps_at_start)
    }

    /// The trace of device `device`: `step`'s kernels, `steps_now` the engine's step count.
    pub fn trace<'a>(&self, steps_now: u64, step: &'a [SimKernel], device: u32) -> TraceSpec<'a> {
        TraceSpec {
            step,
            device,
            steps: self.steps(steps_now),
            gpu: self.gpu,
            cpu: self.cpu,
            with_stack: self.with_stack,
            record_shapes: self.record_shapes,
            gzip: true,
        }
    }
}

/// A server's profiler: the session running, if any, and how many were started.
#[derive(Debug, Default)]
pub struct ProfilerState {
    session: Mutex<Option<Session>>,
    starts: AtomicU64,
}

impl ProfilerState {
    /// Starts `s`; `false` (and nothing changes) while another runs.
    pub fn begin(&self, s: Session) -> bool {
        let mut cur = self.session.lock().unwrap_or_else(|e| e.into_inner());
        if cur.is_some() {
            return false;
        }
        *cur = Some(s);
        true
    }

    /// Ends the running session, if any.
    pub fn end(&self) -> Option<Session> {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// A session runs.
    pub fn running(&self) -> bool {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Counts a start: 1 for the first.
    pub fn count_start(&self) -> u64 {
        self.starts.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// The MoE backend whose kernels the traces hold: `--sim-kernels`, else the one the
/// server runs (`--moe-backend`), else `auto`.
pub fn kernel_backend(config: &Served) -> &str {
    let w = &config.wire;
    w.profiler
        .kernels
        .as_deref()
        .or(w.moe_backend.as_deref())
        .unwrap_or("auto")
}

/// One step's kernels under `config`'s backend: the layers', then the head's.
pub fn step_kernels(config: &Served) -> Vec<SimKernel> {
    let layer = kernels::layer(kernel_backend(config));
    let mut out = Vec::with_capacity(layer.len() * LAYERS + 2);
    for _ in 0..LAYERS {
        out.extend(layer.iter().cloned());
    }
    out.extend(kernels::head());
    out
}

/// Nanoseconds since the Unix epoch (torch's `time.time_ns()` in trace names).
pub fn unix_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// Seconds since the Unix epoch as Python's `str(time.time())` writes them.
pub fn unix_secs_text() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}.{:06}", d.as_secs(), d.subsec_micros())
}

/// Writes one trace per device `0..ranks` of a server with `config`, whose step count is
/// `steps_now`, named by `name(rank)` in the session's folder; their paths.
pub fn write_ranks(
    config: &Served,
    steps_now: u64,
    session: &Session,
    ranks: u32,
    name: impl Fn(u32) -> String,
) -> std::io::Result<Vec<PathBuf>> {
    let step = step_kernels(config);
    let mut out = Vec::new();
    for r in 0..ranks {
        let path = session.dir.join(name(r));
        write_trace(&path, &session.trace(steps_now, &step, r))?;
        out.push(path);
    }
    Ok(out)
}
