//! A capacity search (`spec.search`; docs/search.md): rounds of interleaved server starts,
//! one per variant, each bisecting the load axis on its round's grid until a load that passed
//! lies next to one that failed; after every round a look (the [`SearchJudge`] — the binary
//! passes servebench-compare's) says each variant's capacity so far and whether to stop.
//!
//! The procedure is servebench-spec's (`search`): which load next is a function of the
//! outcomes so far, and a round's grid of `workload.seed` and the round. So the search is a
//! function of what the result file records — the blocks' steps and the looks — and
//! `run --resume` continues it: finished rounds and starts are kept, a start cut short is
//! kept in the log without an outcome (its trials stay in the file) and its variant's start is
//! measured again from scratch on a new server, since a start's capacity is one server's.
//!
//! A trial is judged by its attainment (the share of its requests that met every SLO) against
//! `search.attainment`. A trial that failed, or on the rate axis whose client fell behind its
//! schedule (`rate_held_fraction` below 0.98), cannot be judged: the start ends there as
//! invalid, and gives no estimate.

use servebench_result::{
    PointInfo, RunResult, SearchBlock, SearchLog, SearchOutcome, SearchStep, TrialResult,
};
use servebench_spec::plan::{
    Block, PlannedTrial, SweepPoint, prompt_seed, round_blocks, search_point,
};
use servebench_spec::search::{
    Grid, Next, max_grid_len, next_step, trial_budget, worst_case_trials,
};
use servebench_spec::{Search, SpecFile, TokenCount};

mod judge;

use super::recorder::Recorder;
use super::start::{StartContext, StartTrials, Step};
use super::starts::{Begun, Policy};
use super::{RunError, SearchJudge};
use judge::{bracket_outcome, describe, judge_trial, outcome_words};

/// The least achieved share of the scheduled rate for a rate-axis trial to count (the
/// `invalid-trial` rule's 98%, docs/statistics-method.md).
pub const MIN_RATE_HELD: f64 = 0.98;

/// Prompts of step `s` of round `r` are the source's trial `r·STEP_KEY + s`, point 0: paired
/// across the variants of a round, different across steps and rounds.
const STEP_KEY: u32 = 1000;

/// A capacity search as the run's policy (module docs): rounds of one start per variant
/// still open, each start a [`Bisection`], a look after each round.
pub(super) struct SearchStarts<'p> {
    judge: &'p dyn SearchJudge,
    q: Search,
    /// The round under way, and whether it had no variant left.
    round: u32,
    no_variant_left: bool,
    /// The search log's entry of the start under way.
    log_index: usize,
}

impl<'p> SearchStarts<'p> {
    pub(super) fn new(judge: &'p dyn SearchJudge, q: Search) -> Self {
        Self {
            judge,
            q,
            round: 0,
            no_variant_left: false,
            log_index: 0,
        }
    }

    /// Stops the search when a variant of `round` cannot afford a whole start's search
    /// within the trial budget; whether it did.
    fn over_budget(
        &self,
        round: u32,
        todo: &[String],
        rec: &mut Recorder<'_>,
    ) -> Result<bool, RunError> {
        let budget = trial_budget(&self.q);
        let need = worst_case_trials(max_grid_len(&self.q), round > 1);
        let log = rec.result().search.clone().unwrap_or_default();
        let Some(v) = todo.iter().find(|v| {
            let started = log
                .blocks
                .iter()
                .any(|b| b.round == round && b.variant == **v);
            !started && trials_of(rec.result(), v) + u64::from(need) > budget
        }) else {
            return Ok(false);
        };
        let why = format!(
            "trial budget spent: `{v}` has measured {} of its {budget} trials, and a start \
             may take {need}",
            trials_of(rec.result(), v)
        );
        rec.reporter().line(&format!("search: {why}"));
        rec.update(|r| {
            if let Some(log) = r.search.as_mut() {
                log.stopped = Some(why);
            }
        })?;
        Ok(true)
    }
}

