//! `servebench export RESULT [--table trials|requests] [--format csv|parquet] [-o FILE]`: a
//! result as a table for dataframes (`pd.read_csv`, `pd.read_parquet`), one row per trial or
//! per request of the sidecar. The tables are `servebench_result::export`'s; docs/export.md
//! lists the columns and their types.

use std::io::{IsTerminal, Write};
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
                  mean ITL, E2E, token counts, error and flags. csv and parquet hold the same \
                  columns; parquet keeps their types (integers, floats, strings, booleans; \
                  nulls where the CSV has an empty cell). Columns: docs/export.md.\n\n\
                  Exit codes: 0 written; 2 usage or I/O error (no result, no sidecar for \
                  `requests`, an output that cannot be written)."
)]
pub(crate) struct Args {
    /// A result file (`results/<spec>/<run id>.json`), or a results folder or its `latest`
    /// file for the folder's newest run.
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

#[derive(Debug, Clone, Copy, PartialEq, clap::ValueEnum)]
enum Format {
    /// Comma-separated values with a header row (RFC 4180 quoting).
    Csv,
    /// Apache Parquet: typed columns, one row group, uncompressed.
    Parquet,
}

/// Write the table.
pub(crate) fn run(args: Args) -> Result<Exit> {
    // Parquet is binary: to a file or a pipe, never onto a terminal.
    if args.format == Format::Parquet && args.output.is_none() && std::io::stdout().is_terminal() {
        bail!(
            "--format parquet writes a binary file: give `-o FILE` (e.g. `-o trials.parquet`) \
             or redirect stdout to a file"
        );
    }
    let path = super::resolve_result(&args.result)?;
    let result = servebench_result::load_result(&path)
        .with_context(|| format!("reading {}", path.display()))?;
    let table = match args.table {
        Table::Trials => servebench_result::export::trials(&result),
        Table::Requests => {
            let sidecar = servebench_result::sidecar_path(&path);
            if !sidecar.exists() {
                bail!(
                    "{} has no request records: {} does not exist (an imported result keeps \
                     only the tool's summary; `--table trials` exports what it has)",
                    path.display(),
                    sidecar.display()
                );
            }
            let lines = servebench_result::read_requests(&sidecar)
                .with_context(|| format!("reading {}", sidecar.display()))?;
            servebench_result::export::requests(&result, &lines)
        }
    };
    let bytes = match args.format {
        Format::Csv => table.to_csv().into_bytes(),
        Format::Parquet => table
            .to_parquet()
            .with_context(|| format!("exporting {}", path.display()))?,
    };
    match &args.output {
        Some(out) => std::fs::write(out, bytes).with_context(|| {
            format!(
                "writing {} (the -o file; its folder must exist and be writable)",
                out.display()
            )
        })?,
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(&bytes)
                .and_then(|()| stdout.flush())
                .context("writing the table to stdout")?;
        }
    }
    Ok(Exit::Ok)
}
