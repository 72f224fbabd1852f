//! `servebench compare RESULT` (every variant of one run against its baseline) and
//! `servebench compare BASELINE_RESULT CANDIDATE_RESULT` (across runs).

use std::path::PathBuf;

use anyhow::{Context, Result};
use servebench_compare::{FailOn, compare_across, compare_within, evaluate_gates, render};

use crate::exit::Exit;

/// Arguments of `compare`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "With one RESULT, every variant of that run is compared with its baseline \
                  variant. With two, the baseline variant of the first file is compared with \
                  the variant of the same name in the second (or the second's baseline \
                  variant when it has none); --baseline-variant / --candidate-variant pick \
                  others. Across runs the fingerprints are compared field by field and \
                  stale-baseline is always raised.\n\nExit codes: 0 success; 1 a --fail-on \
                  gate tripped; 2 usage or I/O error (unreadable file, unknown variant or \
                  metric)."
)]
pub(crate) struct Args {
    /// A result file (`results/<spec>/<run id>.json`): the run to compare within, or the
    /// baseline's run when a second file is given.
    result: PathBuf,
    /// A second result file: the candidate's run.
    candidate_result: Option<PathBuf>,
    /// Which variants and metrics, and the thresholds.
    #[command(flatten)]
    selection: super::Selection,
    /// Print the report as JSON (format `servebench-compare/2`, see docs/compare.md).
    #[arg(long)]
    json: bool,
    /// Exit 1 when a metric regressed beyond θ (`regressed`), regressed or likely regressed
    /// (`likely-regressed`: significantly worse, size unsure), or a re-baseline flag was
    /// raised (`suspicious`); repeatable or a comma list.
    #[arg(long, value_name = "WHAT", value_delimiter = ',', value_parser = parse_fail_on)]
    fail_on: Vec<FailOn>,
    /// Across runs: result files or folders holding the baseline run's series (default: the
    /// folder of the first result file). A confirmed step of the baseline variant after the
    /// baseline run is added to the stale-baseline flag's evidence (docs/history.md).
    #[arg(long = "history", value_name = "PATH")]
    history: Vec<PathBuf>,
    /// Across runs: do not read the baseline run's series.
    #[arg(long, conflicts_with = "history")]
    no_history: bool,
}

fn parse_fail_on(s: &str) -> Result<FailOn, String> {
    match s.trim() {
        "regressed" => Ok(FailOn::Regressed),
        "likely-regressed" => Ok(FailOn::LikelyRegressed),
        "suspicious" => Ok(FailOn::Suspicious),
        "output-changed" => Ok(FailOn::OutputChanged),
        other => Err(format!(
            "`{other}` is not a gate: use `regressed`, `likely-regressed`, `suspicious` or \
             `output-changed`"
        )),
    }
}

/// Compare, print, and apply the gates.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let opts = args.selection.options();
    let first = super::load_result(&args.result)?;
    if first.result.spec.spec.search.is_some() {
        return capacity(&first, &args);
    }
    let mut report = match &args.candidate_result {
        None => compare_within(&first, &opts)?,
        Some(p) => {
            let mut opts = opts;
            if !args.no_history {
                opts.baseline_series = series_of(&first, &args, &opts);
            }
            compare_across(&first, &super::load_result(p)?, &opts)?
        }
    };
    if !args.fail_on.is_empty() {
        report.gate = Some(evaluate_gates(&report, &args.fail_on));
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).context("serialising the report")?
        );
    } else {
        print!("{}", render(&report));
    }
    Ok(match &report.gate {
        Some(g) if g.tripped => Exit::Failed,
        _ => Exit::Ok,
    })
}

/// A capacity search's result: each variant's capacity and the ratios (docs/search.md).
fn capacity(first: &servebench_compare::LoadedResult, args: &Args) -> Result<Exit> {
    use servebench_compare::capacity::{capacity_report, render_capacity};
    if args.candidate_result.is_some() {
        anyhow::bail!(
            "{} is a capacity search: comparing capacities across two result files is not \
             supported; compare the variants of one search (`servebench compare {}`), or \
             measure both in one spec's `variants`",
            first.file,
            first.file
        );
    }
    let Some(report) = capacity_report(&first.result) else {
        anyhow::bail!("{} has no search", first.file);
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).context("serialising the report")?
        );
    } else {
        print!("{}", render_capacity(&report));
    }
    let tripped = report.comparisons.iter().any(|c| {
        args.fail_on.iter().any(|g| match g {
            FailOn::Regressed => c.verdict == "regressed",
            FailOn::LikelyRegressed => {
                matches!(c.verdict.as_str(), "regressed" | "likely-regressed")
            }
            FailOn::Suspicious | FailOn::OutputChanged => false,
        })
    });
    Ok(if tripped { Exit::Failed } else { Exit::Ok })
}

/// The baseline run's series (`--history`, else the folder of the first file).
fn series_of(
    first: &servebench_compare::LoadedResult,
    args: &Args,
    opts: &servebench_compare::CompareOptions,
) -> Option<servebench_compare::BaselineSeries> {
    let sources = if args.history.is_empty() {
        let dir = args.result.parent().filter(|d| !d.as_os_str().is_empty());
        vec![dir.map_or_else(|| PathBuf::from("."), PathBuf::from)]
    } else {
        args.history.clone()
    };
    let variants = &first.result.spec.spec.variants;
    let variant = opts.baseline_variant.clone().or_else(|| {
        variants
            .iter()
            .find(|v| v.baseline)
            .or(variants.first())
            .map(|v| v.name.clone())
    })?;
    super::history::baseline_series(
        &sources,
        &first.result.run_id,
        &variant,
        opts.metrics.clone(),
    )
}
