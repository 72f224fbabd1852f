//! GPU samples from `nvidia-smi`, where NVML cannot be opened but the tool is on `PATH`.
//!
//! A trial's samples come from one `nvidia-smi --query-gpu=… --format=csv,noheader,nounits
//! -lms N` child, which prints one line per GPU every N ms until it is killed at the trial's
//! end (starting one process per sample would cost more than the interval). Lines are dated
//! when they are read. The throttle reasons are `clocks_event_reasons.active` on current
//! drivers and `clocks_throttle_reasons.active` on older ones (a hexadecimal bit mask, NVML's
//! reason bits); which one the driver takes is asked once. There is no energy counter in the
//! query: the summary integrates the power samples instead. Values are read as the H200's
//! driver 580.159.04 writes them (crates/runner/tests/fixtures/nvidia-smi-h200/): numbers
//! without units, `[N/A]` or `[Not Supported]` where there is none.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};

use servebench_result::telemetry::{GpuDevice, GpuProcess, GpuSample};

use super::{GpuSource, Occupancy, Stamped, unix_ms};
use crate::gpu::{find_on_path, run_nvidia_smi};

/// The sample fields, in the order [`parse_sample_line`] reads them; the last is the reason
/// field the driver takes.
const SAMPLE_FIELDS: &str = "index,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,utilization.memory,memory.used";
const REASON_FIELDS: [&str; 2] = [
    "clocks_event_reasons.active",
    "clocks_throttle_reasons.active",
];
const DEVICE_FIELDS: &str = "index,name,uuid,memory.total,clocks.max.sm,power.limit";

/// `nvidia-smi`, found.
#[derive(Debug)]
pub(crate) struct SmiSource {
    program: PathBuf,
    reason_field: Option<&'static str>,
    child: Option<Child>,
    lines: Option<Receiver<(i64, String)>>,
}

/// A cell's value: `None` for `[N/A]`, `[Not Supported]`, `N/A` or an empty cell.
fn cell(c: &str) -> Option<&str> {
    let c = c.trim();
    (!c.is_empty() && !c.starts_with('[') && !c.eq_ignore_ascii_case("n/a")).then_some(c)
}

