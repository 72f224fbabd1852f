//! `servebench run SPEC` and `servebench run --resume RESULT`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, anyhow, bail};
use servebench_compare::Sequential;
use servebench_result::SearchLook;
use servebench_result::table;
use servebench_result::{LookRecord, RunResult, ToolInfo, load_result};
use servebench_runner::run::{ProgressMode, RunOptions, RunOutcome, SearchJudge, Sequencer, run};
use servebench_spec::overrides::Override;

use crate::exit::Exit;

/// Arguments of `run`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec file (with `--resume`, defaults to the spec path stored in the result).
    spec: Option<PathBuf>,
    /// Continue an interrupted run: measure only the trials missing from this result file.
    #[arg(long, value_name = "RESULT")]
    resume: Option<PathBuf>,
    /// Folder that receives `<spec name>/<run id>.json`.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// `--set KEY=VALUE`, `--requests`, `-c`, `--trials`: the result stores the overrides,
    /// and `run --resume` applies them again.
    #[command(flatten)]
    overrides: super::SpecOverrides,
    /// Print nothing but errors and the final table.
    #[arg(long, short)]
    quiet: bool,
    /// Plain progress lines even on a terminal.
    #[arg(long)]
    no_bars: bool,
    /// The gate: after the run, compare it (as `servebench compare RESULT` would), print the
    /// verdict tables and exit 1 when the gate trips (docs/compare.md, "Gates"). With
    /// `trials.until_decided`, a gated cell stops as soon as the gate's question is answered.
    #[command(flatten)]
    gate: super::compare::GateArgs,
}

