//! Why a server could not be started, and why an orphaned one was not stopped.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use super::log::indent;
use servebench_result::server::ExitRecord;

/// Why [`super::start`] returned no running server. Every variant that ran the process
/// names its log, and the ones about a failed start carry the log's last lines. The server's
/// process group has already been stopped when one of these is returned.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// `argv` was empty.
    #[error("the server command is empty: `server.command` needs at least the program")]
    EmptyCommand,
    /// Something already listens on the port meant for the server.
    #[error(
        "port {port} is already in use, so the server could not bind it; is a server from an \
         earlier run still up? (`ss -ltnp 'sport = :{port}'` shows who holds it)"
    )]
    PortInUse {
        /// The port.
        port: u16,
    },
    /// The log file could not be created.
    #[error("cannot create the server log {path}: {error}")]
    Log {
        /// The log path.
        path: PathBuf,
        /// The cause.
        error: io::Error,
    },
    /// The probe client could not be built.
    #[error("cannot set up the HTTP client for readiness probes: {0}")]
    HttpClient(String),
    /// The program could not be started at all (not found, not executable…).
    #[error("cannot start the server program `{program}`: {error} (log: {})", .log_path.display())]
    SpawnFailed {
        /// The program (`argv[0]`).
        program: String,
        /// The log, which holds the header of this attempt.
        log_path: PathBuf,
        /// The cause.
        error: io::Error,
    },
    /// A server started through Slurm could not be set up (the step's script, or the ranks'
    /// markers that prove the results directory is shared); the message says what to do.
    #[error("{0}")]
    Slurm(String),
    /// The server's main process exited before the readiness probe succeeded.
    #[error(
        "the server exited ({status}) {:.1} s after it was started, before it was ready; \
         its log is {}; last lines:\n{}",
        .after.as_secs_f64(), .log_path.display(), indent(.log_tail)
    )]
    ExitedBeforeReady {
        /// How it exited.
        status: ExitRecord,
        /// Time from spawn to the exit being noticed.
        after: Duration,
        /// The log.
        log_path: PathBuf,
        /// The log's last lines ([`super::TAIL_LINES`]).
        log_tail: String,
    },
    /// The readiness probe did not succeed within the spec's timeout.
    #[error(
        "the server was not ready after {:.1} s ({probe} never answered as expected; last \
         answer: {last_status_or_error}); it was stopped. Its log is {}; last lines:\n{}",
        .after.as_secs_f64(), .log_path.display(), indent(.log_tail)
    )]
    ReadinessTimeout {
        /// The readiness timeout.
        after: Duration,
        /// The probe, e.g. `GET http://127.0.0.1:8000/health → 200`.
        probe: String,
        /// The last probe's status (`HTTP 503`) or error (`Connection refused …`).
        last_status_or_error: String,
        /// The log.
        log_path: PathBuf,
        /// The log's last lines.
        log_tail: String,
    },
    /// The server answered over HTTPS with a certificate that does not verify: waiting longer
    /// would not help.
    #[error(
        "the server's certificate is not trusted ({probe}): {error}; it was stopped. If a \
         private CA signed it, set target.tls.ca_file: PATH; the certificate must also name the \
         host of target.base_url. Its log is {}",
        .log_path.display()
    )]
    UntrustedCertificate {
        /// The probe, e.g. `GET https://127.0.0.1:8000/health → 200`.
        probe: String,
        /// Why, in words (`tls::TlsError::Untrusted`'s): "it is signed by an unknown issuer".
        error: String,
        /// The log.
        log_path: PathBuf,
    },
}

impl ServerError {
    /// The server log, where the failure left one.
    pub fn log_path(&self) -> Option<&std::path::Path> {
        match self {
            ServerError::SpawnFailed { log_path, .. }
            | ServerError::ExitedBeforeReady { log_path, .. }
            | ServerError::ReadinessTimeout { log_path, .. }
            | ServerError::UntrustedCertificate { log_path, .. } => Some(log_path),
            ServerError::Log { path, .. } => Some(path),
            ServerError::EmptyCommand
            | ServerError::PortInUse { .. }
            | ServerError::HttpClient(_)
            | ServerError::Slurm(_) => None,
        }
    }
}

/// Why [`super::stop_orphan`] did not stop a process group.
#[derive(Debug, thiserror::Error)]
pub enum OrphanError {
    /// The group's leader is alive but runs a different command: the pid was reused.
    #[error(
        "process group {pgid} is alive but runs `{found}`, not the recorded server `{expected}`; \
         the pid was probably reused, so it was left alone"
    )]
    NotOurs {
        /// The recorded pgid.
        pgid: i32,
        /// The recorded command (redacted).
        expected: String,
        /// The running command (redacted).
        found: String,
    },
    /// The leader is gone but other members of the group live on; their command lines cannot
    /// be checked against the record, so they were left alone.
    #[error(
        "process group {pgid}'s main process is gone but processes {members:?} of the group are \
         still alive (they may hold GPU memory); servebench cannot confirm they belong to the \
         recorded server, so it left them alone. If they do: `kill -TERM -- -{pgid}`"
    )]
    LeaderGone {
        /// The recorded pgid.
        pgid: i32,
        /// The live members.
        members: Vec<i32>,
    },
}
