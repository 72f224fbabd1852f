//! A start's trials: one loop for every kind of run. Which trial comes next is the start's
//! [`StartTrials`] (a planned list, or a capacity search's bisection); the loop measures it,
//! fails it when the server has gone, and hands it to the recorder, together with what the
//! policy adds to the result beside it (a search step).

use servebench_spec::plan::{PlannedTrial, SweepPoint};

use super::super::RunError;
use super::super::recorder::Recorder;
use super::super::workload::PromptSource;
use super::{Start, StartContext, StartEnd, exited_soon_after, failed, sleep_unless_cancelled};
use servebench_result::{RunResult, TrialResult, TrialStatus};

/// One trial of a start: what it is, its load, and the prompts it draws (`(trial, point)`
/// of the start's prompt source).
pub(in crate::run) struct Step {
    pub(in crate::run) trial: PlannedTrial,
    pub(in crate::run) point: SweepPoint,
    pub(in crate::run) prompts: (u32, usize),
}

/// Which trials a start measures.
pub(in crate::run) trait StartTrials: Send {
    /// The points the start's prompts are drawn at (and its kernel probe's).
    fn points(&self) -> &[SweepPoint];
    /// The next trial; `None` when the start is done (what the policy concludes is recorded
    /// by then).
    fn next(&mut self, rec: &mut Recorder<'_>) -> Result<Option<Step>, RunError>;
    /// `trial` was measured: what the policy adds to `result` with it (saved together).
    fn measured(&mut self, trial: &TrialResult, result: &mut RunResult);
}

impl StartContext<'_> {
    /// The start's trials, after its cool-down, each after the next: measured, or failed
    /// unsent once the server has gone; every one recorded before the next.
    pub(super) async fn measure_trials(
        &self,
        start: &mut Start<'_>,
        trials: &mut dyn StartTrials,
        rec: &mut Recorder<'_>,
    ) -> Result<StartEnd, RunError> {
        let cooldown = self.spec.spec.trials.cooldown.get();
        sleep_unless_cancelled(cooldown, self).await;
        let tok = self.tokenizer_spec();
        let mut source = PromptSource::new(self.spec, trials.points(), &tok, &self.spec_dir);
        let mut server_gone: Option<String> = None;
        let mut first = true;
        loop {
            if self.cancelled() {
                return Ok(StartEnd::Cancelled);
            }
            let Some(step) = trials.next(rec)? else {
                return Ok(StartEnd::Measured);
            };
            if !first && !cooldown.is_zero() {
                sleep_unless_cancelled(cooldown, self).await;
            }
            first = false;
            if let Some(reason) = &server_gone {
                let trial = failed(&step.trial, start.block, reason);
                rec.unmeasured_trial(trial, |t, r| trials.measured(t, r))?;
                continue;
            }
            let t = &step.trial;
            rec.reporter().trial_start(t, &step.point.to_string());
            let (mut trial, lines) = match &mut source {
                Err(e) => (failed(t, start.block, &format!("prompts: {e}")), Vec::new()),
                Ok(src) => match self.measure(&step, start, src, rec).await {
                    Some(m) => m,
                    // Interrupted: not recorded, so `--resume` measures it again.
                    None => return Ok(StartEnd::Cancelled),
                },
            };
            if let Some(reason) = server_exit(start, &trial).await {
                server_gone = Some(reason.clone());
                trial.status = TrialStatus::Failed;
                trial.failure = Some(reason);
            }
            rec.trial(trial, &lines, |t, r| trials.measured(t, r))?;
        }
    }
}

/// Why the start's server is gone, when it exited during (or right after) `trial`.
async fn server_exit(start: &mut Start<'_>, trial: &TrialResult) -> Option<String> {
    let s = start.running.as_mut()?;
    let status = exited_soon_after(s, trial).await?;
    Some(match s.exit_detail() {
        Some(detail) => format!("the server exited during the trial ({status}): {detail}"),
        None => format!(
            "the server exited during the trial ({status}); see its log {}",
            s.log_path().display()
        ),
    })
}
