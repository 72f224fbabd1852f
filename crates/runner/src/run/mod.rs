//! `servebench run`: carry a spec out — server starts, verify, trials in plan order — and
//! write the result after every trial.
//!
//! The order is exactly `servebench plan`'s. A block is one server start of one variant;
//! trials already in the result file (on `--resume`) are skipped; a block whose trials are
//! all done starts no server.

mod cluster;
mod inputs;
mod planned;
mod progress;
mod recorder;
mod rounds;
mod search;
mod setup;
mod start;
mod starts;
mod upfront;
mod workload;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use cluster::BATCH_SCRIPT_ENV;
pub use inputs::{InputProblem, check_inputs, input_files};
pub use progress::ProgressMode;
pub use upfront::unset_env;
pub use workload::{api_kind, load_config};

use servebench_spec::Spec;
use servebench_spec::plan::{Plan, plan};

use servebench_result::{
    LookRecord, ResultStore, RunResult, RunStatus, SearchLook, StoreError, ToolInfo,
};

pub use search::MIN_RATE_HELD;
use starts::LoopEnd;

/// Decides, in a sequential run (`trials.until_decided`), which cells stay open: after the
/// first stage and after every round the runner records a look from it and measures only the
/// cells still open (`servebench_result::cell_is_open` reads them from the looks). The runner
/// measures and does not judge: the `servebench` binary passes servebench-compare's
/// group-sequential design.
pub trait Sequencer: Send + Sync + std::fmt::Debug {
    /// The look after repetition `after_trial`: every open cell with new trials since its last
    /// look, examined on `result`'s trials so far, each marked stopped or not.
    fn look(&self, result: &RunResult, after_trial: u32) -> LookRecord;
}

/// Judges a capacity search (`spec.search`) after each round: every variant's capacity so
/// far, with its interval, and whether the search stops. The runner measures and does not
/// judge: the `servebench` binary passes servebench-compare's (docs/search.md).
pub trait SearchJudge: Send + Sync + std::fmt::Debug {
    /// The look after round `after_round`, on `result`'s search log and trials so far.
    fn look(&self, result: &RunResult, after_round: u32) -> SearchLook;
}

/// How a run is carried out.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Results go to `<results_root>/<spec name>/<run id>.json`.
    pub results_root: PathBuf,
    /// Path of the running servebench binary (`${servebench}`).
    pub servebench_bin: String,
    /// Version and build of the running servebench.
    pub tool: ToolInfo,
    /// Continue this result file instead of starting a new run.
    pub resume: Option<PathBuf>,
    /// Bars, plain lines or nothing.
    pub progress: ProgressMode,
    /// Set to stop the run (Ctrl-C): the server group is stopped and the result marked
    /// interrupted.
    pub cancel: Arc<AtomicBool>,
    /// What decides after each round of a sequential run which cells stay open; required
    /// when the spec has `trials.until_decided`.
    pub sequencer: Option<Arc<dyn Sequencer>>,
    /// What judges a capacity search after each round; required when the spec has `search`.
    pub search_judge: Option<Arc<dyn SearchJudge>>,
}

/// Why a run could not be carried out (a trial's own failure is data, not an error).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The result file could not be written; the message says where the measured data is.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `--resume` on a result whose spec hash differs from the spec's.
    #[error(
        "cannot resume {path}: it was measured with spec hash {stored}, but the spec now hashes to {current}. \
         The spec changed since; start a new run instead (`servebench run SPEC`), or restore the spec as it was"
    )]
    SpecChanged {
        /// The result file.
        path: PathBuf,
        /// Hash in the result.
        stored: String,
        /// Hash of the spec given.
        current: String,
    },
    /// `--resume` on a result whose workload file changed since the run began.
    #[error(
        "cannot resume {path}: {file} changed since the run began (then {stored}, now \
         {current}); the trials measured so far read it as it was, and would be pooled with \
         trials of the new one. Restore the file, or start a new run (`servebench run SPEC`)",
        file = file.display()
    )]
    InputChanged {
        /// The result file.
        path: PathBuf,
        /// The workload file.
        file: PathBuf,
        /// Its hash when the run began.
        stored: String,
        /// Its hash now (or why it cannot be read).
        current: String,
    },
    /// Something the run needs is missing before anything starts.
    #[error("{0}")]
    Setup(String),
}

/// What a finished (or interrupted) run left.
#[derive(Debug)]
pub struct RunOutcome {
    /// The result file.
    pub result_path: PathBuf,
    /// Its content as last written.
    pub result: RunResult,
    /// Stopped by `cancel`.
    pub interrupted: bool,
}

