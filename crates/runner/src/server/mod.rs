//! The server under test: launch, readiness, verification, read-back, stop, orphans.
//!
//! * [`start`]`(&ServerLaunch) -> RunningServer`: spawn in a new process group with output in
//!   one log file per start; poll readiness; fail at once (with the log's tail) if it exits.
//! * [`verify`]: prove the variant is in effect (`log_contains`, `json` rules).
//! * [`server_info`]: what the server says about itself, best effort.
//! * [`stop`]: the spec's signal to the whole group, grace, `SIGKILL`, then wait for the port
//!   and the GPU memory; a [`StopReport`] and timeline lines in the log.
//! * [`find_orphan`] / [`stop_orphan`]: a group left alive by a killed runner.
//! * [`redact_argv`] / [`redact_env`]: what may be recorded.
//! * [`slurm`]: the same for a server that spans nodes, started as a Slurm step
//!   ([`slurm::start`]); stop, verify and the safety nets dispatch on it.
//!
//! The caller resolves `${port}`, `${variant.*}`, `${env.*}` and `${servebench}` before
//! building a [`ServerLaunch`] (see `servebench_spec::substitute`); [`pick_free_port`] gives
//! the port.

mod error;
mod group;
mod http;
mod info;
mod limit;
mod log;
mod orphan;
mod port;
mod redact;
pub mod slurm;
mod start;
mod stop;
mod verify;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the result file records about a server start and stop: servebench-result's types.
pub use servebench_result::server::{
    ExitRecord, GpuRelease, PortRelease, ServerInfo, ServerRecord, StopReport,
};
use servebench_spec::{Readiness, StopPolicy, VerifyRule};
use tokio::process::Child;

pub use error::{OrphanError, ServerError};
pub(crate) use http::{client as probe_client, describe as describe_http, url as probe_url};
pub use info::{INFO_ENDPOINTS, server_info, server_info_at};
pub use limit::{ContextLimit, Reach, check_lengths, check_planned, context_limit};
pub use log::TAIL_LINES;
pub use orphan::{OrphanStatus, cmdline_matches, find_orphan, stop_orphan, stop_orphan_with};
pub use port::{pick_free_port, port_is_free};
pub use redact::{REDACTED, recorded_env, redact_argv, redact_env, secret_values_of_env};
pub use start::{start, start_with};
pub use stop::StopOptions;
pub use verify::{
    LOG_GRACE, RuleFailure, RuleProblem, VerifyError, VerifyOutcome, verify, verify_running,
};

use log::ServerLog;

/// Everything needed to start one server, with every `${…}` already resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerLaunch {
    /// Program and arguments (`server.command` + `server.args` + the variant's args).
    pub argv: Vec<String>,
    /// Variables added to the inherited environment.
    pub env: BTreeMap<String, String>,
    /// Working directory; `None`: the runner's.
    pub working_dir: Option<PathBuf>,
    /// The log file of this start (stdout and stderr; created with its folders).
    pub log_path: PathBuf,
    /// The port the server was told to listen on (`${port}`).
    pub port: u16,
    /// When it counts as ready.
    pub readiness: Readiness,
    /// Rules for [`verify`], already substituted.
    pub verify: Vec<VerifyRule>,
    /// How to stop it.
    pub stop: StopPolicy,
    /// Values that must never be recorded (e.g. what `${env.*}` references resolved to);
    /// the values of `env`'s secret-named variables are added automatically.
    pub secret_values: Vec<String>,
    /// Where readiness probes, verify rules and the info read-back reach the server when not
    /// at `http://127.0.0.1:{port}`: a server that serves only HTTPS
    /// (`https://127.0.0.1:{port}`, or a host name its certificate holds). Resolved.
    pub base_url: Option<String>,
    /// A CA to trust besides the system's roots, for an `https://` `base_url`.
    pub ca_file: Option<PathBuf>,
}

impl ServerLaunch {
    /// A launch with the spec's defaults for readiness and stop, no extra env and no rules.
    pub fn new(argv: Vec<String>, port: u16, log_path: impl Into<PathBuf>) -> Self {
        ServerLaunch {
            argv,
            env: BTreeMap::new(),
            working_dir: None,
            log_path: log_path.into(),
            port,
            readiness: Readiness::default(),
            verify: Vec::new(),
            stop: StopPolicy::default(),
            secret_values: Vec::new(),
            base_url: None,
            ca_file: None,
        }
    }

    /// Where probes reach the server: `base_url`, or `http://127.0.0.1:{port}`; no trailing
    /// slash.
    pub fn probe_base(&self) -> String {
        match &self.base_url {
            Some(u) => u.trim_end_matches('/').to_owned(),
            None => format!("http://127.0.0.1:{}", self.port),
        }
    }
}

/// A started, ready server. Stop it with [`stop`]; dropping it unstopped sends `SIGKILL` to
/// its group (a safety net, without the waits and the report).
#[derive(Debug)]
pub struct RunningServer {
    record: ServerRecord,
    child: Child,
    log: ServerLog,
    stop: StopPolicy,
    ready_after: Duration,
    exit: Option<ExitRecord>,
    stopped: bool,
    /// The Slurm step, for a server started through [`slurm::start`].
    slurm: Option<slurm::Step>,
    /// [`ServerLaunch::probe_base`].
    base_url: String,
    /// [`ServerLaunch::ca_file`].
    ca_file: Option<PathBuf>,
}

