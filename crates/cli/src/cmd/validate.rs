//! `servebench validate SPEC...`

use std::path::PathBuf;

use anyhow::Result;
use servebench_spec::LoadError;
use servebench_spec::overrides::{self, OverrideError};

use crate::exit::Exit;

/// Arguments of `validate`.
#[derive(Debug, clap::Args)]
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

/// Check every file; exit 1 when any is invalid, 2 when any cannot be read.
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
                if args.json {
                    reports.push(serde_json::json!({"file": file, "valid": true, "diagnostics": spec.warnings}));
                } else {
                    for w in &spec.warnings {
                        eprintln!("{}", w.render(&file));
                    }
                    let n = spec.warnings.len();
                    println!(
                        "{file}: valid{}",
                        if n > 0 {
                            format!(" ({n} warning{})", if n == 1 { "" } else { "s" })
                        } else {
                            String::new()
                        }
                    );
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
