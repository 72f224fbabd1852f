//! `servebench history PATH…` and `servebench history --git RANGE PATH…`: committed result
//! files as series of runs (servebench-history), as text, JSON or a report folder.

use std::path::PathBuf;

use anyhow::{Context, Result};
use servebench_history::HistoryOptions;
use servebench_history::gate::{FailOn, evaluate};

use crate::exit::Exit;

/// Arguments of `history`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Runs of different specs (metadata.name) are kept apart. Within a \
                  spec, a run whose fingerprint (compare's rule: workload, target, server, \
                  host, accelerators, servebench version, provenance) or spec hash differs \
                  from the run before it starts a new series, and the output names the \
                  fields. Files that are not readable result files (truncated, a \
                  .compare.json, a run id read already) are skipped with a note. The method \
                  and its measured detection rates: docs/history.md.\n\nExit codes: 0 \
                  success; 1 --fail-on step found a confirmed step new since the reference \
                  run; 2 usage or I/O error."
)]
pub(crate) struct Args {
    /// Result files, or folders searched recursively for `*.json` result files. With
    /// --git: paths inside the repository of the current directory.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Read the result files held by the commits of a git range (`A..B`; one revision:
    /// its whole history) under PATH…, with `git ls-tree`/`git cat-file`, instead of the
    /// working tree.
    #[arg(long, value_name = "RANGE")]
    git: Option<String>,
    /// Metrics (repeatable or a comma list; default: each spec's `compare.metrics`).
    #[arg(long = "metric", value_name = "NAME", value_delimiter = ',')]
    metrics: Vec<String>,
    /// Level of the change-point tests (default: the spec's `compare.alpha`).
    #[arg(long, value_name = "ALPHA")]
    alpha: Option<f64>,
    /// The reference run (run id or result file as read): changes not confirmed as of it are
    /// new, and --fail-on judges only those (default: each spec's second newest run).
    #[arg(long, value_name = "RUN")]
    since: Option<String>,
    /// Print the history as JSON (format `servebench-history/1`, see docs/history.md).
    #[arg(long)]
    json: bool,
    /// Write the report into DIR: report.md, report.html and a trend SVG per metric and
    /// point.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    output: Option<PathBuf>,
    /// Exit 1 on a confirmed step new since the reference run (`step`); an unconfirmed
    /// change at the newest run is said, not failed on.
    #[arg(long, value_name = "WHAT", value_delimiter = ',', value_parser = parse_fail_on)]
    fail_on: Vec<FailOn>,
}

fn parse_fail_on(s: &str) -> Result<FailOn, String> {
    match s.trim() {
        "step" => Ok(FailOn::Step),
        other => Err(format!("`{other}` is not a history gate: use `step`")),
    }
}

/// Read, analyse, print, and apply the gate.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let (loaded, sources) = match &args.git {
        Some(range) => {
            let paths: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
            (
                servebench_history::read_git(std::path::Path::new("."), range, &args.paths)?,
                vec![format!("git {range} {}", paths.join(" "))],
            )
        }
        None => (
            servebench_history::read_paths(&args.paths)?,
            args.paths.iter().map(|p| p.display().to_string()).collect(),
        ),
    };
    let opts = HistoryOptions {
        metrics: (!args.metrics.is_empty()).then(|| args.metrics.clone()),
        alpha: args.alpha,
        since: args.since.clone(),
        now: None,
    };
    let mut history = servebench_history::history(loaded, sources, &opts)?;
    if !args.fail_on.is_empty() {
        history.gate = Some(evaluate(&history, &args.fail_on));
    }
    if let Some(dir) = &args.output {
        for path in servebench_report::history::write(&history, dir)? {
            eprintln!("wrote {}", path.display());
        }
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&history).context("serialising the history")?
        );
    } else {
        print!(
            "{}",
            servebench_spec::text::printable(&servebench_history::render(&history))
        );
    }
    Ok(match &history.gate {
        Some(g) if g.tripped => Exit::Failed,
        _ => Exit::Ok,
    })
}

/// The series view `compare` adds across runs: the history of `sources` (the baseline
/// file's folder by default), as far as it concerns the run `base_run` and its baseline
/// variant before the candidate's run `candidate_run`. A history that cannot be read is a note on stderr, never a failed comparison.
pub(crate) fn baseline_series(
    sources: &[PathBuf],
    base_run: &str,
    candidate_run: &str,
    variant: &str,
    metrics: Option<Vec<String>>,
) -> Option<servebench_compare::BaselineSeries> {
    let source = sources
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let opts = HistoryOptions {
        metrics,
        ..HistoryOptions::default()
    };
    let history = servebench_history::read_paths(sources)
        .map_err(anyhow::Error::from)
        .and_then(|l| Ok(servebench_history::history(l, vec![source.clone()], &opts)?));
    match history {
        Ok(h) => {
            servebench_history::baseline_series(&h, base_run, variant, &source, Some(candidate_run))
        }
        Err(e) => {
            eprintln!("note: the baseline's series could not be read from {source}: {e:#}");
            None
        }
    }
}