fn float(c: &str) -> Option<f64> {
    cell(c)?
        .split_whitespace()
        .next()?
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

fn whole(c: &str) -> Option<u64> {
    float(c).filter(|v| *v >= 0.0).map(|v| v.round() as u64)
}

/// `0x0000000000000001` → 1.
fn hex(c: &str) -> Option<u64> {
    let c = cell(c)?;
    let digits = c.strip_prefix("0x").or_else(|| c.strip_prefix("0X"))?;
    u64::from_str_radix(digits, 16).ok()
}

/// One line of the sample query (`index, clocks.sm, …, memory.used[, reasons]`); `None` for
/// a line that is not one (a warning nvidia-smi printed).
pub(crate) fn parse_sample_line(line: &str) -> Option<(u32, GpuSample)> {
    let cells: Vec<&str> = line.split(',').collect();
    if cells.len() < 8 {
        return None;
    }
    let index = u32::try_from(whole(cells[0])?).ok()?;
    let u32_of = |c: &str| whole(c).and_then(|v| u32::try_from(v).ok());
    Some((
        index,
        GpuSample {
            sm_clock_mhz: u32_of(cells[1]),
            mem_clock_mhz: u32_of(cells[2]),
            power_w: float(cells[3]),
            energy_mj: None,
            temperature_c: u32_of(cells[4]),
            util_gpu_pct: u32_of(cells[5]),
            util_mem_pct: u32_of(cells[6]),
            memory_used_mib: whole(cells[7]),
            throttle: cells.get(8).and_then(|c| hex(c)),
        },
    ))
}

/// The device query (`index, name, uuid, memory.total, clocks.max.sm, power.limit`).
pub(crate) fn parse_device_line(line: &str) -> Option<GpuDevice> {
    let cells: Vec<&str> = line.split(',').collect();
    if cells.len() < 6 {
        return None;
    }
    Some(GpuDevice {
        index: u32::try_from(whole(cells[0])?).ok()?,
        name: cell(cells[1])?.to_owned(),
        uuid: cell(cells[2]).map(str::to_owned),
        node: None,
        memory_total_mib: whole(cells[3]),
        max_sm_clock_mhz: whole(cells[4]).and_then(|v| u32::try_from(v).ok()),
        power_limit_w: float(cells[5]),
    })
}

/// `--query-compute-apps=pid,process_name,used_memory,gpu_uuid` lines, the GPU found by its
/// UUID among `devices`.
pub(crate) fn parse_process_line(line: &str, devices: &[GpuDevice]) -> Option<GpuProcess> {
    let cells: Vec<&str> = line.split(',').collect();
    if cells.len() < 4 {
        return None;
    }
    let uuid = cell(cells[3]);
    Some(GpuProcess {
        pid: u32::try_from(whole(cells[0])?).ok()?,
        name: cell(cells[1]).map(str::to_owned),
        used_mib: whole(cells[2]),
        gpu: devices
            .iter()
            .find(|d| d.uuid.as_deref().is_some() && d.uuid.as_deref() == uuid)
            .map_or(0, |d| d.index),
    })
}

impl SmiSource {
    /// Finds `nvidia-smi` and asks which reason field its driver takes.
    pub(crate) fn open() -> Result<Self, String> {
        let program = find_on_path("nvidia-smi").ok_or("nvidia-smi is not on PATH")?;
        run_nvidia_smi(
            &program,
            &["--query-gpu=index", "--format=csv,noheader,nounits"],
        )
        .map_err(|e| format!("nvidia-smi answers nothing usable: {e}"))?;
        let reason_field = REASON_FIELDS.into_iter().find(|f| {
            run_nvidia_smi(
                &program,
                &[&format!("--query-gpu={f}"), "--format=csv,noheader,nounits"],
            )
            .is_ok()
        });
        Ok(SmiSource {
            program,
            reason_field,
            child: None,
            lines: None,
        })
    }

    fn query(&self) -> String {
        match self.reason_field {
            Some(r) => format!("--query-gpu={SAMPLE_FIELDS},{r}"),
            None => format!("--query-gpu={SAMPLE_FIELDS}"),
        }
    }
}

impl GpuSource for SmiSource {
    fn name(&self) -> &'static str {
        "nvidia-smi"
    }

    fn devices(&mut self) -> Result<Vec<GpuDevice>, String> {
        let out = run_nvidia_smi(
            &self.program,
            &[
                &format!("--query-gpu={DEVICE_FIELDS}"),
                "--format=csv,noheader,nounits",
            ],
        )
        .map_err(|e| e.to_string())?;
        Ok(out.lines().filter_map(parse_device_line).collect())
    }

    fn begin(&mut self, _variant: &str, interval_ms: u64) {
        self.end();
        let child = Command::new(&self.program)
            .args([
                &self.query(),
                "--format=csv,noheader,nounits",
                "-lms",
                &interval_ms.max(50).to_string(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = child else {
            return;
        };
        let (tx, rx) = channel();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    if tx.send((unix_ms(), line)).is_err() {
                        break;
                    }
                }
            });
        }
        self.child = Some(child);
        self.lines = Some(rx);
    }

    fn sample(&mut self) -> Vec<Stamped> {
        let Some(rx) = &self.lines else {
            return Vec::new();
        };
        rx.try_iter()
            .filter_map(|(unix_ms, line)| {
                let (index, sample) = parse_sample_line(&line)?;
                Some(Stamped {
                    unix_ms,
                    index,
                    sample,
                })
            })
            .collect()
    }

    fn end(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn occupancy(&mut self, _variant: &str) -> Result<Occupancy, String> {
        let devices = self.devices()?;
        let used = run_nvidia_smi(
            &self.program,
            &[
                "--query-gpu=index,memory.used",
                "--format=csv,noheader,nounits",
            ],
        )
        .map_err(|e| e.to_string())?;
        let mut memory = BTreeMap::new();
        for line in used.lines() {
            if let [i, m] = line.split(',').collect::<Vec<_>>()[..]
                && let (Some(i), Some(m)) = (whole(i), whole(m))
                && let Ok(i) = u32::try_from(i)
            {
                memory.insert(i, m);
            }
        }
        let apps = run_nvidia_smi(
            &self.program,
            &[
                "--query-compute-apps=pid,process_name,used_memory,gpu_uuid",
                "--format=csv,noheader,nounits",
            ],
        )
        .map_err(|e| e.to_string())?;
        let processes = apps
            .lines()
            .filter_map(|l| parse_process_line(l, &devices))
            .collect();
        Ok((memory, processes))
    }
}

