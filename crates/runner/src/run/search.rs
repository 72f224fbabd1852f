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
    PointInfo, ResultStore, RunResult, SearchBlock, SearchLog, SearchOutcome, SearchStep,
    TrialStatus, now_rfc3339,
};
use servebench_spec::plan::{
    Block, PlannedTrial, SweepPoint, prompt_seed, round_blocks, search_point,
};
use servebench_spec::search::{
    Grid, Next, max_grid_len, next_step, trial_budget, worst_case_trials,
};
use servebench_spec::{Search, SpecFile, TokenCount};

mod judge;

use super::block::{BlockContext, Opening, exited_soon_after, failed, sleep_unless_cancelled};
use super::progress::Progress;
use super::workload::PromptSource;
use super::{RunError, SearchJudge};
use judge::{bracket_outcome, describe, judge_trial, outcome_words};

/// The least achieved share of the scheduled rate for a rate-axis trial to count (the
/// `invalid-trial` rule's 98%, docs/statistics-method.md).
pub const MIN_RATE_HELD: f64 = 0.98;

/// Prompts of step `s` of round `r` are the source's trial `r·STEP_KEY + s`, point 0: paired
/// across the variants of a round, different across steps and rounds.
const STEP_KEY: u32 = 1000;

/// How the search ended.
pub(super) enum SearchEnd {
    /// The judge stopped it, or the budget was spent.
    Finished,
    /// Stopped by `cancel`.
    Cancelled,
}

