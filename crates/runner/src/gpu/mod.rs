//! Accelerators as `nvidia-smi` reports them: what the result file records (model, memory,
//! driver, CUDA) and which processes hold GPU memory (for the stop's "memory released" wait).
//!
//! Parsing ([`parse`]) is pure and tested against output captured on an H200; running
//! `nvidia-smi` is bounded by a timeout, since a wedged driver can make it hang.

pub mod parse;

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use parse::{parse_compute_apps, parse_cuda_version, parse_driver_version, parse_query_gpu};
/// What the result file records about each GPU: servebench-result's type.
pub use servebench_result::Accelerator;

/// How long one `nvidia-smi` call may take before it is killed.
pub const NVIDIA_SMI_TIMEOUT: Duration = Duration::from_secs(20);

/// Fields asked of `--query-gpu`; `compute_cap` is dropped on drivers that do not know it.
const QUERY_GPU: &str = "index,name,uuid,memory.total,driver_version,pci.bus_id,compute_cap";
const QUERY_GPU_OLD: &str = "index,name,uuid,memory.total,driver_version,pci.bus_id";

/// One process holding GPU memory (`--query-compute-apps`). A process on several GPUs appears
/// once per GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ComputeApp {
    /// Process id as the driver sees it (in a container: possibly the host's pid).
    pub pid: u32,
    /// Process name, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_name: Option<String>,
    /// GPU memory used, MiB; `None` where the driver does not say (`[N/A]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_mib: Option<u64>,
}

/// Why `nvidia-smi` gave no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// It could not be started.
    #[error("cannot run {program}: {error}")]
    Run {
        /// The program.
        program: PathBuf,
        /// The cause.
        error: io::Error,
    },
    /// It ran past [`NVIDIA_SMI_TIMEOUT`] and was killed.
    #[error("{program} did not answer within {} s (is the driver hung?)", .after.as_secs())]
    Timeout {
        /// The program.
        program: PathBuf,
        /// The limit.
        after: Duration,
    },
    /// It exited unsuccessfully.
    #[error("`{program} {args}` failed ({status}): {stderr}")]
    Failed {
        /// The program.
        program: PathBuf,
        /// Its arguments.
        args: String,
        /// Its exit status.
        status: String,
        /// Its output (stderr, else stdout), trimmed.
        stderr: String,
    },
    /// Its output was not in the expected form.
    #[error("cannot read the {what}, line {line}: {reason}")]
    Parse {
        /// Which output.
        what: &'static str,
        /// 1-based line.
        line: usize,
        /// What was wrong.
        reason: String,
    },
}

/// `nvidia-smi` on `PATH`, if there is one.
pub fn nvidia_smi() -> Option<PathBuf> {
    find_on_path("nvidia-smi")
}

/// An executable file called `name` in one of `PATH`'s directories.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The accelerators of this host, or `None` when `nvidia-smi` is not on `PATH` or fails
/// (use [`detect_accelerators_with`] to see why it failed).
pub fn detect_accelerators() -> Option<Vec<Accelerator>> {
    detect_accelerators_with(&nvidia_smi()?).ok()
}

/// The accelerators `program` (an `nvidia-smi`) reports, each with the CUDA version of
/// `nvidia-smi -q`.
pub fn detect_accelerators_with(program: &Path) -> Result<Vec<Accelerator>, GpuError> {
    let fmt = "--format=csv,nounits";
    let csv = run_nvidia_smi(program, &[&format!("--query-gpu={QUERY_GPU}"), fmt])
        .or_else(|_| run_nvidia_smi(program, &[&format!("--query-gpu={QUERY_GPU_OLD}"), fmt]))?;
    let mut gpus = parse_query_gpu(&csv)?;
    // The CUDA version is only printed by `-q` (and the banner); a failure here loses just it.
    if let Ok(q) = run_nvidia_smi(program, &["-q"]) {
        let cuda = parse_cuda_version(&q);
        for g in &mut gpus {
            g.cuda_version.clone_from(&cuda);
        }
    }
    Ok(gpus)
}

/// The processes `program` (an `nvidia-smi`) says hold GPU memory.
pub fn compute_apps_with(program: &Path) -> Result<Vec<ComputeApp>, GpuError> {
    let csv = run_nvidia_smi(
        program,
        &[
            "--query-compute-apps=pid,process_name,used_memory",
            "--format=csv,nounits",
        ],
    )?;
    parse_compute_apps(&csv)
}

/// [`compute_apps_with`] off the async runtime's threads.
pub async fn compute_apps(program: PathBuf) -> Result<Vec<ComputeApp>, GpuError> {
    let p = program.clone();
    tokio::task::spawn_blocking(move || compute_apps_with(&p))
        .await
        .unwrap_or_else(|e| {
            Err(GpuError::Run {
                program,
                error: io::Error::other(e.to_string()),
            })
        })
}

/// Runs `program args`, returns its stdout; kills it after [`NVIDIA_SMI_TIMEOUT`].
pub(crate) fn run_nvidia_smi(program: &Path, args: &[&str]) -> Result<String, GpuError> {
    let run_err = |source| GpuError::Run {
        program: program.to_owned(),
        error: source,
    };
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(run_err)?;
    let pid = child.id();
    // Read and wait on another thread, so a hung nvidia-smi can be given up on (and killed).
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(NVIDIA_SMI_TIMEOUT) {
        Ok(r) => r.map_err(run_err)?,
        Err(_) => {
            // Not yet reaped (the reader thread waits on it), so the pid is still this child's.
            if let Ok(pid) = i32::try_from(pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            return Err(GpuError::Timeout {
                program: program.to_owned(),
                after: NVIDIA_SMI_TIMEOUT,
            });
        }
    };
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        let msg = if err.trim().is_empty() { &out } else { &*err };
        return Err(GpuError::Failed {
            program: program.to_owned(),
            args: args.join(" "),
            status: output.status.to_string(),
            stderr: msg.trim().to_owned(),
        });
    }
    Ok(out)
}
