//! `servebench`: reproducible LLM-serving benchmarks from a committed spec.
//!
//! The binary wires the crates together and is the only crate that depends on all of them:
//! servebench-spec (`validate`, `plan`), servebench-runner (`run`, handed
//! servebench-compare's `Sequential` as its `Sequencer`), servebench-compare (`compare`,
//! `rerun`), servebench-report (`report`), servebench-history (`history`, and the series
//! view `compare` adds across runs), servebench-result (`import`, `schema`, the
//! end-of-run table) and servebench-sim (`sim`). One module per subcommand in `cmd`.
//!
//! Exit codes (every command): 0 success (warnings are printed, not fatal); 1 the thing
//! checked failed (invalid spec, failed run, a `--fail-on` gate); 2 usage or I/O error;
//! 130 interrupted (partial results kept).

mod cmd;
mod exit;

use clap::{Parser, Subcommand};

use crate::exit::Exit;

/// Reproducible LLM-serving benchmarks: a spec you commit, a runner that carries it out, and
/// statistics that say whether a difference is real.
#[derive(Debug, Parser)]
#[command(name = "servebench", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check spec files: YAML syntax, the JSON Schema and semantic rules; print every problem.
    Validate(cmd::validate::Args),
    /// Print the JSON Schema of the spec format.
    Schema(cmd::schema::Args),
    /// Print the trials of a spec in the order they will run, with server starts and the hash.
    Plan(cmd::plan::Args),
    /// Run a spec: start servers, verify variants, measure trials, write the result file.
    Run(cmd::run::Args),
    /// Check a running endpoint before a run: its engine and version, and every guarantee a
    /// spec relies on (streaming, usage, output lengths, tokenizer, context limit, verify
    /// rules, metrics), with what to set.
    Probe(cmd::probe::Args),
    /// Compare variants with confidence intervals, verdicts and re-baseline flags.
    Compare(cmd::compare::Args),
    /// Write a report folder: Markdown, one self-contained HTML file, SVG plots, trials CSV.
    Report(cmd::report::Args),
    /// Committed results as series of runs: change points, outlier runs, stale baselines.
    History(cmd::history::Args),
    /// Run the spec stored in a published result again and say whether each value reproduces.
    Rerun(cmd::rerun::Args),
    /// Submit a run to Slurm: write the batch script beside the results and `sbatch` it.
    Submit(cmd::submit::Args),
    /// Read an SGLang or vLLM benchmark result file as a servebench result (one trial).
    Import(cmd::import::Args),
    /// Turn an SGLang or vLLM benchmark command line into a spec (on stdout).
    From(cmd::from::Args),
    /// Write a result's trials or request records as a table for dataframes (CSV).
    Export(cmd::export::Args),
    /// List a profiler trace's kernels by name, category, calls and share; with two traces,
    /// suggest a `kernel` verify rule that tells them apart.
    Kernels(cmd::kernels::Args),
    /// Serve the embedded simulator: an OpenAI-compatible continuous-batching engine model.
    Sim(Box<servebench_sim::SimArgs>),
}

/// SIGPIPE stays ignored in every command (Rust's runtime ignores it before `main`), so a
/// write to a closed socket or pipe is an `EPIPE` error, never a death by signal: `probe
/// https://` of a plain-HTTP server, whose answer closes the connection while the TLS hello
/// is written, used to die of SIGPIPE (exit 141) once the disposition was reset. A printing
/// command whose reader went away (`servebench plan … | head -1`) ends quietly on that
/// error (exit 0, nothing on stderr), through [`closed_stdout`]; `run`, `rerun` and `sim`
/// keep going (a closed pipe must not stop a measurement before it stops its server).
static PRINTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a panic message is `print!`'s on a closed stdout.
fn is_closed_stdout_panic(msg: &str) -> bool {
    msg.contains("failed printing to stdout") && msg.contains("os error 32")
}