/// Run (or continue) the search of `spec` (module docs).
pub(super) async fn run_search(
    ctx: &mut BlockContext<'_>,
    spec: &SpecFile,
    judge: &dyn SearchJudge,
    result: &mut RunResult,
    store: &ResultStore,
    ui: &mut Progress,
) -> Result<SearchEnd, RunError> {
    let Some(q) = spec.spec.search.clone() else {
        return Ok(SearchEnd::Finished);
    };
    let log = result.search.get_or_insert_with(SearchLog::default);
    if log.stopped.is_some() {
        return Ok(SearchEnd::Finished);
    }
    let budget = trial_budget(&q);
    let len = max_grid_len(&q);
    loop {
        if ctx.cancelled() {
            return Ok(SearchEnd::Cancelled);
        }
        let log = result.search.get_or_insert_with(SearchLog::default).clone();
        let round = log.looks.last().map_or(1, |l| l.after_round + 1);
        let todo = round_variants(spec, &log, round);
        // The trial budget: a round starts only if every variant in it can afford a whole
        // start's search.
        let need = worst_case_trials(len, round > 1);
        if let Some(v) = todo.iter().find(|v| {
            let started = log
                .blocks
                .iter()
                .any(|b| b.round == round && b.variant == **v);
            !started && trials_of(result, v) + u64::from(need) > budget
        }) {
            let why = format!(
                "trial budget spent: `{v}` has measured {} of its {budget} trials, and a start \
                 may take {need}",
                trials_of(result, v)
            );
            ui.line(&format!("search: {why}"));
            if let Some(log) = result.search.as_mut() {
                log.stopped = Some(why);
            }
            store.save(result)?;
            return Ok(SearchEnd::Finished);
        }
        ui.line(&format!(
            "search round {round}: {}",
            if todo.is_empty() {
                "no variant left".to_owned()
            } else {
                todo.join(", ")
            }
        ));
        for v in &todo {
            if ctx.cancelled() {
                return Ok(SearchEnd::Cancelled);
            }
            let done = result.search.as_ref().is_some_and(|l| {
                l.blocks
                    .iter()
                    .any(|b| b.round == round && b.variant == *v && b.outcome.is_some())
            });
            if done {
                continue;
            }
            let start = (round > 1)
                .then(|| result.search.as_ref().and_then(|l| l.last_estimate(v)))
                .flatten();
            if !search_block(ctx, spec, &q, round, v, start, result, store, ui).await? {
                return Ok(SearchEnd::Cancelled);
            }
        }
        let look = judge.look(result, round);
        ui.line(&format!(
            "look after round {round}: {}",
            describe(&look, &q)
        ));
        let stop = look.stop || todo.is_empty();
        let why = look.why.clone();
        let log = result.search.get_or_insert_with(SearchLog::default);
        log.looks.push(look);
        if stop {
            log.stopped = Some(why);
        }
        result.updated_at = now_rfc3339();
        store.save(result)?;
        if stop {
            return Ok(SearchEnd::Finished);
        }
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

/// One server start of `variant` in round `round`: start, bisect, stop. `false` when
/// cancelled (the block stays in the log without an outcome).
#[allow(clippy::too_many_arguments)]
async fn search_block(
    ctx: &mut BlockContext<'_>,
    spec: &SpecFile,
    q: &Search,
    round: u32,
    variant_name: &str,
    estimate: Option<f64>,
    result: &mut RunResult,
    store: &ResultStore,
    ui: &mut Progress,
) -> Result<bool, RunError> {
    let grid = Grid::for_round(spec, q, round);
    let start = estimate.map(|e| grid.nearest(e));
    let index = next_block_index(result);
    // A block with a placeholder trial of repetition `round` (SERVEBENCH_REPETITION).
    let block = Block {
        index,
        variant: variant_name.to_owned(),
        server_start: spec.spec.server.is_some(),
        trials: vec![PlannedTrial {
            seq: 0,
            variant: variant_name.to_owned(),
            trial: round,
            point: 0,
            repeat: 1,
            prompt_seed: 0,
        }],
    };
    let log_index = {
        let log = result.search.get_or_insert_with(SearchLog::default);
        log.blocks.push(SearchBlock {
            round,
            variant: variant_name.to_owned(),
            block: index,
            offset: grid.offset,
            grid_points: grid.loads.len(),
            start: start.map(|i| grid.loads[i]),
            steps: Vec::new(),
            outcome: None,
        });
        log.blocks.len() - 1
    };
    result.updated_at = now_rfc3339();
    store.save(result)?;
    let set_outcome = |result: &mut RunResult, o: SearchOutcome| {
        if let Some(b) = result
            .search
            .as_mut()
            .and_then(|l| l.blocks.get_mut(log_index))
        {
            b.outcome = Some(o);
        }
    };
    if let Some(reason) = ctx.refused(variant_name).map(str::to_owned) {
        set_outcome(result, SearchOutcome::Invalid { reason });
        store.save(result)?;
        return Ok(true);
    }
    let Some(variant) = ctx.variant(variant_name) else {
        set_outcome(
            result,
            SearchOutcome::Invalid {
                reason: "variant missing from the spec".into(),
            },
        );
        store.save(result)?;
        return Ok(true);
    };
    let (mut running, target) = match ctx.open(&block, variant, result, ui).await {
        Ok(o) => o,
        Err(Opening::Cancelled) => return Ok(false),
        Err(Opening::Failed(reason)) => {
            set_outcome(result, SearchOutcome::Invalid { reason });
            store.save(result)?;
            return Ok(true);
        }
    };
    let cooldown = spec.spec.trials.cooldown.get();
    sleep_unless_cancelled(cooldown, ctx).await;
    let first = search_point(spec, q, q.lower);
    let tok = ctx.tokenizer_spec();
    let mut source = PromptSource::new(spec, std::slice::from_ref(&first), &tok, ctx.spec_dir());
    let mut cancelled = false;
    let outcome = loop {
        if ctx.cancelled() {
            cancelled = true;
            break None;
        }
        let steps = &result
            .search
            .as_ref()
            .map(|l| l.blocks[log_index].steps.clone());
        let steps = steps.clone().unwrap_or_default();
        let outcomes: Vec<(usize, bool)> = steps
            .iter()
            .filter_map(|s| s.passed.map(|p| (s.index, p)))
            .collect();
        let (gi, why) = match next_step(grid.loads.len(), start, &outcomes) {
            Next::Done(b) => break Some(bracket_outcome(&grid, b, &steps)),
            Next::Measure { index, why } => (index, why),
        };
        if !steps.is_empty() && !cooldown.is_zero() {
            sleep_unless_cancelled(cooldown, ctx).await;
        }
        let load = grid.loads[gi];
        let point = search_point(spec, q, load);
        let pidx = point_index(result, &point);
        let seq = next_seq(result);
        let step_no = steps.len() as u32;
        let key = round.saturating_mul(STEP_KEY).saturating_add(step_no);
        let t = PlannedTrial {
            seq,
            variant: variant_name.to_owned(),
            trial: round,
            point: pidx,
            repeat: 1,
            prompt_seed: prompt_seed(spec.spec.workload.seed, key, 0),
        };
        ui.add_planned(1);
        ui.trial_start(&t, &point.to_string());
        let (mut trial, lines) = match &mut source {
            Err(e) => (failed(&t, &block, &format!("prompts: {e}")), Vec::new()),
            Ok(src) => match ctx
                .measure_with_prompts(&t, &block, &point, (key, 0), src, &target, ui.trial_bar())
                .await
            {
                Some(m) => m,
                None => {
                    cancelled = true;
                    break None;
                }
            },
        };
        if let Some(s) = running.as_mut()
            && let Some(status) = exited_soon_after(s, &trial).await
        {
            trial.status = TrialStatus::Failed;
            trial.failure = Some(format!(
                "the server exited during the trial ({status}); see its log {}",
                s.log_path().display()
            ));
        }
        ui.trial_end(&trial);
        let (attainment, passed, invalid) = judge_trial(&trial, q);
        if let Err(e) = ctx.record(result, trial, &lines) {
            return Err(ctx.stop_after_error(running, &block, result, ui, e).await);
        }
        if let Some(b) = result
            .search
            .as_mut()
            .and_then(|l| l.blocks.get_mut(log_index))
        {
            b.steps.push(SearchStep {
                seq,
                point: pidx,
                index: gi,
                load,
                why: why.as_str().to_owned(),
                attainment,
                passed,
                invalid: invalid.clone(),
            });
        }
        if let Err(e) = store.save(result) {
            return Err(ctx
                .stop_after_error(running, &block, result, ui, e.into())
                .await);
        }
        if let Some(reason) = invalid {
            break Some(SearchOutcome::Invalid {
                reason: format!("at {load} {}: {reason}", q.axis.unit()),
            });
        }
    };
    if let Some(o) = outcome {
        ui.line(&format!(
            "block {} ({variant_name}, round {round}): {}",
            index + 1,
            outcome_words(&o, q)
        ));
        set_outcome(result, o);
    }
    result.updated_at = now_rfc3339();
    if let Err(e) = store.save(result) {
        return Err(ctx
            .stop_after_error(running, &block, result, ui, e.into())
            .await);
    }
    ctx.close(running, &block, result, ui).await?;
    Ok(!cancelled)
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
