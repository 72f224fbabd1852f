//! GPU samples through NVML, the driver's management library, as `nvml-wrapper` 0.13 opens
//! it at run time (`libnvidia-ml.so.1`, which the driver installs; then `libnvidia-ml.so`,
//! which only the development package does). Each call is the one NVML documents for the
//! quantity: `nvmlDeviceGetClockInfo` (SM, memory), `nvmlDeviceGetPowerUsage` (mW),
//! `nvmlDeviceGetTotalEnergyConsumption` (mJ since the driver loaded; Volta and newer),
//! `nvmlDeviceGetTemperature` (GPU sensor), `nvmlDeviceGetUtilizationRates`,
//! `nvmlDeviceGetMemoryInfo`, `nvmlDeviceGetCurrentClocksThrottleReasons` (the clock-event
//! reasons), and before a server start `nvmlDeviceGetComputeRunningProcesses` with
//! `nvmlSystemGetProcessName`. A quantity a GPU does not support is left out of its sample
//! (`NotSupported`), not an error.

use std::collections::BTreeMap;
use std::ffi::OsStr;

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::enums::device::UsedGpuMemory;
use servebench_result::telemetry::{GpuDevice, GpuProcess, GpuSample};

use super::{GpuSource, Occupancy, Stamped, unix_ms};

/// NVML, opened.
pub(crate) struct NvmlSource {
    nvml: Nvml,
    count: u32,
}

impl std::fmt::Debug for NvmlSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NvmlSource({} GPUs)", self.count)
    }
}

const MIB: u64 = 1024 * 1024;

impl NvmlSource {
    /// Opens the driver's library; the error says why not (no driver on this machine).
    pub(crate) fn open() -> Result<Self, String> {
        let nvml = Nvml::init()
            .or_else(|first| {
                Nvml::builder()
                    .lib_path(OsStr::new("libnvidia-ml.so"))
                    .init()
                    .map_err(|_| first)
            })
            .map_err(|e| format!("NVML could not be opened (libnvidia-ml.so.1: {e})"))?;
        let count = nvml
            .device_count()
            .map_err(|e| format!("NVML counts no GPU: {e}"))?;
        if count == 0 {
            return Err("NVML sees no GPU".to_owned());
        }
        Ok(NvmlSource { nvml, count })
    }
}

impl GpuSource for NvmlSource {
    fn name(&self) -> &'static str {
        "nvml"
    }

    fn devices(&mut self) -> Result<Vec<GpuDevice>, String> {
        let mut out = Vec::new();
        for i in 0..self.count {
            let d = self
                .nvml
                .device_by_index(i)
                .map_err(|e| format!("NVML GPU {i}: {e}"))?;
            out.push(GpuDevice {
                index: d.index().unwrap_or(i),
                name: d.name().unwrap_or_else(|_| format!("GPU {i}")),
                uuid: d.uuid().ok(),
                node: None,
                memory_total_mib: d.memory_info().ok().map(|m| m.total / MIB),
                max_sm_clock_mhz: d.max_clock_info(Clock::SM).ok(),
                power_limit_w: d.enforced_power_limit().ok().map(|mw| f64::from(mw) / 1e3),
            });
        }
        Ok(out)
    }

    fn sample(&mut self) -> Vec<Stamped> {
        let mut out = Vec::with_capacity(self.count as usize);
        for i in 0..self.count {
            let Ok(d) = self.nvml.device_by_index(i) else {
                continue;
            };
            let util = d.utilization_rates().ok();
            let sample = GpuSample {
                sm_clock_mhz: d.clock_info(Clock::SM).ok(),
                mem_clock_mhz: d.clock_info(Clock::Memory).ok(),
                power_w: d.power_usage().ok().map(|mw| f64::from(mw) / 1e3),
                energy_mj: d.total_energy_consumption().ok(),
                temperature_c: d.temperature(TemperatureSensor::Gpu).ok(),
                util_gpu_pct: util.as_ref().map(|u| u.gpu),
                util_mem_pct: util.as_ref().map(|u| u.memory),
                memory_used_mib: d.memory_info().ok().map(|m| m.used / MIB),
                throttle: d.current_throttle_reasons().ok().map(|r| r.bits()),
            };
            out.push(Stamped {
                unix_ms: unix_ms(),
                index: d.index().unwrap_or(i),
                sample,
            });
        }
        out
    }

    fn occupancy(&mut self, _variant: &str) -> Result<Occupancy, String> {
        let mut memory = BTreeMap::new();
        let mut processes = Vec::new();
        for i in 0..self.count {
            let d = self
                .nvml
                .device_by_index(i)
                .map_err(|e| format!("NVML GPU {i}: {e}"))?;
            let index = d.index().unwrap_or(i);
            if let Ok(m) = d.memory_info() {
                memory.insert(index, m.used / MIB);
            }
            for p in d.running_compute_processes().unwrap_or_default() {
                processes.push(GpuProcess {
                    pid: p.pid,
                    name: self
                        .nvml
                        .sys_process_name(p.pid, 64)
                        .ok()
                        .or_else(|| proc_name(p.pid)),
                    used_mib: match p.used_gpu_memory {
                        UsedGpuMemory::Used(b) => Some(b / MIB),
                        UsedGpuMemory::Unavailable => None,
                    },
                    gpu: index,
                });
            }
        }
        Ok((memory, processes))
    }
}

/// A process's name from `/proc` (NVML cannot always say, e.g. in a container).
pub(crate) fn proc_name(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}
