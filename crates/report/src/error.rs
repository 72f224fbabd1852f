//! Why a report could not be made. Problems with the *data* (failed trials, missing
//! histograms, flags) are never errors: they are said in the report itself.

use std::path::PathBuf;

use thiserror::Error;

/// A report that cannot be set up or written.
#[derive(Debug, Error)]
pub enum ReportError {
    /// `--cdf-point` names no sweep point of the result.
    #[error("--cdf-point {asked:?} matches no sweep point (the points: {available})")]
    UnknownPoint {
        /// What was asked for.
        asked: String,
        /// The points' short labels, comma-separated.
        available: String,
    },
    /// A variant named for the report is not in the result.
    #[error("variant `{name}` is not in {file} (its variants: {available})")]
    UnknownVariant {
        /// The name asked for.
        name: String,
        /// The result file.
        file: String,
        /// Its variants, comma-separated.
        available: String,
    },
    /// The result has no variant with a recorded trial.
    #[error("{file} has no recorded trial: there is nothing to report")]
    NoTrials {
        /// The result file.
        file: String,
    },
    /// The comparison could not be set up (unknown variant or metric, bad θ or α).
    #[error(transparent)]
    Compare(#[from] servebench_compare::CompareError),
    /// A plot could not be drawn (plotters reported an error).
    #[error("drawing {file}: {message}")]
    Plot {
        /// The SVG file being drawn.
        file: String,
        /// plotters' message.
        message: String,
    },
    /// The output folder or a file in it could not be written.
    #[error("writing {path}: {error}")]
    Write {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
}

impl ReportError {
    /// A plotters error while drawing `file`.
    pub(crate) fn plot(file: &str, e: impl std::fmt::Display) -> Self {
        ReportError::Plot {
            file: file.to_owned(),
            message: e.to_string(),
        }
    }
}
