//! `servebench validate SPEC...`

use std::path::{Path, PathBuf};

use anyhow::Result;
use servebench_runner::run::check_inputs;
use servebench_spec::LoadError;
use servebench_spec::overrides::{self, OverrideError};

use crate::exit::Exit;

/// Arguments of `validate`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Besides the spec itself, the files it names are read as `run` \
                  reads them before anything starts: a prompt file's or trace's every line \
                  (problems at the file's own line), the prompts a trial needs, a local \
                  tokenizer and `target.tls.ca_file`. No server is needed.\n\nExit codes: 0 \
                  valid; 1 invalid (the spec or a file it names); 2 a spec cannot be read."
)]
pub(crate) struct Args {
    /// Spec files to check.
    #[arg(required = true)]
    specs: Vec<PathBuf>,
    /// Print diagnostics as JSON (one object per file) on stdout.
    #[arg(long)]
    json: bool,
    /// The same overrides `run` takes, applied to every file: checks the spec `run --set …`
    /// would measure.
    #[command(flatten)]
    overrides: super::SpecOverrides,
}

/// Check every file and the files it names (prompts, trace, tokenizer, CA); exit 1 when
/// any is invalid, 2 when a spec cannot be read.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let overrides = args.overrides.list()?;
    let mut worst = Exit::Ok;
    let mut reports = Vec::new();
    for path in &args.specs {
        let file = path.display().to_string();
        let loaded = match servebench_spec::load(path) {
            Ok(spec) => match overrides::apply(&spec, &overrides, &file) {
                Ok(s) => Ok(s),
                Err(OverrideError::Invalid(e)) => Err(LoadError::Invalid(e)),
                // An unknown key or a value that is not YAML is the command line's error,
                // the same for every file: a usage error.
                Err(e) => return Err(e.into()),
            },
            Err(e) => Err(e),
        };
        match loaded {
            Ok(spec) => {
                // The files the spec names, read as `run` reads them before anything starts.
                let dir = path.parent().unwrap_or(Path::new("."));
                let inputs = check_inputs(&spec.file, dir);
                let errors = inputs.iter().filter(|p| p.is_error()).count();
                if errors > 0 && worst == Exit::Ok {
                    worst = Exit::Failed;
                }
                // What `run` refuses before it starts anything: say it here too.
                let unset = servebench_runner::run::unset_env(&spec.file);
                if args.json {
                    let unset: Vec<_> = unset
                        .iter()
                        .map(|(at, name)| serde_json::json!({"at": at, "name": name}))
                        .collect();
                    reports.push(serde_json::json!({
                        "file": file,
                        "valid": errors == 0,
                        "diagnostics": spec.warnings,
                        "inputs": inputs,
                        "unset_env": unset,
                    }));
                    continue;
                }
                for w in &spec.warnings {
                    eprintln!("{}", w.render(&file));
                }
                for p in &inputs {
                    eprintln!("{}", p.render());
                }
                for (at, name) in &unset {
                    eprintln!(
                        "{file}: warning: `{name}` ({at}) is not set in this environment: \
                         `servebench run` refuses to start until it is"
                    );
                }
                let warnings = spec.warnings.len() + inputs.len() - errors + unset.len();
                let counted =
                    |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
                let mut notes = Vec::new();
                if errors > 0 {
                    notes.push(counted(errors, "error"));
                }
                if warnings > 0 {
                    notes.push(counted(warnings, "warning"));
                }
                let notes = if notes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", notes.join(", "))
                };
                if errors > 0 {
                    eprintln!("{file}: the files it names have problems{notes}");
                } else {
                    println!("{file}: valid{notes}");
                }
            }
            Err(LoadError::Invalid(errors)) => {
                if args.json {
                    reports.push(serde_json::json!({"file": file, "valid": false, "diagnostics": errors.diagnostics}));
                } else {
                    eprintln!("{errors}");
                }
                if worst == Exit::Ok {
                    worst = Exit::Failed;
                }
            }
            Err(e @ LoadError::Io { .. }) => {
                if args.json {
                    reports.push(serde_json::json!({"file": file, "valid": false, "io_error": e.to_string()}));
                } else {
                    eprintln!("Error: {e}");
                }
                worst = Exit::Usage;
            }
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    }
    Ok(worst)
}