impl<'a> Policy<'a> for SearchStarts<'_> {
    /// The variants of the next round (placeholder blocks; a start's block is made when it
    /// begins, after every block recorded), unless the search stopped or its budget is spent.
    fn round(
        &mut self,
        ctx: &StartContext<'a>,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<Vec<Block>>, RunError> {
        let log = rec.keep(|r| r.search.get_or_insert_with(SearchLog::default).clone());
        if log.stopped.is_some() {
            return Ok(None);
        }
        let round = log.looks.last().map_or(1, |l| l.after_round + 1);
        let todo = round_variants(ctx.spec(), &log, round);
        if self.over_budget(round, &todo, rec)? {
            return Ok(None);
        }
        rec.reporter().line(&format!(
            "search round {round}: {}",
            if todo.is_empty() {
                "no variant left".to_owned()
            } else {
                todo.join(", ")
            }
        ));
        (self.round, self.no_variant_left) = (round, todo.is_empty());
        let ask = |variant: String| Block {
            index: 0,
            variant,
            server_start: false,
            trials: Vec::new(),
        };
        Ok(Some(todo.into_iter().map(ask).collect()))
    }

    /// The variant's start of this round, bisecting its grid from its last estimate (after
    /// round 1), logged before it starts; none when it has its outcome already (resumed),
    /// and an invalid one, unstarted, when its variant was refused.
    fn begin(
        &mut self,
        ask: Block,
        ctx: &StartContext<'a>,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<Begun<'a>>, RunError> {
        let (round, v) = (self.round, ask.variant.as_str());
        let log = rec.result().search.as_ref();
        if log.is_some_and(|l| {
            l.blocks
                .iter()
                .any(|b| b.round == round && b.variant == v && b.outcome.is_some())
        }) {
            return Ok(None);
        }
        let estimate = (round > 1)
            .then(|| log.and_then(|l| l.last_estimate(v)))
            .flatten();
        let bisection = Bisection::new(ctx.spec(), &self.q, (round, v), estimate, rec);
        let block = bisection.block(ctx.spec());
        self.log_index = rec.update(|r| bisection.log(r))?;
        let refused = match ctx.refused(v) {
            Some(reason) => Some(reason.to_owned()),
            None => ctx
                .variant(v)
                .is_none()
                .then(|| "variant missing from the spec".to_owned()),
        };
        if let Some(reason) = refused {
            self.refused(&block, &reason, rec)?;
            return Ok(None);
        }
        Ok(Some((block, Box::new(bisection))))
    }

    /// The start ends without an estimate.
    fn refused(&mut self, _: &Block, reason: &str, rec: &mut Recorder<'_>) -> Result<(), RunError> {
        let reason = reason.to_owned();
        let log_index = self.log_index;
        rec.update(|r| set_outcome(r, log_index, SearchOutcome::Invalid { reason }))?;
        Ok(())
    }

    /// The judge's look at the round: each variant's capacity so far, and whether to stop.
    fn look(&mut self, rec: &mut Recorder<'_>) -> Result<bool, RunError> {
        let round = self.round;
        let look = self.judge.look(rec.result(), round);
        rec.reporter().line(&format!(
            "look after round {round}: {}",
            describe(&look, &self.q)
        ));
        let stop = look.stop || self.no_variant_left;
        rec.update(|r| {
            let why = look.why.clone();
            let log = r.search.get_or_insert_with(SearchLog::default);
            log.looks.push(look);
            if stop {
                log.stopped = Some(why);
            }
        })?;
        Ok(stop)
    }
}

/// Trials measured for `variant` so far.
fn trials_of(result: &RunResult, variant: &str) -> u64 {
    result
        .trials
        .iter()
        .filter(|t| t.variant == variant)
        .count() as u64
}

