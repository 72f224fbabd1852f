//! `servebench rerun RESULT`: run the spec stored in a published result again and say, per
//! variant, sweep point and metric, whether the published value reproduces.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use servebench_compare::LoadedResult;
use servebench_compare::rerun::{self, Override};

use crate::exit::Exit;

/// Arguments of `rerun`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The spec run is the resolved spec stored inside RESULT, not the file \
                  in specs/ (which may have changed since); its hash must still be the \
                  published one. Only host-specific fields may be overridden: \
                  server.working_dir, target.base_url, variants.<name>.base_url (the port is \
                  picked free on every server start; `${env.NAME}` values come from this \
                  environment, each that differs from the published value named, and the \
                  published value is used for one this environment does not set).\n\nA value is reproduced when the CI of new/published lies \
                  inside ±θ, not reproduced when it lies wholly beyond, inconclusive \
                  otherwise (docs/statistics-method.md). stale-baseline is always raised; not-comparable \
                  lists the fields (host, accelerators, versions) that differ.\n\nExit codes: \
                  0 nothing contradicted (values reproduced or inconclusive); 1 a value or \
                  A/B claim not reproduced, or a trial of the re-run failed; 2 usage or I/O \
                  error; 130 interrupted."
)]
pub(crate) struct Args {
    /// The published result file (`results/<spec>/<run id>.json`).
    result: PathBuf,
    /// Override a host-specific field, KEY=VALUE (repeatable): `server.working_dir`,
    /// `target.base_url`, `variants.<name>.base_url`.
    #[arg(long = "set", value_name = "KEY=VALUE", conflicts_with = "with")]
    set: Vec<String>,
    /// Folder that relative paths of the spec (datasets, provenance files, working_dir)
    /// resolve against (default: the folder of the spec path recorded in the result).
    #[arg(long, value_name = "DIR", conflicts_with = "with")]
    spec_dir: Option<PathBuf>,
    /// Folder that receives the new `<spec name>/<run id>.json`.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// Judge this already measured re-run instead of running again (it must have the
    /// published spec hash).
    #[arg(long = "with", value_name = "NEW_RESULT")]
    with: Option<PathBuf>,
    /// Metrics and thresholds (every variant is checked).
    #[command(flatten)]
    measures: super::Measures,
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

/// Re-run, judge, print.
pub(crate) fn run_cmd(args: Args) -> Result<Exit> {
    let published = super::load_result(&args.result)?;
    let new = match &args.with {
        Some(p) => {
            let new = super::load_result(p)?;
            if new.result.spec_hash != published.result.spec_hash {
                bail!(
                    "{} has spec hash {}, not the published {}: it is not a re-run of {}. \
                     Compare them with `servebench compare {} {}` instead",
                    p.display(),
                    new.result.spec_hash,
                    published.result.spec_hash,
                    published.file,
                    published.file,
                    p.display()
                );
            }
            rerun::check_inputs(
                &published.result,
                &published.file,
                &new.result.provenance.inputs,
            )?;
            new
        }
        None => match measure(&published, &args)? {
            Some(new) => new,
            None => return Ok(Exit::Interrupted),
        },
    };
    let failed = new.result.failed_trials();
    let report = rerun::assess(&published, &new, &args.measures.options())?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).context("serialising the report")?
        );
    } else {
        print!(
            "{}",
            servebench_spec::text::printable(&rerun::render(&report))
        );
    }
    if failed > 0 {
        eprintln!("{failed} trial(s) of the re-run failed: see {}", new.file);
    }
    Ok(if report.any_not_reproduced() || failed > 0 {
        Exit::Failed
    } else {
        Exit::Ok
    })
}

/// The `${env.…}` values of the re-run (docs/rerun.md): this environment's where it sets
/// the name (each that differs from the published value said), else the value the
/// published run recorded; a secret's value was never recorded, so it must be set here.
/// One sentence per name worth saying.
fn replay_env(published: &servebench_result::RunResult) -> Vec<String> {
    let redacted = servebench_runner::server::REDACTED;
    let mut fallback = std::collections::BTreeMap::new();
    let mut notes = Vec::new();
    for (name, recorded) in &published.provenance.env {
        match std::env::var(name) {
            Ok(_) if recorded == redacted => {}
            Ok(here) if &here != recorded => notes.push(format!(
                "`{name}` is `{here}` here and was `{recorded}` in the published run: this \
                 environment's value is used"
            )),
            Ok(_) => {}
            Err(_) if recorded == redacted => notes.push(format!(
                "`{name}` is not set here, and the published run did not record its value (a \
                 secret): set it"
            )),
            Err(_) => {
                notes.push(format!(
                    "`{name}` is not set here: the published run's value `{recorded}` is used"
                ));
                fallback.insert(name.clone(), recorded.clone());
            }
        }
    }
    servebench_spec::substitute::replay_env(fallback);
    notes
}

/// Run the spec stored in `published` again (with `--set` overrides); the new result as
/// written, or `None` when interrupted (said how to finish it).
fn measure(published: &LoadedResult, args: &Args) -> Result<Option<LoadedResult>> {
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
    let names: Vec<String> = (published.result.provenance.inputs.iter())
        .map(|f| f.path.clone())
        .collect();
    let dir = (spec.path.as_deref().and_then(std::path::Path::parent))
        .map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf);
    let now = servebench_runner::provenance::hash_files(&names, &dir);
    rerun::check_inputs(&published.result, &published.file, &now)?;
    if !args.quiet {
        eprintln!(
            "servebench: re-running the spec stored in {} (hash {})",
            published.file, published.result.spec_hash
        );
    }
    for n in replay_env(&published.result) {
        eprintln!("servebench: environment: {n}");
    }
    let outcome = super::run::execute(
        &spec,
        &args.results_dir,
        None,
        super::run::Progress::of(args.quiet, args.no_bars),
        None,
    )
    .context("the re-run could not continue")?;
    let path = outcome.result_path.display().to_string();
    if outcome.interrupted {
        eprintln!(
            "interrupted: the re-run is kept in {path}; finish it with `servebench run \
             --resume {path}` and judge it with `servebench rerun {} --with {path}`",
            published.file
        );
        return Ok(None);
    }
    Ok(Some(LoadedResult {
        file: path,
        result: outcome.result,
    }))
}
