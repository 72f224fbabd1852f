//! One module per subcommand.

pub mod compare;
pub mod plan;
pub mod report;
pub mod run;
pub mod schema;
pub mod sim;
pub mod validate;

use std::path::Path;

use anyhow::Result;
use servebench_spec::{LoadError, Spec};

/// Load a spec; `Ok(None)` after printing its problems when it is invalid.
pub fn load_spec(path: &Path) -> Result<Option<Spec>> {
    match servebench_spec::load(path) {
        Ok(spec) => Ok(Some(spec)),
        Err(LoadError::Invalid(errors)) => {
            eprintln!("{errors}");
            Ok(None)
        }
        Err(e @ LoadError::Io { .. }) => Err(e.into()),
    }
}

/// Print a spec's warnings to stderr.
pub fn print_warnings(spec: &Spec, file: &str) {
    for w in &spec.warnings {
        eprintln!("{}", w.render(file));
    }
}