/// The variants of round `round`, in the spec's order rules: every variant not settled at
/// the last look, and the baseline while some candidate is not settled (the ratio needs it),
/// unless its own capacity is at a bound. Round 1: every variant.
fn round_variants(spec: &SpecFile, log: &SearchLog, round: u32) -> Vec<String> {
    let variants = &spec.spec.variants;
    let names: Vec<String> = match log.looks.last() {
        None => variants.iter().map(|v| v.name.clone()).collect(),
        Some(look) => {
            let settled = |name: &str| {
                look.variants
                    .iter()
                    .find(|c| c.variant == name)
                    .is_some_and(|c| c.settled)
            };
            let at_bound = |name: &str| {
                look.variants
                    .iter()
                    .find(|c| c.variant == name)
                    .is_some_and(|c| c.below_lower + c.above_upper > 0)
            };
            let any_candidate_open = variants.iter().any(|v| !v.baseline && !settled(&v.name));
            variants
                .iter()
                .filter(|v| {
                    !settled(&v.name) || (v.baseline && any_candidate_open && !at_bound(&v.name))
                })
                .map(|v| v.name.clone())
                .collect()
        }
    };
    // The spec's order rules (interleaved, or shuffled per round with `order: random`).
    let todo: Vec<(String, Vec<usize>)> = names.iter().map(|n| (n.clone(), vec![0])).collect();
    round_blocks(spec, round, &todo, 0, 0)
        .into_iter()
        .map(|b| b.variant)
        .collect()
}

/// The index of the point at `load` in `result.points`, added if new.
fn point_index(result: &mut RunResult, point: &SweepPoint) -> usize {
    let label = point.to_string();
    if let Some(p) = result.points.iter().find(|p| p.label == label) {
        return p.index;
    }
    let fixed = |t: Option<TokenCount>| match t {
        Some(TokenCount::Fixed(n)) => Some(n),
        _ => None,
    };
    let index = result.points.len();
    result.points.push(PointInfo {
        index,
        label,
        max_concurrency: point.max_concurrency,
        request_rate: match point.request_rate {
            servebench_spec::Rate::Inf => None,
            servebench_spec::Rate::PerSecond(r) => Some(r),
        },
        input_tokens: fixed(point.input_tokens),
        output_tokens: fixed(point.output_tokens),
        requests: point.requests,
    });
    index
}

/// The outcome of the search log's start `log_index`.
fn set_outcome(result: &mut RunResult, log_index: usize, o: SearchOutcome) {
    if let Some(b) = result
        .search
        .as_mut()
        .and_then(|l| l.blocks.get_mut(log_index))
    {
        b.outcome = Some(o);
    }
}

/// A start's bisection of its round's grid (the start's policy): the next load from the
/// outcomes so far (`search::next_step`), each trial judged and logged as a step, until a
/// load that passed lies next to one that failed, or a trial cannot be judged.
struct Bisection<'s> {
    spec: &'s SpecFile,
    q: Search,
    /// The point the start's prompts are drawn at (its kernel probe's too).
    first: [SweepPoint; 1],
    grid: Grid,
    start: Option<usize>,
    round: u32,
    variant: String,
    block_index: usize,
    log_index: usize,
    /// The trial being measured: its seq, point index, grid index, load and why.
    measuring: Option<(usize, usize, usize, f64, &'static str)>,
    /// Why the start ends without an estimate (a trial that cannot be judged).
    invalid: Option<String>,
}

impl<'s> Bisection<'s> {
    /// The start of `variant` in `round`, from the grid point nearest `estimate`; its block
    /// after every block recorded, its log entry after every entry.
    fn new(
        spec: &'s SpecFile,
        q: &Search,
        (round, variant): (u32, &str),
        estimate: Option<f64>,
        rec: &Recorder<'_>,
    ) -> Self {
        let grid = Grid::for_round(spec, q, round);
        Self {
            spec,
            q: q.clone(),
            first: [search_point(spec, q, q.lower)],
            start: estimate.map(|e| grid.nearest(e)),
            grid,
            round,
            variant: variant.to_owned(),
            block_index: next_block_index(rec.result()),
            log_index: rec.result().search.as_ref().map_or(0, |l| l.blocks.len()),
            measuring: None,
            invalid: None,
        }
    }

    /// Its block: a placeholder trial of repetition `round` (SERVEBENCH_REPETITION).
    fn block(&self, spec: &SpecFile) -> Block {
        Block {
            index: self.block_index,
            variant: self.variant.clone(),
            server_start: spec.spec.server.is_some(),
            trials: vec![PlannedTrial {
                seq: 0,
                variant: self.variant.clone(),
                trial: self.round,
                point: 0,
                repeat: 1,
                prompt_seed: 0,
            }],
        }
    }

