//! Stopping a Slurm step: the spec's signal to every rank through `scancel`, the grace, then
//! `SIGKILL`; waiting until Slurm no longer lists the step; cancelling what a failed start or a
//! killed servebench left behind.

use std::time::Duration;

use servebench_spec::{StopPolicy, StopSignal};
use tokio::time::Instant;

use super::super::StopOptions;
use super::super::log::ServerLog;
use super::{STEP_GONE_WAIT, Step, cmd};

impl Step {
    /// Stops the step: the policy's signal through `scancel`, the grace, `scancel` (`SIGKILL`),
    /// then waits until `srun` has exited and Slurm no longer lists the step. Timeline lines go
    /// to `log`.
    pub(crate) async fn stop(
        &self,
        policy: &StopPolicy,
        srun: &mut tokio::process::Child,
        log: &ServerLog,
        opts: &StopOptions,
    ) {
        let id = self.id().await;
        let Some(id) = id else {
            log.event(&format!(
                "stop: Slurm lists no step named {} in job {}: already gone",
                self.record.step_name, self.record.job_id
            ));
            return;
        };
        let sig = signal_name(policy.signal);
        let t0 = Instant::now();
        let sent = if policy.signal == StopSignal::SIGKILL {
            cmd::cancel(&id, None).await
        } else {
            cmd::cancel(&id, Some(sig)).await
        };
        log.event(&format!(
            "stop: scancel --signal={sig} {id}{}",
            sent.err()
                .map(|e| format!(" failed: {e}"))
                .unwrap_or_default()
        ));
        if !wait_exit(srun, policy.grace.get()).await {
            let r = cmd::cancel(&id, None).await;
            log.event(&format!(
                "stop: step {id} still running {:.2} s after {sig}: scancel {id} (SIGKILL){}",
                t0.elapsed().as_secs_f64(),
                r.err().map(|e| format!(" failed: {e}")).unwrap_or_default()
            ));
            wait_exit(srun, opts.kill_wait).await;
        }
        if wait_step_gone(&id, STEP_GONE_WAIT).await {
            log.event(&format!(
                "stop: Slurm no longer lists step {id} ({:.2} s after the stop)",
                t0.elapsed().as_secs_f64()
            ));
        } else {
            log.event(&format!(
                "stop: Slurm still lists step {id} {:.0} s after the stop; the next step may wait for its nodes",
                t0.elapsed().as_secs_f64()
            ));
        }
    }

    /// `JOB.STEP`: the one recorded at start, else looked up by name.
    async fn id(&self) -> Option<String> {
        match &self.record.step_id {
            Some(id) => Some(id.clone()),
            None => cmd::steps_named(&self.record.job_id, &self.record.step_name)
                .await
                .ok()
                .and_then(|v| v.into_iter().next()),
        }
    }

    /// The safety net of a dropped, unstopped server: `scancel JOB.STEP`, without waiting.
    pub(crate) fn kill_now(&self) {
        if let Some(id) = &self.record.step_id {
            let _ = std::process::Command::new("scancel")
                .arg(id)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

fn signal_name(s: StopSignal) -> &'static str {
    match s {
        StopSignal::SIGTERM => "TERM",
        StopSignal::SIGINT => "INT",
        StopSignal::SIGQUIT => "QUIT",
        StopSignal::SIGHUP => "HUP",
        StopSignal::SIGKILL => "KILL",
    }
}

/// Whether `srun` exited within `timeout` (it is reaped later by the group stop).
async fn wait_exit(srun: &mut tokio::process::Child, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if !matches!(srun.try_wait(), Ok(None)) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls until Slurm lists no step `id`, at most `timeout`.
async fn wait_step_gone(id: &str, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if !cmd::step_alive(id).await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// After a failed start: cancel whatever is left of the step and wait until it is gone.
pub(super) async fn ensure_gone(step: &Step, log: &ServerLog) {
    let ids = cmd::steps_named(&step.record.job_id, &step.record.step_name)
        .await
        .unwrap_or_default();
    for id in ids {
        let _ = cmd::cancel(&id, None).await;
        let gone = wait_step_gone(&id, STEP_GONE_WAIT).await;
        log.event(&format!(
            "slurm step {id} cancelled after the failed start{}",
            if gone { "" } else { "; Slurm still lists it" }
        ));
    }
}

/// Cancels the step named `step_name` that a killed servebench left in job `job_id`, if Slurm
/// still lists it, and waits until it is gone. The step ids cancelled.
pub async fn cancel_orphan_step(job_id: &str, step_name: &str) -> Result<Vec<String>, String> {
    let ids = match cmd::steps_named(job_id, step_name).await {
        Ok(ids) => ids,
        // The job itself is gone (squeue: "Invalid job id"): nothing of it is left.
        Err(e) if e.contains("Invalid job id") => Vec::new(),
        Err(e) => return Err(e),
    };
    for id in &ids {
        cmd::cancel(id, None).await?;
        if !wait_step_gone(id, STEP_GONE_WAIT).await {
            return Err(format!(
                "Slurm still lists step {id} {STEP_GONE_WAIT:?} after `scancel {id}`"
            ));
        }
    }
    Ok(ids)
}
