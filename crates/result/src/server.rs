//! What the result file records about a server start: how it was started
//! ([`ServerRecord`]), what it said about itself ([`ServerInfo`]), how it was stopped
//! ([`StopReport`]) and how its process ended ([`ExitRecord`]). Types only: starting and
//! stopping servers is servebench-runner's `server` module.

use std::collections::BTreeMap;
use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use servebench_spec::StopSignal;

/// What the result file records about one server start (secrets redacted). Also what a later
/// run needs to find the server again if this runner dies (servebench-runner's
/// `server::find_orphan`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerRecord {
    /// The argv, redacted.
    pub argv: Vec<String>,
    /// The added environment, redacted.
    pub env: BTreeMap<String, String>,
    /// The working directory, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<PathBuf>,
    /// Pid of the main process.
    pub pid: u32,
    /// Its process group (= pid).
    pub pgid: i32,
    /// The port.
    pub port: u16,
    /// The log file.
    pub log_path: PathBuf,
    /// When it was spawned, UTC RFC 3339.
    pub started_at: String,
    /// Seconds from spawn to the first successful readiness probe.
    pub ready_after_s: f64,
}

/// A server's description of itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerInfo {
    /// The endpoint that answered, e.g. `/get_server_info`.
    pub endpoint: String,
    /// Its JSON, as returned.
    pub info: serde_json::Value,
}

/// What stopping a server took. Every `after_s` counts from the moment the first signal was
/// sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StopReport {
    /// The process group signalled.
    pub pgid: i32,
    /// The group's live processes just before the signal.
    pub group_pids: Vec<i32>,
    /// The first signal sent to the group (the spec's `stop.signal`).
    pub signal: StopSignal,
    /// The spec's grace before `SIGKILL`, seconds.
    pub grace_s: f64,
    /// The main process had already exited before the stop (the server died by itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exited_before_stop: Option<ExitRecord>,
    /// The group outlived the grace and was sent `SIGKILL`.
    pub escalated_to_sigkill: bool,
    /// How the main process ended, when it was this process's child.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<ExitRecord>,
    /// When no process of the group was alive any more; `None`: some still were after
    /// `SIGKILL` and its wait (see `still_alive`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exited_after_s: Option<f64>,
    /// Processes of the group still alive at the end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub still_alive: Vec<i32>,
    /// The server's port.
    pub port: PortRelease,
    /// The group's GPU memory.
    pub gpu: GpuRelease,
}

impl StopReport {
    /// The group is gone, its port free and its GPU memory released (or not checkable).
    pub fn is_clean(&self) -> bool {
        self.exited_after_s.is_some()
            && !matches!(self.port, PortRelease::StillInUse { .. })
            && !matches!(self.gpu, GpuRelease::StillHeld { .. })
    }
}

/// Whether the server's port became free.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum PortRelease {
    /// Free (bindable) this long after the signal.
    Free {
        /// Seconds since the signal.
        after_s: f64,
    },
    /// Still in use when the wait ended.
    StillInUse {
        /// Seconds since the signal.
        after_s: f64,
    },
    /// No port known (an orphan recorded without one) or the group did not die.
    NotChecked,
}

/// Whether the group's GPU memory was released (`nvidia-smi --query-compute-apps`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum GpuRelease {
    /// No `nvidia-smi` on `PATH`: not checked.
    NoNvidiaSmi,
    /// None of the group's pids held GPU memory before the stop (or, in a container, the
    /// driver reports pids of another pid namespace): nothing to wait for.
    NoneHeld,
    /// The group's processes held GPU memory and released it this long after the signal.
    Released {
        /// Seconds since the signal.
        after_s: f64,
        /// MiB the group held before the stop.
        held_mib: u64,
    },
    /// Still held when the wait ended.
    StillHeld {
        /// Seconds since the signal.
        after_s: f64,
        /// The pids still listed.
        pids: Vec<u32>,
        /// MiB still held (as far as reported).
        used_mib: u64,
    },
    /// The group did not die, so the memory was not waited for.
    NotChecked,
    /// `nvidia-smi` failed.
    QueryFailed {
        /// Its error.
        error: String,
    },
}

/// The exit status of a server's main process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExitRecord {
    /// Exit code, when it exited by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    /// Signal number, when a signal ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

impl ExitRecord {
    /// Neither code nor signal is known (waiting on the process failed).
    pub const UNKNOWN: ExitRecord = ExitRecord {
        code: None,
        signal: None,
    };

    /// Whether it exited with code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

impl From<ExitStatus> for ExitRecord {
    fn from(s: ExitStatus) -> Self {
        ExitRecord {
            code: s.code(),
            signal: s.signal(),
        }
    }
}

impl fmt::Display for ExitRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exit code {c}"),
            (None, Some(s)) => match signal_name(s) {
                Some(name) => write!(f, "killed by signal {s} ({name})"),
                None => write!(f, "killed by signal {s}"),
            },
            (None, None) => f.write_str("unknown exit status"),
        }
    }
}

/// The name of signal number `n` on this platform (`SIGTERM`), for the signals Linux defines.
fn signal_name(n: i32) -> Option<&'static str> {
    const NAMES: &[(i32, &str)] = &[
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        #[cfg(not(any(target_arch = "mips", target_arch = "mips64", target_arch = "sparc64")))]
        (libc::SIGSTKFLT, "SIGSTKFLT"),
        (libc::SIGCHLD, "SIGCHLD"),
        (libc::SIGCONT, "SIGCONT"),
        (libc::SIGSTOP, "SIGSTOP"),
        (libc::SIGTSTP, "SIGTSTP"),
        (libc::SIGTTIN, "SIGTTIN"),
        (libc::SIGTTOU, "SIGTTOU"),
        (libc::SIGURG, "SIGURG"),
        (libc::SIGXCPU, "SIGXCPU"),
        (libc::SIGXFSZ, "SIGXFSZ"),
        (libc::SIGVTALRM, "SIGVTALRM"),
        (libc::SIGPROF, "SIGPROF"),
        (libc::SIGWINCH, "SIGWINCH"),
        (libc::SIGIO, "SIGIO"),
        (libc::SIGPWR, "SIGPWR"),
        (libc::SIGSYS, "SIGSYS"),
    ];
    NAMES.iter().find(|(k, _)| *k == n).map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_in_words() {
        let code = ExitRecord {
            code: Some(3),
            signal: None,
        };
        assert_eq!(code.to_string(), "exit code 3");
        let killed = ExitRecord {
            code: None,
            signal: Some(libc::SIGKILL),
        };
        assert_eq!(killed.to_string(), "killed by signal 9 (SIGKILL)");
        let term = ExitRecord {
            code: None,
            signal: Some(15),
        };
        assert_eq!(term.to_string(), "killed by signal 15 (SIGTERM)");
        let odd = ExitRecord {
            code: None,
            signal: Some(64),
        };
        assert_eq!(odd.to_string(), "killed by signal 64");
        assert_eq!(ExitRecord::UNKNOWN.to_string(), "unknown exit status");
    }
}
