//! What else used the host's CPUs during a trial, from `/proc/stat` (the host's CPU time by
//! kind, steal included) and `/proc/[pid]/stat` (servebench's own time and the server's
//! process group's): the busy time of the host minus servebench's and the server's is the
//! time of other processes. A process of the server's group that ended during the trial
//! counts as other (its time left `/proc` with it); servebench's finished threads stay in
//! its own counters. Linux only; elsewhere nothing is recorded.

use std::time::Instant;

use servebench_result::HostLoad;

/// Clock ticks per second of `/proc`'s counters (`USER_HZ`: 100 on every Linux ABI).
const TICKS: f64 = 100.0;

/// The host's CPU time by kind (`cpu` line of `/proc/stat`), in ticks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuTimes {
    /// user + nice + system + irq + softirq.
    pub busy: u64,
    /// idle + iowait.
    pub idle: u64,
    /// steal.
    pub steal: u64,
}

impl CpuTimes {
    /// Parse the `cpu ` line of a `/proc/stat` text.
    pub fn parse(stat: &str) -> Option<Self> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        Some(CpuTimes {
            busy: at(0) + at(1) + at(2) + at(5) + at(6),
            idle: at(3) + at(4),
            steal: at(7),
        })
    }

    /// Read `/proc/stat`.
    pub fn read() -> Option<Self> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// The time from `earlier` to `self`; `None` when a counter went back.
    pub fn since(&self, earlier: &CpuTimes) -> Option<CpuTimes> {
        Some(CpuTimes {
            busy: self.busy.checked_sub(earlier.busy)?,
            idle: self.idle.checked_sub(earlier.idle)?,
            steal: self.steal.checked_sub(earlier.steal)?,
        })
    }

    /// Steal over all time.
    pub fn steal_share(&self) -> f64 {
        let all = self.busy + self.idle + self.steal;
        if all == 0 {
            0.0
        } else {
            self.steal as f64 / all as f64
        }
    }
}

/// The ticks of a `/proc/[pid]/stat` text: its own (utime + stime), its reaped children's
/// (cutime + cstime), and its process group (the command may hold spaces and parentheses:
/// fields are read after the last `)`).
pub fn process_ticks(stat: &str) -> Option<(u64, u64, i64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the command: state(0) ppid(1) pgrp(2) … utime(11) stime(12) cutime(13) cstime(14).
    let num = |i: usize| {
        f.get(i)
            .and_then(|x| x.parse::<i64>().ok())
            .unwrap_or(0)
            .max(0) as u64
    };
    let pgrp = f.get(2).and_then(|x| x.parse::<i64>().ok())?;
    Some((num(11) + num(12), num(13) + num(14), pgrp))
}

/// Ticks of every process in group `pgid`, their reaped children's included (a server's
/// workers).
fn group_ticks(pgid: i32) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|s| process_ticks(&s))
        .filter(|&(_, _, g)| g == i64::from(pgid))
        .map(|(own, children, _)| own + children)
        .sum()
}

/// servebench's own ticks, every thread's; not its reaped children's (a stopped server, a
/// provenance command: not servebench's load).
fn self_ticks() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| process_ticks(&s))
        .map_or(0, |(t, _, _)| t)
}

/// A reading at the start of a trial; [`Sampler::finish`] at its end gives the trial's
/// [`HostLoad`].
#[derive(Debug, Clone)]
pub struct Sampler {
    at: Instant,
    cpu: CpuTimes,
    me: u64,
    server: Option<(i32, u64)>,
}

impl Sampler {
    /// Read now; `server_pgid`: the local server's process group (`None`: the server runs
    /// elsewhere). `None` where `/proc/stat` cannot be read.
    pub fn begin(server_pgid: Option<i32>) -> Option<Self> {
        Some(Sampler {
            at: Instant::now(),
            cpu: CpuTimes::read()?,
            me: self_ticks(),
            server: server_pgid.map(|g| (g, group_ticks(g))),
        })
    }

    /// Read again and compute the trial's load.
    pub fn finish(&self) -> Option<HostLoad> {
        let wall = self.at.elapsed().as_secs_f64();
        let d = CpuTimes::read()?.since(&self.cpu)?;
        let me = self_ticks().saturating_sub(self.me);
        let server = self.server.map(|(g, t)| group_ticks(g).saturating_sub(t));
        Some(compute(wall, &d, me, server, cpus()))
    }
}

fn cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// The load from the counters' differences (ticks) over `wall` seconds.
pub fn compute(wall: f64, d: &CpuTimes, me: u64, server: Option<u64>, cpus: u32) -> HostLoad {
    let per = |ticks: u64| {
        if wall > 0.0 {
            ticks as f64 / TICKS / wall
        } else {
            0.0
        }
    };
    let other = d.busy.saturating_sub(me + server.unwrap_or(0));
    HostLoad {
        wall_s: wall,
        cpus,
        steal_share: d.steal_share(),
        other_cpus: per(other),
        server_cpus: server.map(per),
        servebench_cpus: per(me),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_and_pid_stat_are_read_by_field() {
        let stat = "cpu  100 5 50 1000 20 3 2 7 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        let c = CpuTimes::parse(stat).expect("cpu line");
        assert_eq!(
            c,
            CpuTimes {
                busy: 160,
                idle: 1020,
                steal: 7
            }
        );
        // A command with spaces and a parenthesis.
        let pid = "4242 (python3 (x) y) S 1 4242 4242 0 -1 4194560 1 0 0 0 250 30 4 6 20 0 9 0";
        assert_eq!(process_ticks(pid), Some((280, 10, 4242)));
    }

    #[test]
    fn other_processes_are_the_busy_time_less_ours() {
        let d = CpuTimes {
            busy: 300,
            idle: 100,
            steal: 100,
        };
        // 2 s: servebench 0.5 CPU, the server 0.5 CPU, the rest (2 s × 1.5 CPU) others.
        let l = compute(2.0, &d, 100, Some(100), 4);
        assert!((l.other_cpus - 0.5).abs() < 1e-12, "{l:?}");
        assert!((l.steal_share - 0.2).abs() < 1e-12);
        assert_eq!(l.server_cpus, Some(0.5));
        assert!((l.servebench_cpus - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_busy_thread_of_another_process_is_seen() {
        // A child process spinning for 0.6 s during the reading counts as other CPU.
        let Some(s) = Sampler::begin(None) else {
            return; // no /proc here
        };
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "end=$(($(date +%s%N)+600000000)); while [ $(date +%s%N) -lt $end ]; do :; done",
            ])
            .spawn()
            .expect("sh");
        child.wait().expect("wait");
        let l = s.finish().expect("load");
        assert!(l.other_cpus > 0.3, "{l:?}");
    }
}
