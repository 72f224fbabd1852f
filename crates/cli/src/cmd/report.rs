//! `servebench report RESULT [CANDIDATE_RESULT] [-o DIR]`: a folder a reader can open —
//! `report.md`, a self-contained `report.html`, SVG plots and `trials.csv`.

use std::path::{Path, PathBuf};

use anyhow::Result;
use servebench_report::{self as report, ReportOptions};

use crate::exit::Exit;

/// Arguments of `report`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "With one RESULT, every variant of the run is compared with its baseline \
                  variant, as by `servebench compare RESULT`; with two, the baseline variant \
                  of the first file is compared with a variant of the second. The folder gets \
                  report.md, report.html (one file: plots and styles inlined, nothing fetched \
                  from the network), throughput.svg, ratio-<candidate>.svg, ttft.svg, \
                  tpot.svg, cdf.svg and trials.csv.\n\nExit codes: 0 written; 2 usage or I/O \
                  error."
)]
pub(crate) struct Args {
    /// A result file (`results/<spec>/<run id>.json`): the run to report, or the
    /// baseline's run when a second file is given.
    result: PathBuf,
    /// A second result file: the candidate's run.
    candidate_result: Option<PathBuf>,
    /// Output folder (default: beside RESULT, `<run id>.report/`).
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// The sweep point of the latency CDFs: a concurrency (`32`), a short label (`c=32`) or
    /// a full point label (default: the highest concurrency).
    #[arg(long, value_name = "POINT")]
    cdf_point: Option<String>,
    /// Which variants and metrics, and the thresholds.
    #[command(flatten)]
    selection: super::Selection,
}

/// `results/x/<id>.json` → `results/x/<id>.report`.
fn default_dir(result: &Path) -> PathBuf {
    let stem = result
        .file_stem()
        .map_or_else(|| "servebench".into(), |s| s.to_string_lossy().into_owned());
    result.with_file_name(format!("{stem}.report"))
}

/// Build and write the report.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let opts = ReportOptions {
        cdf_point: args.cdf_point.clone(),
        compare: args.selection.options(),
    };
    let first = super::load_result(&args.result)?;
    // `results/<name>/latest` names a run: its report goes beside that run's file.
    let default_out = default_dir(Path::new(&first.file));
    if first.result.spec.spec.search.is_some() {
        if args.candidate_result.is_some() {
            anyhow::bail!(
                "{} is a capacity search: a report across two result files is not supported; \
                 report it alone (`servebench report {}`)",
                first.file,
                first.file
            );
        }
        let dir = args.output.clone().unwrap_or(default_out);
        let Some(c) = report::capacity::capacity(first) else {
            anyhow::bail!("the result has no search");
        };
        for path in report::capacity::write(&c, &dir)? {
            println!("{}", path.display());
        }
        return Ok(Exit::Ok);
    }
    let built = match &args.candidate_result {
        None => report::within(first, &opts)?,
        Some(p) => report::across(first, super::load_result(p)?, &opts)?,
    };
    let dir = args.output.clone().unwrap_or(default_out);
    let written = report::write(&built, &dir)?;
    if let Some(why) = &built.no_compare {
        eprintln!("note: no comparison ({why}): the report has no verdicts or flags");
    }
    for path in &written {
        println!("{}", path.display());
    }
    Ok(Exit::Ok)
}
