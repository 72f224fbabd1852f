//! Kernel evidence (`spec.evidence.kernels`, docs/kernels.md): what a PyTorch profiler trace
//! says ran — per trace file (one per rank), the kernels by name and by category, and the
//! busy time (the union of kernel intervals per device) — and the verify rules judged on it.
//! Pure: the runner starts the profiler and hands the files here.

mod aggregate;
mod category;
pub mod listing;
mod rule;
mod trace;

#[cfg(test)]
mod tests;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use aggregate::{Aggregator, read_rank};
pub use category::{Category, PATTERNS, categorize};
pub use rule::{RuleVerdict, judge, top_lines};
pub use trace::{
    EventKind, MAX_INFLATION, MAX_NAME_BYTES, TraceError, TraceEvent, read_events, read_trace,
};

/// The most distinct names kept per rank; the rest are folded into one `(N other names)`.
pub const MAX_NAMES: usize = 2000;

/// The kernel evidence of one server start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KernelEvidence {
    /// The block (server start), from 0.
    pub block: usize,
    /// Its variant.
    pub variant: String,
    /// Concurrency of the probe load.
    pub concurrency: u32,
    /// Requests of the probe load (none of them counts as load of a trial).
    pub requests: u32,
    /// Requests that completed.
    pub completed: u32,
    /// Output tokens of the probe load.
    pub output_tokens: u64,
    /// The probe load's wall time, s.
    pub load_s: f64,
    /// Median TPOT of the probe's requests, ms (the client's wall clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    /// The whole step: profiler start to the last trace read, s.
    pub step_s: f64,
    /// Seconds spent waiting for the traces to be written after the stop.
    pub wait_s: f64,
    /// Bytes of the trace files read.
    pub trace_bytes: u64,
    /// Per trace file, one per rank (SGLang: one per TP rank; vLLM also writes its API
    /// process's CPU-only trace, which holds no kernels).
    pub ranks: Vec<RankKernels>,
    /// Why the evidence is missing or partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What one trace holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RankKernels {
    /// The trace's file name.
    pub file: String,
    /// What was aggregated: device kernels (and copies), or, in a trace without any, the
    /// CPU operators (a CPU run).
    pub source: EvidenceSource,
    /// Events aggregated.
    pub events: u64,
    /// Lanes (devices; threads for CPU operators) seen.
    pub lanes: u32,
    /// Sum of the events' durations, µs.
    pub total_us: f64,
    /// The union of the events' intervals per lane, summed over lanes, µs: the time the
    /// device was busy. Shares are of this.
    pub busy_us: f64,
    /// First event's start to the last event's end, µs.
    pub span_us: f64,
    /// By name, longest total first.
    pub kernels: Vec<KernelStat>,
    /// By category, in [`Category::ALL`] order (empty categories left out).
    pub categories: Vec<CategoryStat>,
}

/// What was aggregated in a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceSource {
    /// Device kernels (`cat: kernel`) and copies (`gpu_memcpy`, `gpu_memset`).
    Kernels,
    /// CPU operators (`cat: cpu_op`): the trace has no device events. Operators nest
    /// (`aten::linear` holds `aten::addmm`), so their shares may add up to more than 1.
    CpuOps,
    /// Neither.
    Empty,
}

/// One kernel (or operator) name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KernelStat {
    /// Its name as the trace writes it.
    pub name: String,
    /// Its category.
    pub category: Category,
    /// Launches.
    pub calls: u64,
    /// Total time, µs.
    pub total_us: f64,
    /// `total_us` over the rank's busy time.
    pub share: f64,
}

/// One category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CategoryStat {
    /// The category.
    pub category: Category,
    /// Launches.
    pub calls: u64,
    /// Total time, µs.
    pub total_us: f64,
    /// `total_us` over the rank's busy time.
    pub share: f64,
}

impl KernelEvidence {
    /// The ranks a rule is judged on: those with device kernels, or, where no trace has
    /// any, those with CPU operators (vLLM's API-process trace holds no kernels and is not
    /// a rank).
    pub fn judged_ranks(&self) -> Vec<&RankKernels> {
        let with = |s: EvidenceSource| -> Vec<&RankKernels> {
            self.ranks.iter().filter(|r| r.source == s).collect()
        };
        let k = with(EvidenceSource::Kernels);
        if k.is_empty() {
            with(EvidenceSource::CpuOps)
        } else {
            k
        }
    }

    /// Busy time per output token, ms, summed over the judged ranks' mean (each rank works
    /// on every token: the mean over ranks).
    pub fn busy_per_token_ms(&self) -> Option<f64> {
        let ranks = self.judged_ranks();
        if ranks.is_empty() || self.output_tokens == 0 {
            return None;
        }
        let busy = ranks.iter().map(|r| r.busy_us).sum::<f64>() / ranks.len() as f64;
        Some(busy / 1000.0 / self.output_tokens as f64)
    }

    /// Kernel time per decode step set against the TPOT: busy time per output token ×
    /// the probe's concurrency (a step makes one token per request in flight), over the
    /// median TPOT. Small: the host side, not the device, sets the pace.
    pub fn busy_share_of_tpot(&self) -> Option<f64> {
        let per_token = self.busy_per_token_ms()?;
        let tpot = self.tpot_ms.filter(|t| *t > 0.0)?;
        Some(per_token * f64::from(self.concurrency.max(1)) / tpot)
    }

    /// Per category, the mean over judged ranks of its time per output token, ms.
    pub fn category_per_token_ms(&self) -> Vec<(Category, f64)> {
        let ranks = self.judged_ranks();
        if ranks.is_empty() || self.output_tokens == 0 {
            return Vec::new();
        }
        Category::ALL
            .iter()
            .filter_map(|c| {
                let t: f64 = ranks
                    .iter()
                    .flat_map(|r| r.categories.iter().filter(|s| s.category == *c))
                    .map(|s| s.total_us)
                    .sum();
                (t > 0.0).then(|| {
                    (
                        *c,
                        t / ranks.len() as f64 / 1000.0 / self.output_tokens as f64,
                    )
                })
            })
            .collect()
    }
}