    /// Its entry in the search log, without steps or outcome yet; the entry's index.
    fn log(&self, result: &mut RunResult) -> usize {
        let log = result.search.get_or_insert_with(SearchLog::default);
        log.blocks.push(SearchBlock {
            round: self.round,
            variant: self.variant.clone(),
            block: self.block_index,
            offset: self.grid.offset,
            grid_points: self.grid.loads.len(),
            start: self.start.map(|i| self.grid.loads[i]),
            steps: Vec::new(),
            outcome: None,
        });
        log.blocks.len() - 1
    }

    fn steps(&self, result: &RunResult) -> Vec<SearchStep> {
        result
            .search
            .as_ref()
            .and_then(|l| l.blocks.get(self.log_index))
            .map(|b| b.steps.clone())
            .unwrap_or_default()
    }

    /// The start's outcome, said and recorded.
    fn conclude(&self, o: SearchOutcome, rec: &mut Recorder<'_>) -> Result<(), RunError> {
        rec.reporter().line(&format!(
            "block {} ({}, round {}): {}",
            self.block_index + 1,
            self.variant,
            self.round,
            outcome_words(&o, &self.q)
        ));
        rec.update(|r| set_outcome(r, self.log_index, o))?;
        Ok(())
    }
}

impl StartTrials for Bisection<'_> {
    fn points(&self) -> &[SweepPoint] {
        &self.first
    }

    fn next(&mut self, rec: &mut Recorder<'_>) -> Result<Option<Step>, RunError> {
        if let Some(reason) = self.invalid.take() {
            self.conclude(SearchOutcome::Invalid { reason }, rec)?;
            return Ok(None);
        }
        let steps = self.steps(rec.result());
        let outcomes: Vec<(usize, bool)> = steps
            .iter()
            .filter_map(|s| s.passed.map(|p| (s.index, p)))
            .collect();
        let (gi, why) = match next_step(self.grid.loads.len(), self.start, &outcomes) {
            Next::Done(b) => {
                self.conclude(bracket_outcome(&self.grid, b, &steps), rec)?;
                return Ok(None);
            }
            Next::Measure { index, why } => (index, why),
        };
        let load = self.grid.loads[gi];
        let point = search_point(self.spec, &self.q, load);
        let pidx = rec.keep(|r| point_index(r, &point));
        let seq = next_seq(rec.result());
        let key = (self.round.saturating_mul(STEP_KEY)).saturating_add(steps.len() as u32);
        rec.reporter_mut().add_planned(1);
        self.measuring = Some((seq, pidx, gi, load, why.as_str()));
        Ok(Some(Step {
            trial: PlannedTrial {
                seq,
                variant: self.variant.clone(),
                trial: self.round,
                point: pidx,
                repeat: 1,
                prompt_seed: prompt_seed(self.spec.spec.workload.seed, key, 0),
            },
            point,
            prompts: (key, 0),
        }))
    }

    fn measured(&mut self, trial: &TrialResult, result: &mut RunResult) {
        let Some((seq, point, index, load, why)) = self.measuring.take() else {
            return;
        };
        let (attainment, passed, invalid) = judge_trial(trial, &self.q);
        if let Some(b) = result
            .search
            .as_mut()
            .and_then(|l| l.blocks.get_mut(self.log_index))
        {
            b.steps.push(SearchStep {
                seq,
                point,
                index,
                load,
                why: why.to_owned(),
                attainment,
                passed,
                invalid: invalid.clone(),
            });
        }
        self.invalid = invalid.map(|reason| format!("at {load} {}: {reason}", self.q.axis.unit()));
    }
}

/// The next block index: after every block recorded (servers, trials, search log).
fn next_block_index(result: &RunResult) -> usize {
    let from_trials = result.trials.iter().map(|t| t.block + 1).max().unwrap_or(0);
    let from_servers = result
        .servers
        .iter()
        .map(|s| s.block + 1)
        .max()
        .unwrap_or(0);
    let from_log = result
        .search
        .as_ref()
        .and_then(|l| l.blocks.iter().map(|b| b.block + 1).max())
        .unwrap_or(0);
    from_trials.max(from_servers).max(from_log)
}

/// The next trial seq: after every trial recorded.
fn next_seq(result: &RunResult) -> usize {
    result.trials.iter().map(|t| t.seq + 1).max().unwrap_or(0)
}
