//! What telemetry captured during one trial, as stored in the telemetry sidecar
//! (`<run id>.telemetry.jsonl.zst`, one line per trial): every GPU's samples and the
//! server's scrapes, columnar (one array per quantity, `null` where a sample lacks it), with
//! times in ms from the trial's measured start (negative before it). Bounded: a trial keeps
//! at most [`MAX_SAMPLES`] samples per GPU and scrapes (beyond, every other one is dropped
//! and `decimated` doubles), and at most [`MAX_RAW_SERIES`] raw server series.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most samples one trial keeps per GPU, and most scrapes (one hour at 5 Hz is 18,000: a
/// longer trial keeps every second sample, then every fourth, …).
pub const MAX_SAMPLES: usize = 20_000;
/// Most raw server series (distinct `name{labels}`) one trial keeps.
pub const MAX_RAW_SERIES: usize = 256;

/// One GPU as the sampler found it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuDevice {
    /// Index as the driver numbers it (NVML, `nvidia-smi`).
    pub index: u32,
    /// The name the driver reports (`NVIDIA H200`): the bandwidth table's key.
    pub name: String,
    /// `GPU-…`, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// The node it is on, for a server across nodes (absent: this host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Memory, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_total_mib: Option<u64>,
    /// Highest SM clock, MHz: what a clock below it is measured against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sm_clock_mhz: Option<u32>,
    /// Enforced power limit, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit_w: Option<f64>,
}

/// The clock-event ("throttle") reason bits NVML defines (`nvmlClocksEventReason*`, also
/// `nvidia-smi --query-gpu=clocks_event_reasons.active`), with their names.
pub const THROTTLE_REASONS: [(u64, &str, bool); 9] = [
    (0x1, "gpu_idle", false),
    (0x2, "applications_clocks_setting", false),
    (0x4, "sw_power_cap", true),
    (0x8, "hw_slowdown", true),
    (0x10, "sync_boost", false),
    (0x20, "sw_thermal_slowdown", true),
    (0x40, "hw_thermal_slowdown", true),
    (0x80, "hw_power_brake_slowdown", true),
    (0x100, "display_clock_setting", false),
];

/// The reasons that lower the clocks below what the GPU could run (power and thermal
/// limits, slowdowns): the bits [`THROTTLE_REASONS`] marks. Idle, sync boost and the
/// applications' or display's clock settings are not throttling.
pub const THROTTLING_MASK: u64 = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

/// The names of the reasons in `bits`.
pub fn reason_names(bits: u64) -> Vec<&'static str> {
    THROTTLE_REASONS
        .iter()
        .filter(|(b, _, _)| bits & b != 0)
        .map(|(_, n, _)| *n)
        .collect()
}

/// One GPU's samples during a trial, columnar.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuSeries {
    /// Position of the GPU in [`TrialTelemetry::devices`].
    pub gpu: usize,
    /// Sample times, ms from the trial's measured start.
    pub t_ms: Vec<i64>,
    /// SM clock, MHz.
    pub sm_clock_mhz: Vec<Option<u32>>,
    /// Memory clock, MHz.
    pub mem_clock_mhz: Vec<Option<u32>>,
    /// Power draw, W.
    pub power_w: Vec<Option<f64>>,
    /// The energy counter (NVML: mJ since the driver loaded), where the GPU has one.
    pub energy_mj: Vec<Option<u64>>,
    /// Temperature, °C.
    pub temperature_c: Vec<Option<u32>>,
    /// Share of the last sample period a kernel ran, %.
    pub util_gpu_pct: Vec<Option<u32>>,
    /// Share of the last sample period memory was read or written, %.
    pub util_mem_pct: Vec<Option<u32>>,
    /// Memory in use, MiB.
    pub memory_used_mib: Vec<Option<u64>>,
    /// Clock-event reason bits ([`THROTTLE_REASONS`]).
    pub throttle: Vec<Option<u64>>,
}

