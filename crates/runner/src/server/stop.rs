//! Stopping a server: the spec's signal to the whole process group, a grace period, `SIGKILL`,
//! then waiting until the port is free and the group's GPU memory is released. Every step is
//! a timeline line in the server log and a field of the [`StopReport`]. Nothing is ever
//! killed by name.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::Signal;
use servebench_result::server::{ExitRecord, GpuRelease, PortRelease, StopReport};
use servebench_spec::{StopPolicy, StopSignal};
use tokio::process::Child;
use tokio::time::Instant;

use super::group;
use super::log::ServerLog;
use super::port::wait_port_free;
use crate::gpu::{self, ComputeApp, GpuError};

/// Bounds of the waits after the signals. The defaults suit real servers.
#[derive(Debug, Clone)]
pub struct StopOptions {
    /// How long to wait for the group to die after `SIGKILL` (processes in uninterruptible
    /// sleep, e.g. inside a GPU driver call, take a while).
    pub kill_wait: Duration,
    /// How long to wait for the port to be free once the group is gone.
    pub port_wait: Duration,
    /// How long to wait for the group's GPU memory to be released once the group is gone.
    pub gpu_wait: Duration,
    /// The `nvidia-smi` to ask; `None`: the one on `PATH`, if any.
    pub nvidia_smi: Option<PathBuf>,
}

impl Default for StopOptions {
    fn default() -> Self {
        StopOptions {
            kill_wait: Duration::from_secs(10),
            port_wait: Duration::from_secs(30),
            gpu_wait: Duration::from_secs(30),
            nvidia_smi: None,
        }
    }
}

/// What to stop.
pub(crate) struct Target<'a> {
    pub(crate) pgid: i32,
    /// The main process, when it is our child (reaped here).
    pub(crate) child: Option<&'a mut Child>,
    /// Its exit status, if it was reaped before.
    pub(crate) reaped: Option<ExitRecord>,
    pub(crate) port: Option<u16>,
    pub(crate) log: Option<&'a ServerLog>,
}

fn nix_signal(s: StopSignal) -> Signal {
    match s {
        StopSignal::SIGTERM => Signal::SIGTERM,
        StopSignal::SIGINT => Signal::SIGINT,
        StopSignal::SIGQUIT => Signal::SIGQUIT,
        StopSignal::SIGHUP => Signal::SIGHUP,
        StopSignal::SIGKILL => Signal::SIGKILL,
    }
}

/// Stops the group of `t` by `policy`; see the module documentation.
pub(crate) async fn stop_group(
    mut t: Target<'_>,
    policy: &StopPolicy,
    opts: &StopOptions,
) -> StopReport {
    let log = t.log;
    let event = |msg: String| {
        if let Some(l) = log {
            l.event(&msg);
        }
    };
    let pgid = t.pgid;
    let group_pids = group::live_members(pgid).unwrap_or_default();
    let exited_before_stop = t.reaped.or_else(|| reap(t.child.as_deref_mut()));
    let smi = opts.nvidia_smi.clone().or_else(gpu::nvidia_smi);
    let held_before = match &smi {
        Some(p) => Some(
            gpu::compute_apps(p.clone())
                .await
                .map(|apps| mine(&apps, &group_pids)),
        ),
        None => None,
    };
    let sig = nix_signal(policy.signal);
    let t0 = Instant::now();
    if let Some(st) = exited_before_stop {
        event(format!("stop: the main process had already exited ({st})"));
    }
    let sent = group::signal_group(pgid, sig);
    event(format!(
        "stop: sent {} to process group {pgid} (processes {group_pids:?}){}",
        sig.as_str(),
        match &sent {
            Ok(true) => String::new(),
            Ok(false) => "; the group was already gone".to_owned(),
            Err(e) => format!("; failed: {e}"),
        }
    ));
    let mut exit_status = exited_before_stop;
    let mut gone = wait_gone(pgid, &mut t.child, &mut exit_status, policy.grace.get()).await;
    let mut escalated = false;
    if !gone {
        escalated = sig != Signal::SIGKILL;
        let r = group::signal_group(pgid, Signal::SIGKILL);
        event(format!(
            "stop: group {pgid} still alive {:.2} s after {}: sent SIGKILL{}",
            t0.elapsed().as_secs_f64(),
            sig.as_str(),
            r.err()
                .map(|e| format!(" (failed: {e})"))
                .unwrap_or_default()
        ));
        gone = wait_gone(pgid, &mut t.child, &mut exit_status, opts.kill_wait).await;
    }
    let exited_after_s = gone.then(|| t0.elapsed().as_secs_f64());
    let still_alive = if gone {
        Vec::new()
    } else {
        group::live_members(pgid).unwrap_or_default()
    };
    match exited_after_s {
        Some(s) => event(format!(
            "stop: process group {pgid} gone after {s:.2} s{}",
            exit_status
                .map(|e| format!(" (main process: {e})"))
                .unwrap_or_default()
        )),
        None => event(format!(
            "stop: processes {still_alive:?} of group {pgid} still alive after SIGKILL; giving up"
        )),
    }
    let port = match t.port {
        Some(p) if gone => {
            let free = wait_port_free(p, opts.port_wait).await;
            let after_s = t0.elapsed().as_secs_f64();
            event(format!(
                "stop: port {p} {} after {after_s:.2} s",
                if free { "free" } else { "still in use" }
            ));
            if free {
                PortRelease::Free { after_s }
            } else {
                PortRelease::StillInUse { after_s }
            }
        }
        _ => PortRelease::NotChecked,
    };
    let gpu = match (smi, held_before) {
        (None, _) | (_, None) => GpuRelease::NoNvidiaSmi,
        (Some(_), Some(Err(e))) => query_failed(&e),
        (Some(_), Some(Ok(before))) if before.is_empty() => GpuRelease::NoneHeld,
        (Some(_), Some(Ok(_))) if !gone => GpuRelease::NotChecked,
        (Some(p), Some(Ok(before))) => {
            let held_mib = before.iter().filter_map(|a| a.used_mib).sum();
            wait_gpu_released(p, &group_pids, held_mib, t0, opts.gpu_wait).await
        }
    };
    event(format!("stop: GPU memory: {}", describe_gpu(&gpu)));
    StopReport {
        pgid,
        group_pids,
        signal: policy.signal,
        grace_s: policy.grace.get().as_secs_f64(),
        exited_before_stop,
        escalated_to_sigkill: escalated,
        exit_status,
        exited_after_s,
        still_alive,
        port,
        gpu,
    }
}

