//! Where GPU samples come from: a [`GpuSource`] in front of the thing measured, so the
//! sampler, the summary and the flags are the same whether the numbers come from NVML
//! ([`nvml`], the driver's library opened at run time), `nvidia-smi` ([`smi`], when NVML
//! cannot be opened) or a file of scripted samples ([`fake`], tests and calibration only,
//! chosen by `SERVEBENCH_FAKE_GPU`).

pub mod fake;
pub(crate) mod nvml;
pub(crate) mod smi;

use std::collections::BTreeMap;

use servebench_result::telemetry::{GpuDevice, GpuProcess, GpuSample};
use servebench_spec::GpuSampling;

/// The environment variable naming a fake GPU file ([`fake`]): when set, it replaces every
/// real source. Tests and calibration only.
pub const FAKE_GPU_ENV: &str = "SERVEBENCH_FAKE_GPU";

/// One sample of one GPU, with the wall-clock instant it was read (ms since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stamped {
    /// When it was read, ms since the epoch.
    pub(crate) unix_ms: i64,
    /// The GPU's index.
    pub(crate) index: u32,
    /// The values.
    pub(crate) sample: GpuSample,
}

/// Memory in use per GPU and the processes holding it.
pub(crate) type Occupancy = (BTreeMap<u32, u64>, Vec<GpuProcess>);

/// A source of GPU samples.
pub(crate) trait GpuSource: Send {
    /// `nvml`, `nvidia-smi` or `fake`.
    fn name(&self) -> &'static str;
    /// Every GPU it sees.
    fn devices(&mut self) -> Result<Vec<GpuDevice>, String>;
    /// A trial of `variant` begins: sampling starts (a source that samples on its own, as
    /// `nvidia-smi -lms` does, starts here).
    fn begin(&mut self, _variant: &str, _interval_ms: u64) {}
    /// The samples read since the last call (a source read on demand reads once now).
    fn sample(&mut self) -> Vec<Stamped>;
    /// The trial ended.
    fn end(&mut self) {}
    /// Memory in use and the processes holding it, before `variant`'s server starts.
    fn occupancy(&mut self, variant: &str) -> Result<Occupancy, String>;
}

/// Now, ms since the Unix epoch.
pub(crate) fn unix_ms() -> i64 {
    let now = time::OffsetDateTime::now_utc();
    (now.unix_timestamp_nanos() / 1_000_000) as i64
}

/// The source `setting` asks for, or why there is none (a machine without a GPU: a note, not
/// an error). `SERVEBENCH_FAKE_GPU` wins over every setting but `off`.
pub(crate) fn open(setting: GpuSampling) -> Result<Box<dyn GpuSource>, String> {
    if setting == GpuSampling::Off {
        return Err("GPU sampling is off (telemetry.gpu: off)".to_owned());
    }
    if let Some(path) = std::env::var_os(FAKE_GPU_ENV) {
        return fake::FakeSource::open(std::path::Path::new(&path))
            .map(|f| Box::new(f) as Box<dyn GpuSource>);
    }
    let nvml = || nvml::NvmlSource::open().map(|s| Box::new(s) as Box<dyn GpuSource>);
    let smi = || smi::SmiSource::open().map(|s| Box::new(s) as Box<dyn GpuSource>);
    match setting {
        GpuSampling::Nvml => nvml(),
        GpuSampling::NvidiaSmi => smi(),
        _ => nvml().or_else(|nvml_err| {
            smi().map_err(|smi_err| format!("no GPU sampled: {nvml_err}; {smi_err}"))
        }),
    }
}

/// The GPUs a server sees: `CUDA_VISIBLE_DEVICES` (indices, `GPU-…` UUIDs or unique UUID
/// prefixes, as CUDA reads it: up to the first entry that matches nothing) among `devices`,
/// or every one when it is unset. An empty value hides every GPU.
pub(crate) fn visible(devices: &[GpuDevice], cuda_visible: Option<&str>) -> Vec<usize> {
    let Some(list) = cuda_visible.map(str::trim) else {
        return (0..devices.len()).collect();
    };
    let mut out = Vec::new();
    for entry in list.split(',').map(str::trim) {
        let found = if let Ok(i) = entry.parse::<u32>() {
            devices.iter().position(|d| d.index == i)
        } else {
            let matching: Vec<usize> = devices
                .iter()
                .enumerate()
                .filter(|(_, d)| {
                    d.uuid
                        .as_deref()
                        .is_some_and(|u| !entry.is_empty() && u.starts_with(entry))
                })
                .map(|(i, _)| i)
                .collect();
            (matching.len() == 1).then(|| matching[0])
        };
        match found {
            Some(i) if !out.contains(&i) => out.push(i),
            Some(_) => {}
            // CUDA stops at the first entry it cannot use.
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(index: u32, uuid: &str) -> GpuDevice {
        GpuDevice {
            index,
            name: "NVIDIA H200".into(),
            uuid: Some(uuid.into()),
            node: None,
            memory_total_mib: None,
            max_sm_clock_mhz: None,
            power_limit_w: None,
        }
    }

    #[test]
    fn cuda_visible_devices_is_read_as_cuda_reads_it() {
        let d = [
            dev(0, "GPU-00000000-1111-2222-3333-444444444444"),
            dev(1, "GPU-55f5ca43-aaaa-bbbb-cccc-dddddddddddd"),
        ];
        assert_eq!(visible(&d, None), vec![0, 1]);
        assert_eq!(visible(&d, Some("1")), vec![1]);
        assert_eq!(visible(&d, Some("1,0")), vec![1, 0]);
        assert_eq!(visible(&d, Some("GPU-55f5")), vec![1]);
        assert_eq!(visible(&d, Some("")), Vec::<usize>::new());
        // An entry that matches nothing ends the list.
        assert_eq!(visible(&d, Some("0,7,1")), vec![0]);
        // A prefix two UUIDs share is ambiguous.
        assert_eq!(visible(&d, Some("GPU-")), Vec::<usize>::new());
    }
}
