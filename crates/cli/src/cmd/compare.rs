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
pub struct Args {
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
}

fn parse_fail_on(s: &str) -> Result<FailOn, String> {
    match s.trim() {
        "regressed" => Ok(FailOn::Regressed),
        "likely-regressed" => Ok(FailOn::LikelyRegressed),
        "suspicious" => Ok(FailOn::Suspicious),
        other => Err(format!(
            "`{other}` is not a gate: use `regressed`, `likely-regressed` or `suspicious`"
        )),
    }
}

/// Compare, print, and apply the gates.
pub fn run(args: Args) -> Result<Exit> {
    let opts = args.selection.options();
    let first = super::load_result(&args.result)?;
    let mut report = match &args.candidate_result {
        None => compare_within(&first, &opts)?,
        Some(p) => compare_across(&first, &super::load_result(p)?, &opts)?,
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
