//! How a server process ended, in a form the result file can hold.

use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use nix::sys::signal::Signal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
            (None, Some(s)) => match Signal::try_from(s) {
                Ok(sig) => write!(f, "killed by signal {s} ({})", sig.as_str()),
                Err(_) => write!(f, "killed by signal {s}"),
            },
            (None, None) => f.write_str("unknown exit status"),
        }
    }
}
