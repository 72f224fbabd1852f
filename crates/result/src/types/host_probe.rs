//! The host probe: how fast the host that runs the server was, measured by servebench with
//! no server running (before each block's server start), and how busy it was with other
//! work during each trial (docs/rerun.md, "Levels and effects"; docs/history.md, "Series").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One run of the probe's fixed workload (about a second), before a server start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostProbe {
    /// Probe version: figures of different versions are not compared.
    pub version: u32,
    /// Where it ran: `server-host` (the server runs on this host), or `client-host` (the
    /// server runs elsewhere — a Slurm step or a `target.base_url` — so only the client's
    /// host is described).
    pub scope: String,
    /// Single-thread score: millions of rounds of the fixed integer workload per second.
    pub single_thread: f64,
    /// All-core score: the same workload on one thread per logical CPU, rounds per second in
    /// millions, summed.
    pub all_core: f64,
    /// Threads the all-core score used.
    pub threads: u32,
    /// Memory bandwidth: bytes copied per second (a 64 MiB buffer), GB/s.
    pub memory_gbps: f64,
    /// Mean CPU frequency over the logical CPUs when readable (`scaling_cur_freq`, else
    /// `/proc/cpuinfo`'s `cpu MHz`), MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_mhz: Option<f64>,
    /// Share of the host's CPU time stolen by the hypervisor while the probe ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_share: Option<f64>,
    /// Seconds the probe took.
    pub took_s: f64,
}

/// What else used the host's CPUs during one trial, from `/proc/stat` and
/// `/proc/[pid]/stat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostLoad {
    /// Seconds between the two readings.
    pub wall_s: f64,
    /// Logical CPUs of the host.
    pub cpus: u32,
    /// Share of all CPU time stolen by the hypervisor (`steal` of `/proc/stat`).
    pub steal_share: f64,
    /// CPUs' worth of time used by processes other than the server's (its process group)
    /// and servebench itself: busy time of `/proc/stat` minus theirs, per wall second.
    pub other_cpus: f64,
    /// CPUs' worth of time the server's processes used (`None`: not on this host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<f64>,
    /// CPUs' worth of time servebench used.
    pub servebench_cpus: f64,
}