/// `print!` panics on `EPIPE`: a printing command ends quietly there instead.
fn end_quietly_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if PRINTING.load(std::sync::atomic::Ordering::Relaxed) && is_closed_stdout_panic(msg) {
            std::process::exit(Exit::Ok as i32);
        }
        default(info);
    }));
}

/// An error that is stdout's `EPIPE` (a command that writes with `?`, e.g. `export`).
fn closed_stdout(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A file-size limit (`ulimit -f`, RLIMIT_FSIZE) must fail a write with EFBIG, which the
/// result store handles (rescue files, the error naming them, servers stopped), instead of
/// killing servebench with SIGXFSZ, which would lose the trial being written and orphan its
/// server. A caught signal (unlike an ignored one) is reset to its default in the programs
/// servebench starts, so a launched server behaves as it would outside servebench. Not for
/// `sim`, which is such a server.
#[allow(unsafe_code)]
fn survive_file_size_limits() {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    extern "C" fn on_xfsz(_: nix::libc::c_int) {}
    let action = SigAction::new(
        SigHandler::Handler(on_xfsz),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    // SAFETY: the handler does nothing (async-signal-safe); installed at the start of main
    // before any other thread exists.
    let _ = unsafe { sigaction(Signal::SIGXFSZ, &action) };
}

/// Every option that takes a value takes a negative number as that value, in every
/// subcommand: `--gate-margin -0.05` reaches the option's own check ("the margin is a
/// fraction in (0, 1)"), where clap alone read `-0` as an unknown short flag.
fn negative_numbers_are_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    })
    .mut_subcommands(negative_numbers_are_values)
}

/// The command line, parsed as [`negative_numbers_are_values`] says.
fn parse() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let mut matches = negative_numbers_are_values(Cli::command()).try_get_matches()?;
    Cli::from_arg_matches_mut(&mut matches)
}

fn main() {
    let cli = match parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            };
            let _ = e.print();
            std::process::exit(code as i32);
        }
    };
    let printing = !matches!(
        cli.command,
        Command::Run(_) | Command::Rerun(_) | Command::Sim(_)
    );
    // probe's own errors may be a socket's EPIPE: only its printing ends quietly.
    let writes_stdout_only = printing && !matches!(cli.command, Command::Probe(_));
    PRINTING.store(printing, std::sync::atomic::Ordering::Relaxed);
    end_quietly_on_closed_stdout();
    if !matches!(cli.command, Command::Sim(_)) {
        survive_file_size_limits();
    }
    let result = match cli.command {
        Command::Validate(a) => cmd::validate::run(a),
        Command::Schema(a) => cmd::schema::run(a),
        Command::Plan(a) => cmd::plan::run(a),
        Command::Run(a) => cmd::run::run_cmd(a),
        Command::Probe(a) => cmd::probe::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::History(a) => cmd::history::run(a),
        Command::Rerun(a) => cmd::rerun::run_cmd(a),
        Command::Submit(a) => cmd::submit::run(a),
        Command::Import(a) => cmd::import::run(a),
        Command::From(a) => cmd::from::run(a),
        Command::Export(a) => cmd::export::run(a),
        Command::Kernels(a) => cmd::kernels::run(a),
        Command::Sim(a) => cmd::sim::run(*a),
    };
    let code = match result {
        Ok(code) => code,
        Err(e) if writes_stdout_only && closed_stdout(&e) => Exit::Ok,
        Err(e) => {
            eprintln!(
                "Error: {}",
                servebench_spec::text::printable(&format!("{e:#}"))
            );
            Exit::Usage
        }
    };
    std::process::exit(code as i32);
}

#[cfg(test)]
mod tests {
    /// Every subcommand's arguments are consistent (unique ids, valid defaults): clap checks
    /// this only when a command is first parsed, so a clash (the gate's `--gate-metric` once
    /// shared an id with `--metric`) would otherwise surface as a panic in the hands of a user.
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
        super::negative_numbers_are_values(super::Cli::command()).debug_assert();
    }
}
