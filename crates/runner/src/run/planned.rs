//! The planned trial list: as the run's policy, the plan's blocks or a sequential design's
//! rounds ([`PlannedStarts`]); as a start's, the block's trials not yet in the result, in
//! plan order, at the plan's points.

use std::collections::BTreeSet;

use servebench_spec::plan::{Block, PlannedTrial, SweepPoint, draw_index};

use super::RunError;
use super::recorder::Recorder;
use super::rounds::Rounds;
use super::start::{StartContext, StartTrials, Step, failed};
use super::starts::{Begun, Policy};
use servebench_result::{RunResult, TrialResult};

/// A block's trials still to measure (a start's policy).
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

/// The planned trial list as the run's policy: the plan's blocks (its first stage: the
/// `trials.count` repetitions, `per_start`, a design's), or a sequential design's rounds.
pub(super) enum PlannedStarts<'p> {
    /// The plan's blocks, until taken.
    FirstStage(Option<&'p [Block]>),
    /// Rounds of the undecided cells.
    Rounds(Box<Rounds<'p>>),
}

impl<'a> Policy<'a> for PlannedStarts<'a> {
    fn round(
        &mut self,
        _: &StartContext<'a>,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<Vec<Block>>, RunError> {
        match self {
            PlannedStarts::FirstStage(blocks) => Ok(blocks.take().map(<[Block]>::to_vec)),
            PlannedStarts::Rounds(rounds) => rounds.next_round(rec),
        }
    }

    /// The first stage stops once no comparison is left to make.
    fn stops(&self, ctx: &StartContext<'a>) -> bool {
        matches!(self, PlannedStarts::FirstStage(_)) && ctx.nothing_left_to_compare()
    }

    /// A block's trials not yet in the result: nothing when all are recorded, or when its
    /// variant was refused earlier (its trials stay unrecorded — never tried, not failed —
    /// so `run --resume` tries them again once the server is fixed).
    fn begin(
        &mut self,
        block: Block,
        ctx: &StartContext<'a>,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<Begun<'a>>, RunError> {
        let todo = todo(&block, rec);
        if todo.is_empty() || ctx.refused(&block.variant).is_some() {
            return Ok(None);
        }
        if ctx.variant(&block.variant).is_none() {
            self.refused(&block, "variant missing from the spec", rec)?;
            return Ok(None);
        }
        let trials = Planned {
            todo: todo.into_iter(),
            points: &ctx.plan().points,
            per_start: ctx.spec().spec.trials.per_start,
        };
        Ok(Some((block, Box::new(trials))))
    }

    /// Every trial of the block not yet recorded, failed with the reason.
    fn refused(
        &mut self,
        block: &Block,
        reason: &str,
        rec: &mut Recorder<'_>,
    ) -> Result<(), RunError> {
        let failed = todo(block, rec)
            .iter()
            .map(|t| failed(t, block, reason))
            .collect();
        rec.unmeasured(failed)?;
        Ok(())
    }

    /// The first stage is one round; the rounds say themselves when they are done.
    fn look(&mut self, _: &mut Recorder<'_>) -> Result<bool, RunError> {
        Ok(matches!(self, PlannedStarts::FirstStage(_)))
    }
}

/// The block's trials not yet in the result.
fn todo(block: &Block, rec: &Recorder<'_>) -> Vec<PlannedTrial> {
    let done: BTreeSet<usize> = rec.result().trials.iter().map(|t| t.seq).collect();
    block
        .trials
        .iter()
        .filter(|t| !done.contains(&t.seq))
        .cloned()
        .collect()
}
