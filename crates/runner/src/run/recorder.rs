//! The run's one owner of its result: what a run learns is handed to the [`Recorder`], which
//! changes the result, saves it — the run's one save point, durable as the store makes it (an
//! atomic rename, the request sidecar, the reserve that a full disk is met with) — and tells
//! the [`Reporter`] what a person watching should see. Nothing else in `run` writes the
//! result file or prints a trial.

use indicatif::ProgressBar;
use servebench_result::{
    RequestLine, ResultStore, RunResult, StoreError, TrialResult, now_rfc3339,
};
use servebench_spec::plan::PlannedTrial;

/// What a run says as it goes: the terminal's progress ([`super::progress::Progress`]) is one;
/// a test may collect the lines instead. A reporter only shows; it never changes the result.
pub(crate) trait Reporter: Send + Sync {
    /// A status line.
    fn line(&self, msg: &str);
    /// A line said even with `-q`: something the result will lack.
    fn warn(&self, msg: &str);
    /// A trial begins, at the point labelled `point`.
    fn trial_start(&self, t: &PlannedTrial, point: &str);
    /// A trial was measured (it is being recorded).
    fn trial_end(&self, t: &TrialResult);
    /// Trials added to the run after it started (a round, a search step).
    fn add_planned(&mut self, trials: usize);
    /// The live trial bar, where one is shown (the trial's throughput as it runs).
    fn trial_bar(&self) -> Option<ProgressBar> {
        None
    }
    /// The run ended.
    fn finish(&self) {}
}

/// The result of a run, the store it is saved to, and the reporter told of it (module docs).
pub(super) struct Recorder<'s> {
    result: RunResult,
    store: &'s ResultStore,
    reporter: Box<dyn Reporter + 's>,
}

impl<'s> Recorder<'s> {
    pub(super) fn new(
        result: RunResult,
        store: &'s ResultStore,
        reporter: Box<dyn Reporter + 's>,
    ) -> Self {
        Self {
            result,
            store,
            reporter,
        }
    }

    /// The result as recorded so far.
    pub(super) fn result(&self) -> &RunResult {
        &self.result
    }

    /// The store the result is saved to (its paths; the telemetry sidecar).
    pub(super) fn store(&self) -> &'s ResultStore {
        self.store
    }

    pub(super) fn reporter(&self) -> &dyn Reporter {
        &*self.reporter
    }

    pub(super) fn reporter_mut(&mut self) -> &mut dyn Reporter {
        &mut *self.reporter
    }

    /// Changes the result and saves it; an error says where the measured data is.
    pub(super) fn update<T>(
        &mut self,
        change: impl FnOnce(&mut RunResult) -> T,
    ) -> Result<T, StoreError> {
        let out = change(&mut self.result);
        self.save(&[])?;
        Ok(out)
    }

    /// Changes the result in memory only: what the next save carries (a search's point
    /// before its trial is measured).
    pub(super) fn keep<T>(&mut self, change: impl FnOnce(&mut RunResult) -> T) -> T {
        change(&mut self.result)
    }

    /// Changes the result and saves it where it can: a witness of a start (its launch record,
    /// its checks), which the next save carries if this one fails.
    pub(super) fn note<T>(&mut self, change: impl FnOnce(&mut RunResult) -> T) -> T {
        let out = change(&mut self.result);
        let _ = self.save(&[]);
        out
    }

    /// Appends a measured trial, with what its start's policy adds beside it (a search
    /// step), says it, and saves both with the trial's request records.
    pub(super) fn trial(
        &mut self,
        trial: TrialResult,
        lines: &[RequestLine],
        beside: impl FnOnce(&TrialResult, &mut RunResult),
    ) -> Result<(), StoreError> {
        self.reporter.trial_end(&trial);
        self.append(trial, lines, beside)
    }

    /// Appends a trial that was never sent (its server had gone), unsaid, and saves it.
    pub(super) fn unmeasured_trial(
        &mut self,
        trial: TrialResult,
        beside: impl FnOnce(&TrialResult, &mut RunResult),
    ) -> Result<(), StoreError> {
        self.append(trial, &[], beside)
    }

    /// Appends trials that were never measured (their start refused), in one save.
    pub(super) fn unmeasured(&mut self, trials: Vec<TrialResult>) -> Result<(), StoreError> {
        self.result.trials.extend(trials);
        self.save(&[])
    }

    fn append(
        &mut self,
        trial: TrialResult,
        lines: &[RequestLine],
        beside: impl FnOnce(&TrialResult, &mut RunResult),
    ) -> Result<(), StoreError> {
        beside(&trial, &mut self.result);
        self.result.trials.push(trial);
        self.save(lines)
    }

    /// The one save point: the time of the change, the result rewritten atomically, a
    /// trial's request records (if any) appended to the sidecar first.
    fn save(&mut self, trial_lines: &[RequestLine]) -> Result<(), StoreError> {
        self.result.updated_at = now_rfc3339();
        self.store.save_trial(&self.result, trial_lines)
    }

    /// The result as last saved, and the reporter finished.
    pub(super) fn finish(self) -> RunResult {
        self.reporter.finish();
        self.result
    }
}

#[cfg(test)]
#[path = "recorder_tests.rs"]
mod tests;
