//! The host probe (docs/rerun.md, "Levels and effects"): a fixed CPU workload of about half
//! a second, run by servebench on its own host with no server of the run running — before the
//! run's first block and before each block's server start — and, during each trial, what
//! else used the host's CPUs ([`load`]). A host whose fingerprint reads the same (a VM's
//! generic CPU name, the same core count) but runs the probe slower is told apart by it.
//!
//! The figures: the single-thread score (millions of rounds of a fixed integer mix per
//! second, one thread), the all-core score (the same on one thread per logical CPU, summed),
//! the memory bandwidth (GB copied per second through a 64 MiB buffer), the mean CPU
//! frequency where the host shows it, and the share of CPU time stolen while it ran.
//! Their repeatability on one host is measured in docs/statistics-measured.md ("Host
//! probe"), and compare's fingerprint reads them with that tolerance.

pub mod load;

use std::hint::black_box;
use std::time::{Duration, Instant};

use servebench_result::HostProbe;

/// The probe's version: figures of different versions are not compared.
pub const PROBE_VERSION: u32 = 1;

const SINGLE: Duration = Duration::from_millis(150);
const ALL: Duration = Duration::from_millis(200);
const MEMORY: Duration = Duration::from_millis(100);
const CHUNK: u64 = 200_000;
const BUFFER_WORDS: usize = 8 << 20; // 64 MiB of u64

/// One chunk of the fixed integer workload: an xorshift-multiply mix the compiler cannot
/// fold away. Returns the state.
fn mix(mut x: u64, rounds: u64) -> u64 {
    for _ in 0..rounds {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_mul(0x2545_f491_4f6c_dd1d).rotate_left(11);
    }
    x
}

/// Rounds per second (millions) of one thread for `budget`.
fn rate(budget: Duration, seed: u64) -> f64 {
    let start = Instant::now();
    let mut x = seed | 1;
    let mut rounds = 0u64;
    while start.elapsed() < budget {
        x = mix(black_box(x), CHUNK);
        rounds += CHUNK;
    }
    black_box(x);
    rounds as f64 / start.elapsed().as_secs_f64() / 1e6
}

/// GB per second copied through a buffer of [`BUFFER_WORDS`] words for `budget` (one copy
/// first, untimed, so the pages exist).
fn memory_gbps(budget: Duration) -> f64 {
    let src: Vec<u64> = (0..BUFFER_WORDS as u64).collect();
    let mut dst = vec![0u64; BUFFER_WORDS];
    dst.copy_from_slice(&src);
    let start = Instant::now();
    let mut copies = 0u64;
    while start.elapsed() < budget || copies == 0 {
        dst.copy_from_slice(black_box(&src));
        black_box(&dst);
        copies += 1;
    }
    (copies * (BUFFER_WORDS as u64) * 8) as f64 / start.elapsed().as_secs_f64() / 1e9
}

/// Mean current frequency over the logical CPUs, MHz: cpufreq's `scaling_cur_freq` (kHz)
/// where present, else `/proc/cpuinfo`'s `cpu MHz` lines; `None` when neither is readable.
pub fn cpu_mhz() -> Option<f64> {
    let mut khz = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu") {
        for e in dir.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("cpu") && name[3..].chars().all(|c| c.is_ascii_digit()) {
                let f = e.path().join("cpufreq/scaling_cur_freq");
                if let Some(v) = std::fs::read_to_string(f)
                    .ok()
                    .and_then(|s| s.trim().parse::<f64>().ok())
                {
                    khz.push(v);
                }
            }
        }
    }
    if !khz.is_empty() {
        return Some(khz.iter().sum::<f64>() / khz.len() as f64 / 1000.0);
    }
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let mhz: Vec<f64> = info
        .lines()
        .filter(|l| l.starts_with("cpu MHz"))
        .filter_map(|l| l.split_once(':')?.1.trim().parse().ok())
        .collect();
    (!mhz.is_empty()).then(|| mhz.iter().sum::<f64>() / mhz.len() as f64)
}

/// Run the probe (0.45 s of timed work, plus the buffers' set-up and first copy). `server_host`: whether the
/// server runs on this host (a local launch) or elsewhere (a Slurm step, a
/// `target.base_url`): the figures then describe only the client's host.
pub fn run(server_host: bool) -> HostProbe {
    let began = Instant::now();
    let before = load::CpuTimes::read();
    let single_thread = rate(SINGLE, 0x9e37_79b9);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let all_core = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| s.spawn(move || rate(ALL, 0x9e37_79b9 ^ i as u64)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(0.0))
            .sum::<f64>()
    });
    let memory_gbps = memory_gbps(MEMORY);
    let steal_share = match (before, load::CpuTimes::read()) {
        (Some(a), Some(b)) => b.since(&a).map(|d| d.steal_share()),
        _ => None,
    };
    HostProbe {
        version: PROBE_VERSION,
        scope: if server_host {
            "server-host".into()
        } else {
            "client-host".into()
        },
        single_thread,
        all_core,
        threads: threads as u32,
        memory_gbps,
        cpu_mhz: cpu_mhz(),
        steal_share,
        took_s: began.elapsed().as_secs_f64(),
    }
}

/// [`run`] off the async runtime's threads.
pub async fn run_blocking(server_host: bool) -> Option<HostProbe> {
    tokio::task::spawn_blocking(move || run(server_host))
        .await
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_reports_positive_figures_in_about_a_second() {
        let p = run(true);
        assert!(
            p.single_thread > 0.0 && p.all_core >= p.single_thread * 0.5,
            "{p:?}"
        );
        assert!(p.memory_gbps > 0.0, "{p:?}");
        assert!(p.threads >= 1 && p.scope == "server-host");
        // 0.45 s of timed work plus one untimed 64 MiB copy and the buffers' set-up.
        assert!(p.took_s > 0.45 && p.took_s < 5.0, "{p:?}");
    }

    #[test]
    fn mix_is_deterministic_and_not_folded() {
        assert_eq!(mix(1, 1000), mix(1, 1000));
        assert_ne!(mix(1, 1000), mix(1, 1001));
    }
}
