//! `servebench kernels TRACE…`: a profiler trace's kernels by name, category, calls and
//! share of the busy time, read as `evidence.kernels` reads them
//! (`servebench_result::kernels`), and for two traces a `kernel` rule that tells them apart
//! (docs/kernels.md, "Listing a trace's kernels").

use std::path::PathBuf;

use anyhow::{Context, Result};
use servebench_result::kernels::{listing, read_rank};

use crate::exit::Exit;

/// Arguments of `kernels`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// PyTorch profiler traces (`*.pt.trace.json`, gzipped or not): one per rank or per
    /// variant.
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    /// The longest kernels listed per trace (0: every name).
    #[arg(long, default_value_t = 25)]
    top: usize,
}

/// List each trace's kernels; with two, suggest a rule that tells them apart.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let mut ranks = Vec::new();
    for path in &args.traces {
        let r = read_rank(path).with_context(|| {
            format!(
                "reading {} as a PyTorch profiler trace (a Chrome trace JSON, `.json` or \
                 `.json.gz`, as the engines' profilers write them)",
                path.display()
            )
        })?;
        print!("{}", listing::listing(&r, args.top));
        println!();
        ranks.push(r);
    }
    if let [a, b] = ranks.as_slice() {
        println!("a rule that tells them apart (docs/kernels.md):");
        print!("{}", listing::suggest(a, b));
    }
    Ok(Exit::Ok)
}