/// Reaps the child if it has exited.
fn reap(child: Option<&mut Child>) -> Option<ExitRecord> {
    match child?.try_wait() {
        Ok(Some(st)) => Some(st.into()),
        Ok(None) => None,
        Err(_) => Some(ExitRecord::UNKNOWN),
    }
}

/// Polls until no process of the group is alive (reaping our child on the way, since an
/// unreaped zombie leader keeps `kill(-pgid, 0)` succeeding) or `timeout` passed.
async fn wait_gone(
    pgid: i32,
    child: &mut Option<&mut Child>,
    exit: &mut Option<ExitRecord>,
    timeout: Duration,
) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if exit.is_none() {
            *exit = reap(child.as_deref_mut());
        }
        if !group::group_alive(pgid) {
            if exit.is_none() {
                *exit = reap(child.as_deref_mut());
            }
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The entries of `apps` that belong to the group.
fn mine(apps: &[ComputeApp], pids: &[i32]) -> Vec<ComputeApp> {
    let set: BTreeSet<i64> = pids.iter().map(|&p| i64::from(p)).collect();
    apps.iter()
        .filter(|a| set.contains(&i64::from(a.pid)))
        .cloned()
        .collect()
}

/// Polls `nvidia-smi` until none of `pids` holds GPU memory, or `timeout` passed.
async fn wait_gpu_released(
    smi: PathBuf,
    pids: &[i32],
    held_mib: u64,
    t0: Instant,
    timeout: Duration,
) -> GpuRelease {
    let deadline = Instant::now() + timeout;
    loop {
        let apps = match gpu::compute_apps(smi.clone()).await {
            Ok(a) => mine(&a, pids),
            Err(e) => return query_failed(&e),
        };
        let after_s = t0.elapsed().as_secs_f64();
        if apps.is_empty() {
            return GpuRelease::Released { after_s, held_mib };
        }
        if Instant::now() >= deadline {
            let mut still: Vec<u32> = apps.iter().map(|a| a.pid).collect();
            still.dedup();
            return GpuRelease::StillHeld {
                after_s,
                pids: still,
                used_mib: apps.iter().filter_map(|a| a.used_mib).sum(),
            };
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn query_failed(e: &GpuError) -> GpuRelease {
    GpuRelease::QueryFailed {
        error: e.to_string(),
    }
}

fn describe_gpu(g: &GpuRelease) -> String {
    match g {
        GpuRelease::Released { after_s, held_mib } => {
            format!("{held_mib} MiB released after {after_s:.2} s")
        }
        GpuRelease::StillHeld {
            after_s,
            pids,
            used_mib,
        } => format!("{used_mib} MiB still held by {pids:?} after {after_s:.2} s"),
        GpuRelease::QueryFailed { error } => format!("nvidia-smi failed: {error}"),
        GpuRelease::NoNvidiaSmi => "not checked (no nvidia-smi on PATH)".to_owned(),
        GpuRelease::NoneHeld => "none held by the group's processes".to_owned(),
        GpuRelease::NotChecked => "not waited for (the group did not die)".to_owned(),
    }
}
