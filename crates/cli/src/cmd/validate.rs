//! `servebench validate SPEC...`

use std::path::PathBuf;

use anyhow::Result;
use servebench_spec::LoadError;

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
}

/// Check every file; exit 1 when any is invalid, 2 when any cannot be read.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let mut worst = Exit::Ok;
    let mut reports = Vec::new();
    for path in &args.specs {
        let file = path.display().to_string();
        match servebench_spec::load(path) {
            Ok(spec) => {
                // What `run` refuses before it starts anything: say it here too.
                let unset = servebench_runner::run::unset_env(&spec.file);
                if args.json {
                    let unset: Vec<_> = unset
                        .iter()
                        .map(|(at, name)| serde_json::json!({"at": at, "name": name}))
                        .collect();
                    reports.push(serde_json::json!({"file": file, "valid": true, "diagnostics": spec.warnings, "unset_env": unset}));
                } else {
                    for w in &spec.warnings {
                        eprintln!("{}", w.render(&file));
                    }
                    for (at, name) in &unset {
                        eprintln!(
                            "{file}: warning: `{name}` ({at}) is not set in this environment: \
                             `servebench run` refuses to start until it is"
                        );
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