/// Carry out the spec.
pub(crate) fn run_cmd(args: Args) -> Result<Exit> {
    let overrides = args.overrides.list()?;
    let stored = match &args.resume {
        Some(r) => {
            if !overrides.is_empty() {
                bail!(
                    "`--resume` continues {} as it was measured (its spec file with the \
                     overrides stored in it); it takes no `--set`, `--requests`, \
                     `--concurrency` or `--trials`. To measure other values, start a new run: \
                     `servebench run SPEC --set KEY=VALUE`",
                    r.display()
                );
            }
            Some(load_result(r)?)
        }
        None => None,
    };
    let spec_path = match (&args.spec, &stored) {
        (Some(p), _) => p.clone(),
        (None, Some(stored)) => match &stored.spec_path {
            Some(p) => PathBuf::from(p),
            None => {
                let r = args
                    .resume
                    .as_deref()
                    .unwrap_or(Path::new("RESULT"))
                    .display();
                bail!(
                    "{r} does not record its spec file: give it, `servebench run SPEC --resume {r}`"
                )
            }
        },
        (None, None) => bail!("give a spec file: `servebench run specs/sim-ab.yaml`"),
    };
    let Some(spec) = super::load_spec(&spec_path)? else {
        return Ok(Exit::Failed);
    };
    // A resumed run applies the overrides it was started with, so its hash matches.
    let overrides = match &stored {
        Some(r) => r
            .overrides
            .iter()
            .map(|s| Override::parse(s))
            .collect::<Result<Vec<_>, _>>()?,
        None => overrides,
    };
    let file = spec_path.display().to_string();
    let Some(spec) = super::apply_overrides(spec, &overrides, &file)? else {
        return Ok(Exit::Failed);
    };
    // `trials.design: optimize`: count and per_start chosen from the stated values (the
    // same on a resume, so its hash matches).
    let Some(spec) = super::design::resolve(spec, &file)? else {
        return Ok(Exit::Failed);
    };
    // The files the spec names, read before anything starts (as `validate` reads them).
    let dir = spec_path.parent().unwrap_or(Path::new("."));
    let problems = servebench_runner::run::check_inputs(&spec.file, dir);
    if problems.iter().any(|p| p.is_error()) {
        for p in problems.iter().filter(|p| p.is_error()) {
            eprintln!("{}", p.render());
        }
        eprintln!("{file}: the files it names cannot be used; nothing was started");
        return Ok(Exit::Failed);
    }
    if !args.quiet {
        super::print_warnings(&spec, &file);
        if servebench_spec::is_plain_load(&spec.file) {
            eprintln!(
                "servebench: one variant, one trial per point: a plain load measurement (no \
                 comparison, no intervals)"
            );
        }
    }
    let gate = args.gate.resolve(&spec.file)?;
    if gate.is_active() && spec.file.spec.search.is_none() {
        // The names the gate will be judged on after the run: a typo fails now, not then.
        let metrics: Vec<&str> = spec
            .file
            .spec
            .compare
            .metrics
            .iter()
            .map(String::as_str)
            .collect();
        let labels: Vec<String> = servebench_spec::plan::sweep_points(&spec.file)
            .iter()
            .map(ToString::to_string)
            .collect();
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        super::compare::check_gate_names(&gate, &metrics, &labels)?;
    }
    let outcome = execute(
        &spec,
        &args.results_dir,
        args.resume.clone(),
        Progress::of(args.quiet, args.no_bars),
        Some(gate.clone()),
    )
    .context("the run could not continue")?;
    let capacity = servebench_compare::capacity::capacity_report(&outcome.result);
    match &capacity {
        Some(c) => print!(
            "{}",
            servebench_spec::text::printable(&servebench_compare::capacity::render_capacity(c))
        ),
        None => print!(
            "{}",
            servebench_spec::text::printable(&table::render(&outcome.result))
        ),
    }
    println!("\nresult: {}", outcome.result_path.display());
    if outcome.interrupted {
        eprintln!(
            "interrupted: {} trial(s) kept; continue with `servebench run --resume {}`",
            outcome.result.trials.len(),
            outcome.result_path.display()
        );
        return Ok(Exit::Interrupted);
    }
    if outcome.result.status == servebench_result::RunStatus::Failed
        && let Some(why) = &outcome.result.error
    {
        eprintln!("{why}");
        return Ok(Exit::Failed);
    }
    let no_estimate = outcome.result.search.as_ref().map_or(0, |l| {
        l.blocks
            .iter()
            .filter(|b| {
                matches!(
                    b.outcome,
                    Some(servebench_result::SearchOutcome::Invalid { .. })
                )
            })
            .count()
    });
    if no_estimate > 0 {
        eprintln!(
            "{no_estimate} server start(s) of the search gave no estimate (the server did not \
             start, or a trial could not be judged): see the search log in the result file"
        );
        return Ok(Exit::Failed);
    }
    let failed = outcome.result.failed_trials();
    let refused = outcome.result.trials_without_a_success();
    // The gate is judged whatever else failed, so that its verdicts are in the log; the
    // exit code is 1 when anything did.
    let tripped = match (&capacity, gate.is_active()) {
        (Some(c), true) => {
            let t = super::compare::capacity_tripped(c, &gate.fail_on)?;
            println!(
                "\ngate --fail-on {}: {}",
                gate.fail_on
                    .iter()
                    .map(|f| f.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
                if t { "TRIPPED" } else { "passed" }
            );
            t
        }
        (None, true) => gate_after_run(&outcome, &gate)?,
        _ => false,
    };
    if failed > 0 {
        eprintln!("{failed} trial(s) failed: see the table above and the result file");
        return Ok(Exit::Failed);
    }
    if refused > 0 {
        eprintln!(
            "{refused} trial(s) had no successful request (every request failed): their failures are in the table above and the result file"
        );
        return Ok(Exit::Failed);
    }
    Ok(if tripped { Exit::Failed } else { Exit::Ok })
}

/// `run --fail-on`: the run compared within itself, its verdict tables and the gate printed,
/// and whether the gate tripped.
fn gate_after_run(outcome: &RunOutcome, gate: &servebench_compare::GateSpec) -> Result<bool> {
    let lr = servebench_compare::LoadedResult {
        file: outcome.result_path.display().to_string(),
        result: outcome.result.clone(),
    };
    let mut report =
        servebench_compare::compare_within(&lr, &servebench_compare::CompareOptions::default())
            .context("comparing the run for its gate")?;
    super::compare::check_gate(gate, &report)?;
    let g = servebench_compare::evaluate_gates(&report, gate);
    let tripped = g.tripped;
    report.gate = Some(g);
    println!(
        "\n{}",
        servebench_spec::text::printable(&servebench_compare::render(&report))
    );
    Ok(tripped)
}

/// How `run` and `rerun` show progress.
pub(crate) struct Progress(ProgressMode);

impl Progress {
    /// From the `--quiet` and `--no-bars` flags.
    pub(crate) fn of(quiet: bool, no_bars: bool) -> Self {
        Progress(if quiet {
            ProgressMode::Quiet
        } else if no_bars {
            ProgressMode::Lines
        } else {
            ProgressMode::Auto
        })
    }
}

/// compare's group-sequential design as the runner's [`Sequencer`]: the runner measures,
/// compare judges which cells of a sequential run stay open.
#[derive(Debug)]
struct Looks(Sequential);

impl Sequencer for Looks {
    fn look(&self, result: &RunResult, after_trial: u32) -> LookRecord {
        self.0.look(result, after_trial)
    }
}

/// compare's capacity analysis as the runner's [`SearchJudge`]: the runner measures, compare
/// reads each round of a capacity search.
#[derive(Debug)]
struct Capacity;

impl SearchJudge for Capacity {
    fn look(&self, result: &RunResult, after_round: u32) -> SearchLook {
        servebench_compare::capacity::search_look(result, after_round)
    }
}

/// Measures `spec` (or the trials missing from `resume`) into `results_dir`. Ctrl-C and
/// SIGTERM stop it cleanly: the server is stopped and finished trials are kept
/// (`RunOutcome::interrupted`).
pub(crate) fn execute(
    spec: &servebench_spec::Spec,
    results_dir: &Path,
    resume: Option<PathBuf>,
    progress: Progress,
    gate: Option<servebench_compare::GateSpec>,
) -> Result<RunOutcome> {
    let exe = std::env::current_exe().context("locating the servebench binary")?;
    let cancel = Arc::new(AtomicBool::new(false));
    let results_root = std::path::absolute(results_dir)
        .with_context(|| format!("resolving {}", results_dir.display()))?;
    let sequencer = Sequential::for_spec(&spec.file)
        .map_err(|e| anyhow!("sequential trials: {e}"))?
        .map(|s| match gate {
            Some(g) => s.with_gate(g),
            None => s,
        })
        .map(|s| Arc::new(Looks(s)) as Arc<dyn Sequencer>);
    let opts = RunOptions {
        results_root,
        servebench_bin: exe.display().to_string(),
        tool: ToolInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            git_sha: Some(env!("SERVEBENCH_GIT_SHA").to_owned()).filter(|s| !s.is_empty()),
        },
        resume,
        progress: progress.0,
        cancel: cancel.clone(),
        sequencer,
        search_judge: spec
            .file
            .spec
            .search
            .is_some()
            .then(|| Arc::new(Capacity) as Arc<dyn SearchJudge>),
    };
    // Thousands of concurrent streams need as many sockets: soft limit up to the hard one.
    let _ = servebench_runner::loadgen::raise_open_file_limit();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = rt.block_on(async {
        tokio::spawn(async move {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
            }
            eprintln!("\nservebench: interrupted — stopping the server and keeping finished trials…");
            cancel.store(true, Ordering::SeqCst);
        });
        run(spec, &opts).await
    });
    let outcome = outcome?;
    if outcome.result_path.exists()
        && let Err(e) = super::write_latest(&outcome.result_path)
    {
        eprintln!("note: {e:#}");
    }
    Ok(outcome)
}