impl RunningServer {
    fn new(
        record: ServerRecord,
        child: Child,
        log: ServerLog,
        launch: &ServerLaunch,
        ready_after: Duration,
    ) -> Self {
        RunningServer {
            record,
            child,
            log,
            stop: launch.stop.clone(),
            ready_after,
            exit: None,
            stopped: false,
            slurm: None,
            base_url: launch.probe_base(),
            ca_file: launch.ca_file.clone(),
        }
    }

    /// What the result file records.
    pub fn record(&self) -> &ServerRecord {
        &self.record
    }
    /// Pid of the main process.
    pub fn pid(&self) -> u32 {
        self.record.pid
    }
    /// Its process group.
    pub fn pgid(&self) -> i32 {
        self.record.pgid
    }
    /// The port.
    pub fn port(&self) -> u16 {
        self.record.port
    }
    /// Where it is reached: `http://127.0.0.1:{port}`, or the launch's `base_url`.
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }
    /// The CA trusted for an `https://` base URL besides the system's roots.
    pub fn ca_file(&self) -> Option<&Path> {
        self.ca_file.as_deref()
    }
    /// The log file.
    pub fn log_path(&self) -> &Path {
        &self.record.log_path
    }
    /// The redacted argv.
    pub fn argv(&self) -> &[String] {
        &self.record.argv
    }
    /// Spawn to ready.
    pub fn ready_after(&self) -> Duration {
        self.ready_after
    }
    /// When it was spawned, UTC RFC 3339.
    pub fn started_at(&self) -> &str {
        &self.record.started_at
    }
    /// The stop policy it was launched with.
    pub fn stop_policy(&self) -> &StopPolicy {
        &self.stop
    }

    /// The main process's exit status if it has exited (a server that dies mid-trial), else
    /// `None`. Does not block.
    pub fn try_exit_status(&mut self) -> Option<ExitRecord> {
        if self.exit.is_none() {
            self.exit = match self.child.try_wait() {
                Ok(Some(st)) => Some(st.into()),
                Ok(None) => None,
                Err(_) => Some(ExitRecord::UNKNOWN),
            };
            if let Some(st) = self.exit {
                self.log.event(&format!("the server exited ({st})"));
            }
        }
        self.exit
    }

    /// Resolves when the main process exits, with its status. Cancel-safe: race it against a
    /// trial with `tokio::select!` to notice a server that dies mid-trial.
    pub async fn exited(&mut self) -> ExitRecord {
        if let Some(st) = self.exit {
            return st;
        }
        let st = self
            .child
            .wait()
            .await
            .map_or(ExitRecord::UNKNOWN, ExitRecord::from);
        self.log.event(&format!("the server exited ({st})"));
        self.exit = Some(st);
        st
    }

    /// The last `n` lines of this start's log.
    pub fn log_tail(&self, n: usize) -> String {
        self.log.tail(n)
    }

    /// What the result records about the Slurm step, for a server started through Slurm.
    pub fn slurm_record(&self) -> Option<&servebench_result::cluster::SlurmStepRecord> {
        self.slurm.as_ref().map(slurm::Step::record)
    }

    /// For a server that exited: which of its ranks ended it and that rank's log tail (a
    /// server started through Slurm); `None` for a local server, whose one log says it all.
    pub fn exit_detail(&self) -> Option<String> {
        self.slurm.as_ref().map(|s| s.exit_detail(&self.log))
    }

    /// Appends a timeline line (`[servebench <time>] msg`) to the server log, e.g. "trial 3
    /// started", so the log can be read against the run.
    pub fn log_event(&self, msg: &str) {
        self.log.event(msg);
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        // An unreaped leader, or any live member, keeps the pgid from being reused, so this
        // cannot hit another program's group.
        if !self.stopped
            && let Some(step) = &self.slurm
        {
            step.kill_now();
        }
        if !self.stopped && (self.exit.is_none() || group::group_alive(self.record.pgid)) {
            let _ = group::signal_group(self.record.pgid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// Stops `server` by its launch's stop policy with the default waits; see [`stop_with`].
pub async fn stop(server: RunningServer) -> StopReport {
    stop_with(server, &StopOptions::default()).await
}

/// Stops `server`: its stop signal to the whole process group, up to `grace` for every process
/// of the group to be gone, then `SIGKILL`; then waits (bounded by `opts`) until its port is
/// free and, where `nvidia-smi` exists, until the group's processes hold no GPU memory. Each
/// step is a timeline line in the server log. Never fails: what did not happen is in the
/// report.
pub async fn stop_with(mut server: RunningServer, opts: &StopOptions) -> StopReport {
    server.stopped = true;
    let policy = server.stop.clone();
    if let Some(step) = server.slurm.take() {
        step.stop(&policy, &mut server.child, &server.log, opts)
            .await;
    }
    let target = stop::Target {
        pgid: server.record.pgid,
        child: Some(&mut server.child),
        reaped: server.exit,
        port: Some(server.record.port),
        log: Some(&server.log),
    };
    stop::stop_group(target, &policy, opts).await
}
