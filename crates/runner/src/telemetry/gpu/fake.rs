//! A scripted GPU for tests and calibration (`SERVEBENCH_FAKE_GPU=file.json`): the devices,
//! a base sample with seeded noise, and per variant what differs — a throttled trial, a GPU
//! held by another process before the server starts. Nothing in a real run reads it: the
//! source is chosen only by the environment variable.
//!
//! ```json
//! {"devices": [{"index": 0, "name": "NVIDIA H200", "max_sm_clock_mhz": 1980}],
//!  "sample": {"sm_clock_mhz": 1980, "power_w": 450, "util_gpu_pct": 90, "throttle": 0},
//!  "noise": {"seed": 1, "sm_clock_mhz": 10, "power_w": 15, "throttle_share": 0.02, "throttle_bits": 4},
//!  "variants": {"cand": {"sample": {"sm_clock_mhz": 1500}, "throttle_share": 0.9,
//!                        "busy_at_start": [{"pid": 4242, "name": "python3", "used_mib": 8148, "gpu": 0}]}}}
//! ```
//!
//! `SERVEBENCH_FAKE_GPU_SEED` replaces `noise.seed` (one seed per calibration run).

use std::collections::BTreeMap;
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use servebench_result::telemetry::{GpuDevice, GpuProcess, GpuSample};

use super::{GpuSource, Occupancy, Stamped, unix_ms};

/// The environment variable that replaces the file's noise seed.
pub const FAKE_GPU_SEED_ENV: &str = "SERVEBENCH_FAKE_GPU_SEED";

/// Seeded noise around the base sample.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Noise {
    #[serde(default)]
    seed: u64,
    /// Half-width of the uniform noise on the SM clock, MHz.
    #[serde(default)]
    sm_clock_mhz: f64,
    /// On the power, W.
    #[serde(default)]
    power_w: f64,
    /// On the utilisation, %.
    #[serde(default)]
    util_gpu_pct: f64,
    /// Share of samples with `throttle_bits` set (every variant alike).
    #[serde(default)]
    throttle_share: f64,
    /// The reason bits of a throttled sample (default 4: software power cap).
    #[serde(default)]
    throttle_bits: Option<u64>,
}

/// What differs for one variant.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantScript {
    /// Fields replacing the base sample's.
    #[serde(default)]
    sample: GpuSample,
    /// Share of this variant's samples with the throttle bits (instead of the noise's).
    #[serde(default)]
    throttle_share: Option<f64>,
    /// Processes holding the GPUs before this variant's server starts.
    #[serde(default)]
    busy_at_start: Vec<GpuProcess>,
}

/// The file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    devices: Vec<GpuDevice>,
    #[serde(default)]
    sample: GpuSample,
    #[serde(default)]
    noise: Noise,
    #[serde(default)]
    variants: BTreeMap<String, VariantScript>,
    /// Processes before every server start.
    #[serde(default)]
    busy_at_start: Vec<GpuProcess>,
}

/// The scripted GPU.
#[derive(Debug)]
pub(crate) struct FakeSource {
    script: Script,
    rng: ChaCha8Rng,
    variant: String,
    energy_mj: f64,
    last_ms: Option<i64>,
}

fn merge(base: GpuSample, over: &GpuSample) -> GpuSample {
    GpuSample {
        sm_clock_mhz: over.sm_clock_mhz.or(base.sm_clock_mhz),
        mem_clock_mhz: over.mem_clock_mhz.or(base.mem_clock_mhz),
        power_w: over.power_w.or(base.power_w),
        energy_mj: None,
        temperature_c: over.temperature_c.or(base.temperature_c),
        util_gpu_pct: over.util_gpu_pct.or(base.util_gpu_pct),
        util_mem_pct: over.util_mem_pct.or(base.util_mem_pct),
        memory_used_mib: over.memory_used_mib.or(base.memory_used_mib),
        throttle: over.throttle.or(base.throttle),
    }
}

