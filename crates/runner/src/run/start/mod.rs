//! One server start, as stages: launch and verify (`launch.rs`), the engine's checks
//! (`preflight.rs`), the equivalence probe (`probe.rs`), the kernel evidence (`kernels.rs`),
//! then its trials (`trials.rs`: each measured with its telemetry and host load,
//! `measure.rs`), then the stop. Every start of a run goes through [`StartContext::run_start`]
//! — a sweep's block and a capacity search's start alike —; what differs is only which trials
//! a start measures ([`StartTrials`]: a planned list, or a bisection). A new per-start feature
//! is one stage here, and every kind of run has it.

mod context;
mod kernels;
mod launch;
mod measure;
mod open;
mod preflight;
mod probe;
mod telemetry;
mod trials;

use std::collections::BTreeMap;
use std::time::Duration;

use servebench_engines::Profile;
use servebench_spec::Variant;
use servebench_spec::plan::{Block, PlannedTrial};

use super::RunError;
use super::recorder::Recorder;
use crate::loadgen::Target;
use crate::server::{self, RunningServer};
use servebench_result::{RunResult, TrialResult, TrialStatus, now_rfc3339};

pub(super) use context::StartContext;
pub(super) use trials::{StartTrials, Step};

/// A server start under way: the block it is, its variant, its server (when the spec
/// launches one), where its trials are sent, and the engine profile its preflight found.
pub(super) struct Start<'a> {
    pub(super) block: &'a Block,
    pub(super) variant: &'a Variant,
    running: Option<RunningServer>,
    pub(super) target: Target,
    pub(super) profile: &'static Profile,
}

/// How a start ended.
pub(super) enum StartEnd {
    /// Its trials were measured (or it had none left).
    Measured,
    /// It measured nothing: its server did not start, failed verify or a check, or its
    /// kernels did not match; the reason, said once.
    Refused(String),
    /// Stopped by `cancel`.
    Cancelled,
}

/// Why a start's server or endpoint is not there to measure.
pub(super) enum Opening {
    /// Stopped by `cancel` while starting.
    Cancelled,
    /// Could not start, pass verify, or resolve the endpoint.
    Failed(String),
}

impl<'a> StartContext<'a> {
    /// One start of `variant` as `block`: its stages, then the trials `trials` gives, then
    /// the stop. The result is saved after every stage and trial.
    pub(super) async fn run_start(
        &mut self,
        block: &Block,
        variant: &'a Variant,
        trials: &mut dyn StartTrials,
        rec: &mut Recorder<'_>,
    ) -> Result<StartEnd, RunError> {
        let mut start = match self.open(block, variant, rec).await {
            Ok(s) => s,
            Err(Opening::Cancelled) => return Ok(StartEnd::Cancelled),
            Err(Opening::Failed(reason)) => return Ok(StartEnd::Refused(reason)),
        };
        if let Err(e) = self.probe(&start, rec).await {
            return Err(self.stop_after_error(start, rec, e).await);
        }
        match self.kernel_evidence(&start, trials.points(), rec).await {
            Ok(()) => {}
            Err(kernels::KernelStop::Refused(reason)) => {
                self.close(start, rec).await?;
                return Ok(StartEnd::Refused(reason));
            }
            Err(kernels::KernelStop::Io(e)) => {
                return Err(self.stop_after_error(start, rec, e).await);
            }
        }
        match self.measure_trials(&mut start, trials, rec).await {
            Ok(end) => {
                self.close(start, rec).await?;
                Ok(end)
            }
            Err(e) => Err(self.stop_after_error(start, rec, e).await),
        }
    }

    /// The result could not be written (`error`, which names where the measured data went):
    /// stop the start's server by its stop policy before the run ends, so that nothing is
    /// left running, and record the stop where the result can still be written.
    async fn stop_after_error(
        &self,
        start: Start<'_>,
        rec: &mut Recorder<'_>,
        error: RunError,
    ) -> RunError {
        if let Some(s) = start.running {
            rec.reporter().line(&format!(
                "block {}: the result could not be written: stopping the server",
                start.block.index + 1
            ));
            let report = server::stop(s).await;
            // Best effort: the error already says where every trial is.
            rec.note(|r| set_stop(r, start.block.index, report));
        }
        error
    }

    /// Stop the start's server, if it started one, and record how it stopped.
    async fn close(&self, start: Start<'_>, rec: &mut Recorder<'_>) -> Result<(), RunError> {
        if let Some(s) = start.running {
            rec.reporter()
                .line(&format!("block {}: stopping server", start.block.index + 1));
            let report = server::stop(s).await;
            rec.update(|r| set_stop(r, start.block.index, report))?;
        }
        Ok(())
    }
}

/// The stop report on the record of `block`'s server.
fn set_stop(result: &mut RunResult, block: usize, report: server::StopReport) {
    if let Some(rec) = result.servers.iter_mut().rev().find(|r| r.block == block) {
        rec.stop = Some(report);
    }
}

/// The server's exit status if it has exited, or exits within 2 s of a trial that saw
/// connection failures (a dying server closes its socket before its process ends).
async fn exited_soon_after(
    s: &mut RunningServer,
    trial: &TrialResult,
) -> Option<crate::server::ExitRecord> {
    if let Some(e) = s.try_exit_status() {
        return Some(e);
    }
    use crate::loadgen::ErrorKind;
    let suspicious = trial.summary.as_ref().is_some_and(|sum| {
        sum.errors.keys().any(|k| {
            matches!(
                k,
                ErrorKind::Connect | ErrorKind::Transport | ErrorKind::StreamDisconnected
            )
        })
    });
    if !suspicious {
        return None;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if let Some(e) = s.try_exit_status() {
            return Some(e);
        }
    }
    None
}

/// A trial that was not measured, and why.
pub(super) fn failed(t: &PlannedTrial, block: &Block, reason: &str) -> TrialResult {
    TrialResult {
        failure: Some(reason.to_owned()),
        ..unmeasured(t, block)
    }
}

/// The record of trial `t` of `block` before anything is measured: failed, at this time.
fn unmeasured(t: &PlannedTrial, block: &Block) -> TrialResult {
    let now = now_rfc3339();
    TrialResult {
        seq: t.seq,
        block: block.index,
        variant: t.variant.clone(),
        trial: t.trial,
        point: t.point,
        repeat: t.repeat,
        prompt_seed: t.prompt_seed,
        status: TrialStatus::Failed,
        failure: None,
        started_at: now.clone(),
        ended_at: now,
        errors: BTreeMap::new(),
        summary: None,
        receive_stamps: None,
        host_load: None,
    }
}

async fn wait_cancel(ctx: &StartContext<'_>) {
    while !ctx.cancelled() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn sleep_unless_cancelled(d: Duration, ctx: &StartContext<'_>) {
    if d.is_zero() {
        return;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = wait_cancel(ctx) => {}
    }
}
