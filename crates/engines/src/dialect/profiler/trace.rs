//! Writing a simulated PyTorch profiler trace: a Chrome trace (`{"traceEvents": […]}`) of
//! complete (`ph: "X"`) events, as torch's `export_chrome_trace` writes them: device
//! kernels (`cat: kernel`, `pid` the device), the CPU operators that launch them
//! (`cat: cpu_op`, with `Input Dims` when shapes are recorded) and, with stacks, the Python
//! functions around them (`cat: python_function`).

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use super::kernels::SimKernel;

/// Most steps a trace holds: a profiler left running over a whole run writes no more.
const MAX_STEPS: u64 = 2_000;

/// What one trace file holds.
#[derive(Debug, Clone)]
pub struct TraceSpec<'a> {
    /// One step's kernels, in order; empty: a CPU-only trace (vLLM's API process).
    pub step: &'a [SimKernel],
    /// The device (rank) the kernels ran on.
    pub device: u32,
    /// Steps the engine took while profiling.
    pub steps: u64,
    /// Device kernels recorded (`GPU`/`CUDA` activity).
    pub gpu: bool,
    /// CPU operators recorded (`CPU` activity).
    pub cpu: bool,
    /// Python stacks recorded (`with_stack`).
    pub with_stack: bool,
    /// Input shapes recorded (`record_shapes`).
    pub record_shapes: bool,
    /// Write gzip.
    pub gzip: bool,
}

impl TraceSpec<'_> {
    /// Every event of the trace.
    fn events(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let pid = i64::from(std::process::id());
        let mut t = 1_000.0;
        let mut id = 0u64;
        for _ in 0..self.steps.min(MAX_STEPS) {
            if self.with_stack {
                out.push(python(
                    "model_runner.py(1520): execute_model",
                    pid,
                    t,
                    self.step_us(),
                ));
            }
            for k in self.step {
                id += 1;
                if self.cpu {
                    let mut args = json!({"External id": id});
                    if self.record_shapes {
                        args["Input Dims"] = json!([[8, 2048], [2048, 2048]]);
                        args["Input type"] = json!(["c10::BFloat16", "c10::BFloat16"]);
                    }
                    if self.with_stack {
                        out.push(python("layers.py(212): forward", pid, t, 4.0));
                    }
                    out.push(json!({"ph": "X", "cat": "cpu_op", "name": k.op, "pid": pid,
                        "tid": pid, "ts": t, "dur": 3.0, "args": args}));
                }
                if self.gpu {
                    out.push(json!({"ph": "X", "cat": "kernel", "name": k.name,
                        "pid": self.device, "tid": 7, "ts": t + 2.0, "dur": k.us,
                        "args": {"device": self.device, "stream": 7, "External id": id}}));
                }
                t += k.us + 1.0;
            }
            t += 50.0;
        }
        out
    }

    fn step_us(&self) -> f64 {
        self.step.iter().map(|k| k.us + 1.0).sum()
    }
}

fn python(name: &str, pid: i64, ts: f64, dur: f64) -> Value {
    json!({"ph": "X", "cat": "python_function", "name": name, "pid": pid, "tid": pid,
        "ts": ts, "dur": dur, "args": {"Python parent id": 1}})
}

/// Writes the trace to `path` (creating its folder); its size in bytes.
pub fn write_trace(path: &Path, spec: &TraceSpec<'_>) -> std::io::Result<u64> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_vec(&json!({
        "schemaVersion": 1,
        "traceEvents": spec.events(),
        "traceName": path.display().to_string(),
    }))
    .map_err(std::io::Error::other)?;
    let bytes = if spec.gzip {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&text)?;
        gz.finish()?
    } else {
        text
    };
    std::fs::write(path, &bytes)?;
    Ok(bytes.len() as u64)
}