impl FakeSource {
    /// Reads the script; the error names the file.
    pub(crate) fn open(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("SERVEBENCH_FAKE_GPU: cannot read {}: {e}", path.display()))?;
        let script: Script = serde_json::from_str(&text)
            .map_err(|e| format!("SERVEBENCH_FAKE_GPU: {}: {e}", path.display()))?;
        let seed = std::env::var(FAKE_GPU_SEED_ENV)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(script.noise.seed);
        Ok(FakeSource {
            rng: ChaCha8Rng::seed_from_u64(seed),
            script,
            variant: String::new(),
            energy_mj: 1e9,
            last_ms: None,
        })
    }

    fn noisy(&mut self, v: Option<f64>, half_width: f64) -> Option<f64> {
        v.map(|x| {
            if half_width > 0.0 {
                (x + self.rng.random_range(-half_width..=half_width)).max(0.0)
            } else {
                x
            }
        })
    }
}

impl GpuSource for FakeSource {
    fn name(&self) -> &'static str {
        "fake"
    }

    fn devices(&mut self) -> Result<Vec<GpuDevice>, String> {
        Ok(self.script.devices.clone())
    }

    fn begin(&mut self, variant: &str, _interval_ms: u64) {
        variant.clone_into(&mut self.variant);
    }

    fn sample(&mut self) -> Vec<Stamped> {
        let now = unix_ms();
        let over = self.script.variants.get(&self.variant).cloned();
        let base = merge(
            self.script.sample,
            &over.as_ref().map(|v| v.sample).unwrap_or_default(),
        );
        let share = over
            .as_ref()
            .and_then(|v| v.throttle_share)
            .unwrap_or(self.script.noise.throttle_share);
        let bits = self.script.noise.throttle_bits.unwrap_or(0x4);
        let noise = self.script.noise.clone();
        let dt_s = self.last_ms.map_or(0.0, |l| (now - l).max(0) as f64 / 1e3);
        self.last_ms = Some(now);
        let devices: Vec<(u32, Option<u32>)> = self
            .script
            .devices
            .iter()
            .map(|d| (d.index, d.max_sm_clock_mhz))
            .collect();
        let mut out = Vec::with_capacity(devices.len());
        for (index, max_clock) in devices {
            let mut s = base;
            // A GPU's SM clock never exceeds its highest.
            s.sm_clock_mhz = self
                .noisy(base.sm_clock_mhz.map(f64::from), noise.sm_clock_mhz)
                .map(|v| (v.round() as u32).min(max_clock.unwrap_or(u32::MAX)));
            s.power_w = self
                .noisy(base.power_w, noise.power_w)
                .map(|w| (w * 100.0).round() / 100.0);
            s.util_gpu_pct = self
                .noisy(base.util_gpu_pct.map(f64::from), noise.util_gpu_pct)
                .map(|v| v.round().min(100.0) as u32);
            if share > 0.0 && self.rng.random_bool(share.clamp(0.0, 1.0)) {
                s.throttle = Some(s.throttle.unwrap_or(0) | bits);
            }
            self.energy_mj += s.power_w.unwrap_or(0.0) * dt_s * 1e3;
            s.energy_mj = Some(self.energy_mj as u64);
            out.push(Stamped {
                unix_ms: now,
                index,
                sample: s,
            });
        }
        out
    }

    fn occupancy(&mut self, variant: &str) -> Result<Occupancy, String> {
        let mut processes = self.script.busy_at_start.clone();
        if let Some(v) = self.script.variants.get(variant) {
            processes.extend(v.busy_at_start.iter().cloned());
        }
        let mut memory: BTreeMap<u32, u64> =
            self.script.devices.iter().map(|d| (d.index, 0)).collect();
        for p in &processes {
            *memory.entry(p.gpu).or_insert(0) += p.used_mib.unwrap_or(0);
        }
        Ok((memory, processes))
    }
}