impl Drop for SmiSource {
    fn drop(&mut self) {
        self.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Shapes of the H200's driver 580.159.04 (crates/runner/tests/fixtures/nvidia-smi-h200):
    // the values of its `nvidia-smi -q` (SM 1980 MHz, memory 3201 MHz, 124.26 W, 36 C, 0 %
    // utilisation, 0 MiB used, reason "Idle: Active"), in the `noheader,nounits` form of
    // query-gpu-nounits.csv's data line.
    const IDLE: &str = "0, 1980, 3201, 124.26, 36, 0, 0, 0, 0x0000000000000001";

    #[test]
    fn a_sample_line_reads_every_field() {
        let (i, s) = parse_sample_line(IDLE).unwrap();
        assert_eq!(i, 0);
        assert_eq!(s.sm_clock_mhz, Some(1980));
        assert_eq!(s.mem_clock_mhz, Some(3201));
        assert_eq!(s.power_w, Some(124.26));
        assert_eq!(s.temperature_c, Some(36));
        assert_eq!((s.util_gpu_pct, s.util_mem_pct), (Some(0), Some(0)));
        assert_eq!(s.memory_used_mib, Some(0));
        assert_eq!(s.throttle, Some(1));
    }

    #[test]
    fn values_the_driver_does_not_have_are_left_out() {
        let (_, s) =
            parse_sample_line("1, 1755, 3201, [N/A], 61, 97, 43, 70218, [Not Supported]").unwrap();
        assert_eq!(s.power_w, None);
        assert_eq!(s.throttle, None);
        assert_eq!(s.sm_clock_mhz, Some(1755));
        // Without the reason field (an older driver) the line has 8 fields.
        assert!(parse_sample_line("0, 1980, 3201, 124.26, 36, 0, 0, 0").is_some());
        assert!(
            parse_sample_line("Failed to initialize NVML: Driver/library version mismatch")
                .is_none()
        );
    }

    #[test]
    fn devices_and_processes_read_as_the_fixture_writes_them() {
        // query-gpu.csv's H200: 143771 MiB, max SM clock 1980 MHz, power limit 700.00 W.
        let d = parse_device_line(
            "0, NVIDIA H200, GPU-00000000-1111-2222-3333-444444444444, 143771, 1980, 700.00",
        )
        .unwrap();
        assert_eq!(d.name, "NVIDIA H200");
        assert_eq!(d.memory_total_mib, Some(143_771));
        assert_eq!(d.max_sm_clock_mhz, Some(1980));
        assert_eq!(d.power_limit_w, Some(700.0));
        // compute-apps-busy-nounits.csv's process, with the GPU's UUID.
        let p = parse_process_line(
            "422, python3, 1542, GPU-00000000-1111-2222-3333-444444444444",
            &[d],
        )
        .unwrap();
        assert_eq!(
            (p.pid, p.name.as_deref(), p.used_mib, p.gpu),
            (422, Some("python3"), Some(1542), 0)
        );
    }

    /// The fixture files as the H200's nvidia-smi wrote them (units inside the values,
    /// a header line), read from disk rather than retyped.
    #[test]
    fn the_real_h200_files_parse() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/nvidia-smi-h200/"
        );
        let read = |f: &str| std::fs::read_to_string(format!("{dir}{f}")).expect("fixture");
        let query = read("query-gpu.csv");
        let mut lines = query.lines();
        let header_line = lines.next().expect("header");
        // A header is no sample and no device.
        assert!(parse_sample_line(header_line).is_none());
        assert!(parse_device_line(header_line).is_none());
        // `clocks.current.sm [MHz]` → `clocks.current.sm`.
        let header: Vec<&str> = header_line
            .split(',')
            .map(|h| h.split_whitespace().next().unwrap_or(""))
            .collect();
        let row: Vec<&str> = lines.next().expect("a GPU").split(',').collect();
        let col = |name: &str| {
            let i = header.iter().position(|h| *h == name).expect(name);
            row[i]
        };
        // DEVICE_FIELDS' order, each cell as the driver wrote it ("143771 MiB", "700.00 W").
        let line = [
            "index",
            "name",
            "uuid",
            "memory.total",
            "clocks.max.sm",
            "power.limit",
        ]
        .map(col)
        .join(",");
        let d = parse_device_line(&line).expect("device");
        assert_eq!(d.name, "NVIDIA H200");
        assert_eq!(d.memory_total_mib, Some(143_771));
        assert_eq!(d.max_sm_clock_mhz, Some(1980));
        assert_eq!(d.power_limit_w, Some(700.0));
        // A sample line of the same row's clock and memory ("1980 MHz", "0 MiB").
        let sample = [
            col("index"),
            col("clocks.current.sm"),
            " [N/A]",
            col("power.limit"),
            " 36",
            " 0",
            " 0",
            col("memory.used"),
        ]
        .join(",");
        let (_, s) = parse_sample_line(&sample).expect("sample");
        assert_eq!((s.sm_clock_mhz, s.mem_clock_mhz), (Some(1980), None));
        assert_eq!(s.memory_used_mib, Some(0));
        // The process lists, with and without units, the GPU's UUID appended as servebench
        // asks for it (`gpu_uuid`).
        let uuid = d.uuid.clone().expect("uuid");
        for (file, pid, mib) in [
            ("compute-apps-busy.csv", 429, 8148),
            ("compute-apps-busy-nounits.csv", 422, 1542),
        ] {
            let text = read(file);
            let procs: Vec<GpuProcess> = text
                .lines()
                .filter_map(|l| {
                    parse_process_line(&format!("{l}, {uuid}"), std::slice::from_ref(&d))
                })
                .collect();
            assert_eq!(procs.len(), 1, "{file}: {procs:?}");
            assert_eq!(
                (procs[0].pid, procs[0].name.as_deref(), procs[0].used_mib),
                (pid, Some("python3"), Some(mib)),
                "{file}"
            );
        }
        for file in ["compute-apps-idle.csv", "compute-apps-idle-nounits.csv"] {
            let text = read(file);
            assert!(
                text.lines().all(|l| parse_process_line(
                    &format!("{l}, {uuid}"),
                    std::slice::from_ref(&d)
                )
                .is_none()),
                "{file}"
            );
        }
    }
}
