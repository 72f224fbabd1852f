//! `servebench from sglang|vllm -- ARGV…`: a peer's benchmark command line as a spec on
//! stdout, every flag accounted for.

use anyhow::Result;
use servebench_spec::peer::{self, Outcome, argv::shell_words};

use crate::exit::Exit;

/// Which tool's command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Peer {
    /// `python3 -m sglang.bench_serving …` (SGLang 0.5.23's flags).
    Sglang,
    /// `vllm bench serve …` or `benchmarks/benchmark_serving.py …` (vLLM 0.33.0's flags).
    Vllm,
}

/// Arguments of `from`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Give the command after `--`, as typed or as one quoted string:\n  \
                  servebench from sglang -- python3 -m sglang.bench_serving --backend sglang \
                  --dataset-name random --random-input-len 512 > spec.yaml\n\nThe spec goes \
                  to stdout, headed by comments saying what became of every flag (mapped, \
                  the tool's defaults written out, ignored, refused) and listing flags the \
                  tool does not have. docs/import.md says how each flag is read.\n\nExit \
                  codes: 0 every flag translated; 1 a flag refused or unknown (the spec is \
                  printed, but it does not measure what the command did), or the spec does \
                  not validate; 2 the command line cannot be read (a missing value, an \
                  ambiguous prefix)."
)]
pub(crate) struct Args {
    /// The tool whose command line follows.
    #[arg(value_enum)]
    tool: Peer,
    /// The command line (program words such as `python3 -m sglang.bench_serving` are
    /// skipped).
    #[arg(last = true, required = true, value_name = "ARGV")]
    argv: Vec<String>,
}

/// Translate and print.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let argv = match args.argv.as_slice() {
        [one] if one.contains(char::is_whitespace) => shell_words(one)?,
        many => many.to_vec(),
    };
    let t = match args.tool {
        Peer::Sglang => peer::sglang::translate(&argv),
        Peer::Vllm => peer::vllm::translate(&argv),
    }?;
    let yaml = t.to_yaml(&argv.join(" "));
    print!("{yaml}");
    let name = match args.tool {
        Peer::Sglang => "from-sglang.yaml",
        Peer::Vllm => "from-vllm.yaml",
    };
    let valid = match servebench_spec::parse_str(&yaml, name) {
        Ok(_) => true,
        Err(e) => {
            eprintln!("{e}");
            false
        }
    };
    eprintln!(
        "servebench from: {} flag(s) mapped, {} default(s) of {} written out, {} ignored, {} \
         refused, {} unknown{}",
        t.count(Outcome::Mapped),
        t.count(Outcome::Default),
        t.tool,
        t.count(Outcome::Ignored),
        t.count(Outcome::Refused),
        t.unknown.len() + t.stray.len(),
        if t.needs.is_empty() {
            String::new()
        } else {
            format!(
                "; set before running: {}",
                t.needs
                    .iter()
                    .filter_map(|n| n.split(' ').next())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    for l in t.lines.iter().filter(|l| l.outcome == Outcome::Refused) {
        eprintln!("  refused: {} → {}", l.flag, l.text);
    }
    for u in t.unknown.iter().chain(&t.stray) {
        eprintln!("  unknown to {}: {u}", t.tool);
    }
    Ok(if t.faithful() && valid {
        Exit::Ok
    } else {
        Exit::Failed
    })
}
