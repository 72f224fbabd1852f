//! `servebench export RESULT [--table trials|requests] [--format csv] [-o FILE]`: a result as
//! a table for dataframes (`pd.read_csv`), one row per trial or per request of the sidecar.
//! The tables are `servebench_result::export`'s; docs/export.md lists the columns.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::exit::Exit;

/// Arguments of `export`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "trials: one row per trial (every variant, sweep point and repetition; failed \
                  trials with empty metrics) with every metric of the catalogue under its name. \
                  requests: one row per request of the result's sidecar \
                  (<run id>.requests.jsonl.zst beside it; warm-ups marked) with its TTFT, TPOT, \
                  mean ITL, E2E, token counts, error and flags. Columns: docs/export.md.\n\n\
                  Exit codes: 0 written; 2 usage or I/O error (no sidecar for `requests`)."
)]
pub(crate) struct Args {
    /// A result file (`results/<spec>/<run id>.json`).
    result: PathBuf,
    /// Which table: one row per trial, or one row per request.
    #[arg(long, value_enum, default_value_t = Table::Trials)]
    table: Table,
    /// The file format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    /// Write to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Table {
    /// One row per trial.
    Trials,
    /// One row per request of the sidecar.
    Requests,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// Comma-separated values with a header row (RFC 4180 quoting).
    Csv,
}

/// Write the table.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let Format::Csv = args.format;
    let result = servebench_result::load_result(&args.result)
        .with_context(|| format!("reading {}", args.result.display()))?;
    let text = match args.table {
        Table::Trials => servebench_result::export::trials_csv(&result),
        Table::Requests => {
            let sidecar = servebench_result::sidecar_path(&args.result);
            if !sidecar.exists() {
                bail!(
                    "{} has no request records: {} does not exist (an imported result keeps \
                     only the tool's summary; `--table trials` exports what it has)",
                    args.result.display(),
                    sidecar.display()
                );
            }
            let lines = servebench_result::read_requests(&sidecar)
                .with_context(|| format!("reading {}", sidecar.display()))?;
            servebench_result::export::requests_csv(&result, &lines)
        }
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => print!("{text}"),
    }
    Ok(Exit::Ok)
}
