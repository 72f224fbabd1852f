//! The planned trial list as a start's policy: a block of the plan (or of a sequential
//! round) measures its trials not yet in the result, in plan order, at the plan's points.

use std::collections::BTreeSet;

use servebench_spec::plan::{Block, PlannedTrial, SweepPoint, draw_index};

use super::RunError;
use super::recorder::Recorder;
use super::start::{StartContext, StartEnd, StartTrials, Step, failed};
use servebench_result::{RunResult, TrialResult};

/// A block's trials still to measure.
struct Planned<'p> {
    todo: std::vec::IntoIter<PlannedTrial>,
    points: &'p [SweepPoint],
    per_start: u32,
}

impl StartTrials for Planned<'_> {
    fn points(&self) -> &[SweepPoint] {
        self.points
    }

    fn next(&mut self, _: &mut Recorder<'_>) -> Result<Option<Step>, RunError> {
        Ok(self.todo.next().map(|t| Step {
            point: self.points[t.point].clone(),
            prompts: (draw_index(t.trial, t.repeat, self.per_start), t.point),
            trial: t,
        }))
    }

    fn measured(&mut self, _: &TrialResult, _: &mut RunResult) {}
}

impl StartContext<'_> {
    /// Run one block's missing trials: nothing when all are recorded, or when its variant
    /// was refused earlier (its trials stay unrecorded — never tried, not failed — so
    /// `run --resume` tries them again once the server is fixed); all failed when the start
    /// is refused.
    pub(super) async fn run_block(
        &mut self,
        block: &Block,
        rec: &mut Recorder<'_>,
    ) -> Result<(), RunError> {
        let done: BTreeSet<usize> = rec.result().trials.iter().map(|t| t.seq).collect();
        let todo: Vec<PlannedTrial> = block
            .trials
            .iter()
            .filter(|t| !done.contains(&t.seq))
            .cloned()
            .collect();
        if todo.is_empty() || self.refused(&block.variant).is_some() {
            return Ok(());
        }
        let fail_all = |reason: &str| -> Vec<TrialResult> {
            todo.iter().map(|t| failed(t, block, reason)).collect()
        };
        let Some(variant) = self.variant(&block.variant) else {
            rec.unmeasured(fail_all("variant missing from the spec"))?;
            return Ok(());
        };
        let mut trials = Planned {
            todo: todo.clone().into_iter(),
            points: &self.plan().points,
            per_start: self.spec().spec.trials.per_start,
        };
        if let StartEnd::Refused(reason) = self.run_start(block, variant, &mut trials, rec).await? {
            rec.unmeasured(fail_all(&reason))?;
        }
        Ok(())
    }
}
