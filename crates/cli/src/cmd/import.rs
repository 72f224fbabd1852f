//! `servebench import sglang|vllm FILE`: another tool's result file as servebench result
//! files (`origin: imported`, one trial each), ready for `compare` and `report`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use servebench_result::import::{ImportOptions, ImportTool, import_file};
use servebench_result::write_json_atomic;
use servebench_spec::{TokenCount, TokenRange};

use crate::exit::Exit;

/// Which tool wrote the file.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Tool {
    /// `python -m sglang.bench_serving --output-file FILE` (JSON lines).
    Sglang,
    /// `vllm bench serve --save-result` (JSON; JSON lines with --append-result).
    Vllm,
}

/// Arguments of `import`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Each run in FILE becomes one result file \
                  `<results-dir>/<name>/imported-<tool>-<hash>[-l<line>].json` with one \
                  trial, whatever provenance the file carries, and notes where the tool's \
                  definitions differ from servebench's (docs/import.md). `compare` flags it: \
                  too-few-trials (one trial), stale-baseline and not-comparable against a \
                  servebench run.\n\nWith --as-trials, every run of the FILEs (each line of \
                  a JSON-lines file, each file) becomes one trial of one arm of one result \
                  `imported-<tool>-<hash>-x<N>.json`: N repeated runs of the same workload \
                  give an interval and a verdict. Runs that measured different workloads are \
                  refused, naming the first difference.\n\nExit codes: 0 imported; 2 unreadable file, not the \
                  tool's format, or bad option.")]
pub(crate) struct Args {
    /// The tool that wrote FILE.
    #[arg(value_enum)]
    tool: Tool,
    /// The result file(s).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Pool every run of the files (in order) as the trials of one arm of one result,
    /// instead of one single-trial result per run.
    #[arg(long)]
    as_trials: bool,
    /// Folder that receives `<name>/<run id>.json`.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// Name of the result (`metadata.name`; default `<tool>-<model>`).
    #[arg(long)]
    name: Option<String>,
    /// Variant name (default: the tool's backend), e.g. the name of the same arm in a
    /// servebench run to compare with.
    #[arg(long)]
    variant: Option<String>,
    /// The model, when the file does not record it (SGLang's does not).
    #[arg(long)]
    model: Option<String>,
    /// Input tokens of the workload, N or MIN..MAX, when the file does not record them
    /// (vLLM's does not).
    #[arg(long, value_name = "N", value_parser = parse_tokens)]
    input_tokens: Option<TokenCount>,
    /// Output tokens of the workload, N or MIN..MAX.
    #[arg(long, value_name = "N", value_parser = parse_tokens)]
    output_tokens: Option<TokenCount>,
    /// Only the run on this line of a JSON-lines file (from 1).
    #[arg(long)]
    line: Option<usize>,
    /// Print the result(s) to stdout instead of writing files.
    #[arg(long)]
    stdout: bool,
}

fn parse_tokens(s: &str) -> Result<TokenCount, String> {
    let bad =
        || format!("`{s}` is not a token count: write a number > 0 (128) or a range (64..128)");
    match s.split_once("..") {
        Some((a, b)) => {
            let (min, max) = (
                a.trim().parse::<u32>().map_err(|_| bad())?,
                b.trim().parse::<u32>().map_err(|_| bad())?,
            );
            if min == 0 || max < min {
                return Err(bad());
            }
            Ok(TokenCount::Range(TokenRange { min, max }))
        }
        None => match s.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(TokenCount::Fixed(n)),
            _ => Err(bad()),
        },
    }
}

/// Import and write.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let tool = match args.tool {
        Tool::Sglang => ImportTool::Sglang,
        Tool::Vllm => ImportTool::Vllm,
    };
    let opts = ImportOptions {
        name: args.name.clone(),
        variant: args.variant.clone(),
        model: args.model.clone(),
        input_tokens: args.input_tokens,
        output_tokens: args.output_tokens,
        line: args.line,
    };
    let mut results = Vec::new();
    for file in &args.files {
        results.extend(import_file(tool, file, &opts)?);
    }
    if args.as_trials {
        results = vec![servebench_result::import::pool_as_trials(results)?];
    }
    for r in &results {
        if args.stdout {
            println!(
                "{}",
                serde_json::to_string_pretty(r).context("serialising the result")?
            );
            continue;
        }
        let path = args
            .results_dir
            .join(&r.spec_name)
            .join(format!("{}.json", r.run_id));
        write_json_atomic(&path, r)?;
        println!("imported: {}", path.display());
        if let Some(info) = &r.import {
            for n in &info.notes {
                eprintln!("  note: {n}");
            }
        }
    }
    Ok(Exit::Ok)
}
