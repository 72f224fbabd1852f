//! Sequential trials (`trials.until_decided`): after the plan's blocks — the first stage —
//! a look at every cell (candidate × point) on its repeated confidence interval, then rounds
//! of interleaved blocks holding only the points still undecided, each followed by a look,
//! until every cell has stopped or the budget is spent (the [`Sequencer`] decides — the binary
//! passes servebench-compare's design; docs/statistics-method.md, "Sequential trials").
//!
//! Round `t` (a repetition index after `trials.count`) is one block per variant, in the
//! plan's order rules (`plan::round_blocks`): a candidate's block holds its open points, the
//! baseline's every point some candidate still needs. Rounds are a function of the looks
//! recorded in the result, so `run --resume` regenerates them exactly, skips the trials
//! already measured, and continues the sequence.

use servebench_spec::SpecFile;
use servebench_spec::plan::{Block, Plan, SequentialPlan, round_blocks};

use super::recorder::Recorder;
use super::{RunError, Sequencer};
use servebench_result::{LookRecord, RunResult, cell_is_open};

/// Where a sequential design's rounds stand: the last repetition `t` measured, the next
/// block index and trial seq.
pub(super) struct Rounds<'p> {
    plan: &'p SequentialPlan,
    sequencer: &'p dyn Sequencer,
    spec: SpecFile,
    arms: Arms,
    t: u32,
    index: usize,
    next_seq: usize,
}

impl<'p> Rounds<'p> {
    /// The rounds after `plan`'s first stage.
    pub(super) fn after(
        plan: &'p Plan,
        sequential: &'p SequentialPlan,
        sequencer: &'p dyn Sequencer,
        spec: &SpecFile,
    ) -> Self {
        Self {
            plan: sequential,
            sequencer,
            spec: spec.clone(),
            arms: Arms::of(spec),
            t: sequential.first_stage,
            index: plan.blocks.len(),
            next_seq: plan.trial_count,
        }
    }

    /// The look after repetition `t` (unless the result holds it already), then the next
    /// round's blocks: `None` when every cell stopped or the budget is spent.
    pub(super) fn next_round(
        &mut self,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<Vec<Block>>, RunError> {
        let t = self.t;
        if !rec.result().looks.iter().any(|l| l.after_trial == t) {
            let look = self.sequencer.look(rec.result(), t);
            rec.update(|r| r.looks.push(look))?;
            if let Some(look) = rec.result().looks.last() {
                rec.reporter()
                    .line(&describe(look, &self.arms, rec.result()));
            }
        }
        let todo = open_points(&self.arms, rec.result());
        if t >= self.plan.max_trials || todo.iter().all(|(_, p)| p.is_empty()) {
            return Ok(None);
        }
        self.t += 1;
        let blocks = round_blocks(&self.spec, self.t, &todo, self.index, self.next_seq);
        let trials: usize = blocks.iter().map(|b| b.trials.len()).sum();
        self.index += blocks.len();
        self.next_seq += trials;
        rec.reporter_mut().add_planned(trials);
        rec.reporter().line(&format!(
            "round t={}: {} block(s), {trials} trial(s) for the undecided cells",
            self.t,
            blocks.len()
        ));
        Ok(Some(blocks))
    }
}

/// The spec's baseline variant and its candidates (every other variant, in spec order): the
/// cells of a sequential run are candidate × point.
struct Arms {
    baseline: String,
    candidates: Vec<String>,
}

impl Arms {
    fn of(spec: &SpecFile) -> Self {
        let variants = &spec.spec.variants;
        let baseline = variants
            .iter()
            .find(|v| v.baseline)
            .map(|v| v.name.clone())
            .unwrap_or_default();
        Arms {
            candidates: variants
                .iter()
                .filter(|v| v.name != baseline)
                .map(|v| v.name.clone())
                .collect(),
            baseline,
        }
    }
}

/// The points each variant measures in the next round: a candidate's open cells, and for
/// the baseline every point where some candidate is open.
fn open_points(arms: &Arms, result: &RunResult) -> Vec<(String, Vec<usize>)> {
    let points = result.points.len();
    let mut todo: Vec<(String, Vec<usize>)> = arms
        .candidates
        .iter()
        .map(|v| {
            let open = (0..points)
                .filter(|p| cell_is_open(&result.looks, v, *p))
                .collect();
            (v.clone(), open)
        })
        .collect();
    let mut base: Vec<usize> = todo.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    base.sort_unstable();
    base.dedup();
    todo.push((arms.baseline.clone(), base));
    todo
}

/// One progress line for a look: how many cells stopped, and what is still undecided.
fn describe(look: &LookRecord, arms: &Arms, result: &RunResult) -> String {
    let label = |p: usize| {
        result
            .points
            .get(p)
            .map_or_else(|| format!("[{p}]"), |i| i.label.clone())
    };
    let stopped = look.cells.iter().filter(|c| c.stopped.is_some()).count();
    let mut open: Vec<String> = Vec::new();
    for c in look.cells.iter().filter(|c| c.stopped.is_none()) {
        let why: Vec<String> = c
            .metrics
            .iter()
            .filter(|m| {
                m.required && !matches!(m.verdict.as_str(), "improved" | "regressed" | "equivalent")
            })
            .map(|m| format!("{} {}", m.metric, m.verdict))
            .collect();
        open.push(format!(
            "{} {} ({})",
            c.variant,
            label(c.point),
            why.join(", ")
        ));
    }
    let left = arms
        .candidates
        .iter()
        .map(|v| {
            (0..result.points.len())
                .filter(|p| cell_is_open(&result.looks, v, *p))
                .count()
        })
        .sum::<usize>();
    if open.is_empty() && left == 0 {
        format!(
            "look after t={}: {} cell(s) looked at, every cell decided or at its budget",
            look.after_trial,
            look.cells.len()
        )
    } else {
        format!(
            "look after t={}: {stopped} of {} cell(s) stopped; still undecided: {}",
            look.after_trial,
            look.cells.len(),
            if open.is_empty() {
                format!("{left} cell(s) without new trials")
            } else {
                open.join("; ")
            }
        )
    }
}