/// One GPU sample, as a source reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuSample {
    /// SM clock, MHz.
    pub sm_clock_mhz: Option<u32>,
    /// Memory clock, MHz.
    pub mem_clock_mhz: Option<u32>,
    /// Power draw, W.
    pub power_w: Option<f64>,
    /// Energy counter, mJ.
    pub energy_mj: Option<u64>,
    /// Temperature, °C.
    pub temperature_c: Option<u32>,
    /// Kernel utilisation, %.
    pub util_gpu_pct: Option<u32>,
    /// Memory utilisation, %.
    pub util_mem_pct: Option<u32>,
    /// Memory in use, MiB.
    pub memory_used_mib: Option<u64>,
    /// Clock-event reason bits.
    pub throttle: Option<u64>,
}

impl GpuSeries {
    /// An empty series of GPU `gpu`.
    pub fn new(gpu: usize) -> Self {
        GpuSeries {
            gpu,
            ..GpuSeries::default()
        }
    }

    /// Appends one sample at `t_ms`.
    pub fn push(&mut self, t_ms: i64, s: &GpuSample) {
        self.t_ms.push(t_ms);
        self.sm_clock_mhz.push(s.sm_clock_mhz);
        self.mem_clock_mhz.push(s.mem_clock_mhz);
        self.power_w.push(s.power_w);
        self.energy_mj.push(s.energy_mj);
        self.temperature_c.push(s.temperature_c);
        self.util_gpu_pct.push(s.util_gpu_pct);
        self.util_mem_pct.push(s.util_mem_pct);
        self.memory_used_mib.push(s.memory_used_mib);
        self.throttle.push(s.throttle);
    }

    /// Sample `i`.
    pub fn sample(&self, i: usize) -> GpuSample {
        let at = |v: &[Option<u32>]| v.get(i).copied().flatten();
        GpuSample {
            sm_clock_mhz: at(&self.sm_clock_mhz),
            mem_clock_mhz: at(&self.mem_clock_mhz),
            power_w: self.power_w.get(i).copied().flatten(),
            energy_mj: self.energy_mj.get(i).copied().flatten(),
            temperature_c: at(&self.temperature_c),
            util_gpu_pct: at(&self.util_gpu_pct),
            util_mem_pct: at(&self.util_mem_pct),
            memory_used_mib: self.memory_used_mib.get(i).copied().flatten(),
            throttle: self.throttle.get(i).copied().flatten(),
        }
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.t_ms.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.t_ms.is_empty()
    }

    /// Keeps every other sample (the first, third, …).
    pub fn halve(&mut self) {
        fn keep<T: Copy>(v: &mut Vec<T>) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
        keep(&mut self.t_ms);
        keep(&mut self.sm_clock_mhz);
        keep(&mut self.mem_clock_mhz);
        keep(&mut self.power_w);
        keep(&mut self.energy_mj);
        keep(&mut self.temperature_c);
        keep(&mut self.util_gpu_pct);
        keep(&mut self.util_mem_pct);
        keep(&mut self.memory_used_mib);
        keep(&mut self.throttle);
    }
}

