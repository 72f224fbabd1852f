//! The run's one loop over server starts. A run is rounds of starts; its [`Policy`] says
//! which starts make the next round, what each measures, what a refused start leaves in the
//! result, and what is judged after a round: the planned trial list (the plan's blocks, a
//! sequential design's rounds: `planned.rs`) or a capacity search's bisections
//! (`search.rs`). Every start is [`StartContext::run_start`]'s stages.

use servebench_spec::plan::Block;

use super::RunError;
use super::recorder::Recorder;
use super::start::{StartContext, StartEnd, StartTrials};

/// How a run of starts ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LoopEnd {
    /// The policy had no round left.
    Finished,
    /// The policy stopped it: no comparison was left to make.
    Stopped,
    /// Stopped by `cancel`.
    Cancelled,
}

/// What a start measures, once begun: its block (index, variant, planned trials) and its
/// trials' policy.
pub(super) type Begun<'a> = (Block, Box<dyn StartTrials + 'a>);

/// Which starts a run makes (module docs).
pub(super) trait Policy<'a> {
    /// The next round's starts (a block each: a planned one, or a variant's placeholder),
    /// or `None` when the policy is done.
    fn round(
        &mut self,
        ctx: &StartContext<'a>,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<Vec<Block>>, RunError>;

    /// Whether the run stops before its next start (no comparison left to make).
    fn stops(&self, _ctx: &StartContext<'a>) -> bool {
        false
    }

    /// Begins the start `ask`: its block and trials, or `None` when it has nothing to
    /// measure (its trials recorded, its variant refused: what that leaves is recorded).
    fn begin(
        &mut self,
        ask: Block,
        ctx: &StartContext<'a>,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<Begun<'a>>, RunError>;

    /// The start of `block` measured nothing, for `reason` (said once already).
    fn refused(
        &mut self,
        block: &Block,
        reason: &str,
        rec: &mut Recorder<'_>,
    ) -> Result<(), RunError>;

    /// After a round: its look; whether the policy is done.
    fn look(&mut self, rec: &mut Recorder<'_>) -> Result<bool, RunError>;
}

/// Runs `policy`'s starts, round after round, until it is done, stops, or the run is
/// cancelled.
pub(super) async fn run_starts<'a>(
    ctx: &mut StartContext<'a>,
    policy: &mut dyn Policy<'a>,
    rec: &mut Recorder<'_>,
) -> Result<LoopEnd, RunError> {
    loop {
        if ctx.cancelled() {
            return Ok(LoopEnd::Cancelled);
        }
        let Some(round) = policy.round(ctx, rec)? else {
            return Ok(LoopEnd::Finished);
        };
        for ask in round {
            if ctx.cancelled() {
                return Ok(LoopEnd::Cancelled);
            }
            if policy.stops(ctx) {
                return Ok(LoopEnd::Stopped);
            }
            let Some((block, mut trials)) = policy.begin(ask, ctx, rec)? else {
                continue;
            };
            let Some(variant) = ctx.variant(&block.variant) else {
                continue;
            };
            match ctx.run_start(&block, variant, trials.as_mut(), rec).await? {
                StartEnd::Measured => {}
                StartEnd::Cancelled => return Ok(LoopEnd::Cancelled),
                StartEnd::Refused(reason) => policy.refused(&block, &reason, rec)?,
            }
        }
        if policy.look(rec)? {
            return Ok(LoopEnd::Finished);
        }
    }
}
