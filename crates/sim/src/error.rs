//! The library's error type.

use std::io;
use std::net::SocketAddr;

/// Everything that can go wrong when configuring, starting or running the simulator.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A flag or configuration value is out of range or inconsistent with another.
    #[error("invalid simulator configuration: {0}")]
    InvalidConfig(String),
    /// The listening socket could not be bound.
    #[error("cannot bind {addr}: {error}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The underlying error.
        error: io::Error,
    },
    /// The HTTP server or a signal handler failed while running.
    #[error("simulator server failed: {0}")]
    Serve(io::Error),
    /// The ready line could not be written to stdout.
    #[error("cannot write the listening line: {0}")]
    Stdout(io::Error),
    /// The open-file limit could not be read or raised.
    #[error("cannot raise the open-file limit: {0}")]
    Rlimit(nix::Error),
    /// A worker rank (`--worker`) lost its head: the head answered at `--head-url` once and
    /// then stopped answering, as an engine's follower fails when its head dies.
    #[error("the head at {url} went away ({detail}); a worker rank ends with it")]
    HeadGone {
        /// The head's URL.
        url: String,
        /// The last probe's failure.
        detail: String,
    },
    /// The `--exit-after-requests` fault fired: the server stopped on purpose, as a crash
    /// would. A CLI should exit non-zero on it.
    #[error("exited on purpose after {requests} requests (--exit-after-requests fault)")]
    InjectedExit {
        /// The configured request count.
        requests: u64,
    },
}
