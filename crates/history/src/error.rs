//! The error type of the history crate: only what stops the whole history. A file that is
//! not a readable result is skipped with a note ([`crate::model::Skipped`]), never an error.

use std::path::PathBuf;

use thiserror::Error;

/// Why no history could be made.
#[derive(Debug, Error)]
pub enum HistoryError {
    /// A path given does not exist.
    #[error("{}: no such file or folder (give result files, folders of them, or --git RANGE PATH)", path.display())]
    NoSuchPath {
        /// The path as given.
        path: PathBuf,
    },
    /// A path or git range that holds no readable result: a typo must not pass a gate.
    #[error(
        "{place} holds no servebench result: {why}. Give result files, folders of them, or \
         --git RANGE PATH with the path as the repository names it"
    )]
    NoRuns {
        /// The path, or the git range and path, as given.
        place: String,
        /// Why nothing was read.
        why: String,
    },
    /// `--git` given an option instead of a revision: never passed to git, where it could
    /// write a file (`--output=FILE`).
    #[error(
        "--git {range}: a revision or a range starts with a name, not `-` (`main`, \
         `v1.2..HEAD`); a value that starts with `-` is never passed to git, where it would be \
         read as an option"
    )]
    NotARevision {
        /// The value given.
        range: String,
    },
    /// A folder could not be listed.
    #[error("cannot list {}", path.display())]
    Read {
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// git could not be started.
    #[error("cannot run git (is it installed?)")]
    GitSpawn {
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A git command failed.
    #[error("`{command}` failed: {stderr}")]
    Git {
        /// The command.
        command: String,
        /// What git said.
        stderr: String,
    },
    /// A metric that is not in the catalogue.
    #[error(
        "unknown metric `{name}` (servebench compare's metrics are the catalogue's: docs/metrics.md)"
    )]
    UnknownMetric {
        /// The name given.
        name: String,
    },
    /// `--since` names no run that was read.
    #[error(
        "--since `{run}` is not among the runs read (give a run id or the path of a result file read)"
    )]
    UnknownRun {
        /// The run id or file given.
        run: String,
    },
    /// A setting out of range.
    #[error("{name} = {value} is out of range: {why}")]
    InvalidSetting {
        /// The setting.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The allowed range.
        why: &'static str,
    },
}