/// For a spec that launches no server and sends to an `https://` base URL, a TLS handshake
/// before anything is written: a certificate that does not verify refuses the run. (A base
/// URL that needs a variant's variables is checked when its block opens.)
async fn tls_preflight(file: &servebench_spec::SpecFile, spec_dir: &Path) -> Result<(), RunError> {
    let target = &file.spec.target;
    let Some(raw) = target.base_url.as_deref() else {
        return Ok(());
    };
    if file.spec.server.is_some() {
        return Ok(());
    }
    let ctx = servebench_spec::substitute::Context {
        env: true,
        ..Default::default()
    };
    let Ok(url) = servebench_spec::substitute::resolve(raw, &ctx) else {
        return Ok(());
    };
    let ca_file = target
        .tls
        .as_ref()
        .and_then(|t| t.ca_file.as_ref())
        .map(|f| spec_dir.join(f));
    crate::tls::check(&url, ca_file.as_deref())
        .await
        .map_err(|e| RunError::Setup(e.to_string()))
}

/// Carry out `spec`. A `--resume` refused before anything starts (the spec or an input file
/// changed, a file that cannot be used) still stops the killed run's servers, saying so:
/// nothing else would, and they hold the accelerator.
pub async fn run(spec: &Spec, opts: &RunOptions) -> Result<RunOutcome, RunError> {
    let out = run_spec(spec, opts).await;
    if let (Err(e), Some(path)) = (&out, &opts.resume)
        && matches!(
            e,
            RunError::SpecChanged { .. } | RunError::InputChanged { .. } | RunError::Setup(_)
        )
        && let Ok(killed) = servebench_result::load_result(path)
    {
        setup::stop_orphans(&killed).await;
        cluster::stop_orphan_steps(&killed).await;
    }
    out
}

async fn run_spec(spec: &Spec, opts: &RunOptions) -> Result<RunOutcome, RunError> {
    let plan: Plan = plan(&spec.file);
    check_deciders(&plan, opts)?;
    let spec_dir = spec
        .path
        .as_deref()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    preflight(spec, &spec_dir).await?;
    let allocation = cluster::preflight(spec).await?;
    let (result, store, records_lost) = setup::open(spec, &plan, opts, &spec_dir)?;
    let _reserve = ReleaseReserve(&store);
    setup::stop_orphans(&result).await;
    cluster::stop_orphan_steps(&result).await;
    let ui = progress::Progress::new(opts.progress, &plan, &result);
    let mut rec = recorder::Recorder::new(result, &store, Box::new(ui));
    if let Some(a) = &allocation {
        rec.update(|r| cluster::record(r, spec, a))?;
    }
    announce(&rec, spec, &plan);
    let mut ctx = start::StartContext::new(spec, &plan, opts, &spec_dir)?;
    let first = planned::PlannedStarts::FirstStage(Some(&plan.blocks));
    let stopped = starts::run_starts(&mut ctx, &mut { first }, &mut rec).await? == LoopEnd::Stopped;
    let first_stage_left = plan.trial_count.saturating_sub(
        rec.result()
            .trials
            .iter()
            .filter(|t| t.seq < plan.trial_count)
            .count(),
    );
    let later_finished = if first_stage_left == 0 {
        run_later_stages(&mut ctx, &plan, opts, &mut rec).await?
    } else {
        run_search_only(&mut ctx, &plan, opts, &mut rec).await?;
        false
    };
    let interrupted = opts.cancel.load(Ordering::SeqCst);
    let verify = (!interrupted)
        .then(|| ctx.verify_summary(stopped, first_stage_left))
        .flatten();
    rec.update(|r| settle(r, interrupted, later_finished, verify, &records_lost))?;
    Ok(RunOutcome {
        result_path: store.result_path.clone(),
        result: rec.finish(),
        interrupted,
    })
}

/// Deletes the run's reserve of disk space when the run ends, however it ends but by a
/// kill (a killed run's resume uses it again); `store/reserve.rs` in servebench-result.
struct ReleaseReserve<'a>(&'a ResultStore);

impl Drop for ReleaseReserve<'_> {
    fn drop(&mut self) {
        self.0.release_reserve();
    }
}

/// A sequential design and a capacity search each need a decider from the caller.
fn check_deciders(plan: &Plan, opts: &RunOptions) -> Result<(), RunError> {
    if plan.sequential.is_some() && opts.sequencer.is_none() {
        return Err(RunError::Setup(
            "the spec has `trials.until_decided` (sequential trials), but no sequencer was \
             given to decide after each round which cells stay open: set `RunOptions::sequencer` \
             (`servebench run` passes servebench-compare's)"
                .into(),
        ));
    }
    if plan.search.is_some() && opts.search_judge.is_none() {
        return Err(RunError::Setup(
            "the spec has `search` (a capacity search), but no judge was given to read each \
             round: set `RunOptions::search_judge` (`servebench run` passes servebench-compare's)"
                .into(),
        ));
    }
    Ok(())
}