/// The server's scrapes during a trial: the common series every engine profile maps its
/// names to, and the raw samples (`name{labels}` → value per scrape) they came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerSeries {
    /// The URL path scraped.
    pub path: String,
    /// The metric names read for each common series (`running` → `vllm:num_requests_running`).
    #[serde(default)]
    pub names: BTreeMap<String, String>,
    /// How each common series is read, where the engine's profile says (`preemptions` →
    /// `counter`: its increase over the trial; `gauge`: its peak). Files written before it
    /// have none: a series that never falls is then read as a counter.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kinds: BTreeMap<String, String>,
    /// Scrape times, ms from the trial's measured start (when the answer arrived).
    pub t_ms: Vec<i64>,
    /// Requests running (in the batch).
    pub running: Vec<Option<f64>>,
    /// Requests waiting (queued in the engine).
    pub waiting: Vec<Option<f64>>,
    /// KV-cache use, 0–1.
    pub kv_usage: Vec<Option<f64>>,
    /// Preemptions: the engine's counter (cumulative), or its gauge.
    pub preemptions: Vec<Option<f64>>,
    /// Raw samples of every gauge and counter the engine served, by `name{labels}`, one
    /// value per scrape (`null` where a scrape lacked it); histogram and summary families
    /// are left out.
    #[serde(default)]
    pub raw: BTreeMap<String, Vec<Option<f64>>>,
    /// Raw series not kept past [`MAX_RAW_SERIES`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub raw_dropped: usize,
    /// Scrapes that failed (refused, timed out, not the text format).
    #[serde(default)]
    pub failed: usize,
    /// The first scrape failures, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ServerSeries {
    /// Keeps every other scrape.
    pub fn halve(&mut self) {
        fn keep<T>(v: &mut Vec<T>) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
        keep(&mut self.t_ms);
        keep(&mut self.running);
        keep(&mut self.waiting);
        keep(&mut self.kv_usage);
        keep(&mut self.preemptions);
        for v in self.raw.values_mut() {
            keep(v);
        }
    }
}

/// One trial's telemetry: a line of the telemetry sidecar.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrialTelemetry {
    /// Trial position in the plan.
    pub seq: usize,
    /// Variant name.
    pub variant: String,
    /// Repetition index.
    pub trial: u32,
    /// Sweep point index.
    pub point: usize,
    /// Where GPU samples came from: `nvml`, `nvidia-smi`, `fake`, or `none`.
    pub gpu_source: String,
    /// Why there are none, or what was missing, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_note: Option<String>,
    /// The GPUs sampled (the server's: `CUDA_VISIBLE_DEVICES`, else every one).
    #[serde(default)]
    pub devices: Vec<GpuDevice>,
    /// One series per GPU of `devices`.
    #[serde(default)]
    pub gpus: Vec<GpuSeries>,
    /// The server's scrapes, when its metrics were scraped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerSeries>,
    /// Why the server's metrics were not scraped, when they were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_note: Option<String>,
    /// 1 when every sample was kept; 2, 4, … when every 2nd, 4th, … was ([`MAX_SAMPLES`]).
    #[serde(default = "one")]
    pub decimated: u32,
}

fn one() -> u32 {
    1
}

impl TrialTelemetry {
    /// Halves every series until none holds more than [`MAX_SAMPLES`].
    pub fn bound(&mut self) {
        if self.decimated == 0 {
            self.decimated = 1;
        }
        loop {
            let longest = self
                .gpus
                .iter()
                .map(GpuSeries::len)
                .chain(self.server.iter().map(|s| s.t_ms.len()))
                .max()
                .unwrap_or(0);
            if longest <= MAX_SAMPLES {
                return;
            }
            for g in &mut self.gpus {
                g.halve();
            }
            if let Some(s) = &mut self.server {
                s.halve();
            }
            self.decimated = self.decimated.saturating_mul(2);
        }
    }
}

/// A process holding GPU memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GpuProcess {
    /// Process id as the driver sees it.
    pub pid: u32,
    /// Its name, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// GPU memory it holds, MiB, where reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_mib: Option<u64>,
    /// Index of the GPU it holds memory on.
    pub gpu: u32,
}

/// The server's GPUs just before a server start: memory in use and the processes holding
/// it (a leftover of an earlier server is what `gpu-busy-at-start` names).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuCheck {
    /// Where it was read: `nvml`, `nvidia-smi`, `fake`, or `none`.
    pub source: String,
    /// Why nothing could be read, where nothing could.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Per GPU (by index): memory in use, MiB.
    #[serde(default)]
    pub memory_used_mib: BTreeMap<u32, u64>,
    /// Processes holding memory on them.
    #[serde(default)]
    pub processes: Vec<GpuProcess>,
}
