//! `servebench rerun RESULT`: run the spec stored in a published result again and say, per
//! variant, sweep point and metric, whether the published value reproduces.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use servebench_runner::compare::LoadedResult;
use servebench_runner::rerun::{self, Override};
use servebench_runner::result::load_result;

use crate::exit::Exit;

/// Arguments of `rerun`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The spec run is the resolved spec stored inside RESULT, not the file \
                  in specs/ (which may have changed since); its hash must still be the \
                  published one. Only host-specific fields may be overridden: \
                  server.working_dir, target.base_url, variants.<name>.base_url (the port is \
                  picked free on every server start; `${env.NAME}` values come from this \
                  environment).\n\nA value is reproduced when the CI of new/published lies \
                  inside ±θ, not reproduced when it lies wholly beyond, inconclusive \
                  otherwise (STATISTICS.md). stale-baseline is always raised; not-comparable \
                  lists the fields (host, accelerators, versions) that differ.\n\nExit codes: \
                  0 nothing contradicted (values reproduced or inconclusive); 1 a value or \
                  A/B claim not reproduced, or a trial of the re-run failed; 2 usage or I/O \
                  error; 130 interrupted."
)]
pub struct Args {
    /// The published result file (`results/<spec>/<run id>.json`).
    result: PathBuf,
    /// Override a host-specific field, KEY=VALUE (repeatable): `server.working_dir`,
    /// `target.base_url`, `variants.<name>.base_url`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Folder that relative paths of the spec (datasets, provenance files, working_dir)
    /// resolve against (default: the folder of the spec path recorded in the result).
    #[arg(long, value_name = "DIR")]
    spec_dir: Option<PathBuf>,
    /// Folder that receives the new `<spec name>/<run id>.json`.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// Judge this already measured re-run instead of running again (it must have the
    /// published spec hash).
    #[arg(long = "with", value_name = "NEW_RESULT")]
    with: Option<PathBuf>,
    /// Metrics and thresholds (variant choices are not used: every variant is checked).
    #[command(flatten)]
    selection: super::Selection,
    /// Print the report as JSON (format `servebench-rerun/1`).
    #[arg(long)]
    json: bool,
    /// Print no progress while running.
    #[arg(long, short)]
    quiet: bool,
    /// Plain progress lines even on a terminal.
    #[arg(long)]
    no_bars: bool,
}

fn loaded(path: &Path) -> Result<LoadedResult> {
    let result = load_result(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(LoadedResult {
        file: path.display().to_string(),
        result,
    })
}

/// Run the prepared spec: the new result's path, whether it was interrupted, failed trials.
fn measure(spec: &servebench_spec::Spec, args: &Args) -> Result<(PathBuf, bool, usize)> {
    let outcome = super::run::execute(
        spec,
        &args.results_dir,
        None,
        super::run::Progress::of(args.quiet, args.no_bars),
    )
    .context("the re-run could not continue")?;
    Ok((
        outcome.result_path.clone(),
        outcome.interrupted,
        outcome.failed_trials(),
    ))
}

/// Re-run, judge, print.
pub fn run_cmd(args: Args) -> Result<Exit> {
    let published = loaded(&args.result)?;
    let overrides: Vec<Override> = args
        .set
        .iter()
        .map(|s| rerun::parse_override(s))
        .collect::<Result<_, _>>()?;
    let spec = rerun::prepare(
        &published.result,
        &published.file,
        &overrides,
        args.spec_dir.as_deref(),
    )?;
    let (new_path, failed) = match &args.with {
        Some(p) => {
            let new = load_result(p).with_context(|| format!("reading {}", p.display()))?;
            if new.spec_hash != published.result.spec_hash {
                bail!(
                    "{} has spec hash {}, not the published {}: it is not a re-run of {}. \
                     Compare them with `servebench compare {} {}` instead",
                    p.display(),
                    new.spec_hash,
                    published.result.spec_hash,
                    published.file,
                    published.file,
                    p.display()
                );
            }
            (p.clone(), 0)
        }
        None => {
            if !args.quiet {
                eprintln!(
                    "servebench: re-running the spec stored in {} (hash {})",
                    published.file, published.result.spec_hash
                );
            }
            let (path, interrupted, failed) = measure(&spec, &args)?;
            if interrupted {
                eprintln!(
                    "interrupted: the re-run is kept in {}; finish it with `servebench run \
                     --resume {}` and judge it with `servebench rerun {} --with {}`",
                    path.display(),
                    path.display(),
                    published.file,
                    path.display()
                );
                return Ok(Exit::Interrupted);
            }
            (path, failed)
        }
    };
    let new = loaded(&new_path)?;
    let report = rerun::assess(&published, &new, &args.selection.options())?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).context("serialising the report")?
        );
    } else {
        print!("{}", rerun::render(&report));
    }
    if failed > 0 {
        eprintln!(
            "{failed} trial(s) of the re-run failed: see {}",
            new_path.display()
        );
    }
    Ok(if report.any_not_reproduced() || failed > 0 {
        Exit::Failed
    } else {
        Exit::Ok
    })
}