/// What is checked before anything starts: the environment, the input files, TLS and the
/// endpoints.
async fn preflight(spec: &Spec, spec_dir: &Path) -> Result<(), RunError> {
    upfront::check_env(&spec.file)?;
    let problems: Vec<String> = check_inputs(&spec.file, spec_dir)
        .iter()
        .filter(|p| p.is_error())
        .map(InputProblem::render)
        .collect();
    if !problems.is_empty() {
        return Err(RunError::Setup(format!(
            "the spec's input files cannot be used (nothing was started):\n{}",
            problems.join("\n")
        )));
    }
    tls_preflight(&spec.file, spec_dir).await?;
    let ca_file = spec
        .file
        .spec
        .target
        .tls
        .as_ref()
        .and_then(|t| t.ca_file.as_ref())
        .map(|f| spec_dir.join(f));
    upfront::check_endpoints(&spec.file, ca_file).await
}

/// The run's first lines: what it runs and where it writes, and which owned fields the
/// spec's request body takes over.
fn announce(rec: &recorder::Recorder<'_>, spec: &Spec, plan: &Plan) {
    let (ui, result, store) = (rec.reporter(), rec.result(), rec.store());
    ui.line(&format!(
        "run {} of {} ({} trials in {} blocks); result: {}",
        result.run_id,
        plan.name,
        plan.trial_count,
        plan.blocks.len(),
        store.result_path.display()
    ));
    let taken = &spec.file.spec.workload.request_body_takes_over;
    if !taken.is_empty() {
        ui.line(&format!(
            "request_body takes over {} (workload.request_body_takes_over): the requests carry \
             the spec's values, not servebench's",
            taken.join(", ")
        ));
    }
}

/// After the first stage: a sequential design's rounds, then a capacity search. Whether
/// both finished (or had nothing to do).
async fn run_later_stages<'a>(
    ctx: &mut start::StartContext<'a>,
    plan: &'a Plan,
    opts: &'a RunOptions,
    rec: &mut recorder::Recorder<'_>,
) -> Result<bool, RunError> {
    let mut rounds_finished = true;
    if let (Some(sequencer), Some(sequential)) = (opts.sequencer.as_deref(), &plan.sequential)
        && !opts.cancel.load(Ordering::SeqCst)
    {
        let spec = rec.result().spec.clone();
        let rounds = rounds::Rounds::after(plan, sequential, sequencer, &spec);
        let mut policy = planned::PlannedStarts::Rounds(Box::new(rounds));
        rounds_finished = starts::run_starts(ctx, &mut policy, rec).await? == LoopEnd::Finished;
    }
    let search_finished = run_search_only(ctx, plan, opts, rec).await?;
    Ok(rounds_finished && search_finished)
}

/// A capacity search, where the spec has one; whether it finished (or had nothing to do).
async fn run_search_only<'a>(
    ctx: &mut start::StartContext<'a>,
    plan: &Plan,
    opts: &'a RunOptions,
    rec: &mut recorder::Recorder<'_>,
) -> Result<bool, RunError> {
    let (Some(judge), Some(q)) = (opts.search_judge.as_deref(), &ctx.spec().spec.search) else {
        return Ok(true);
    };
    if plan.search.is_none() || opts.cancel.load(Ordering::SeqCst) {
        return Ok(true);
    }
    let mut policy = search::SearchStarts::new(judge, q.clone());
    Ok(starts::run_starts(ctx, &mut policy, rec).await? != LoopEnd::Cancelled)
}

/// The run's status and error: interrupted (resumable), complete, or failed with what the
/// verify rules, or request records lost from the sidecar, say.
fn settle(
    result: &mut RunResult,
    interrupted: bool,
    finished: bool,
    verify: Option<String>,
    records_lost: &[usize],
) {
    result.status = if interrupted {
        RunStatus::Interrupted
    } else if finished {
        RunStatus::Complete
    } else {
        RunStatus::Failed
    };
    if interrupted {
        result.error = Some(
            "interrupted: finished trials are kept; continue with `servebench run --resume`".into(),
        );
    } else if let Some(verify) = verify {
        // `servebench run` prints it once, at the end.
        result.status = RunStatus::Failed;
        result.error = Some(verify);
    } else if !records_lost.is_empty() {
        result.status = RunStatus::Failed;
        result.error = Some(format!(
            "the request records of trial(s) {records_lost:?} are missing from the sidecar (a \
             write cut short) and a look had already read their summaries, which are kept: \
             the result's per-request data is incomplete; re-measure with a new run if it is \
             needed"
        ));
    }
}
