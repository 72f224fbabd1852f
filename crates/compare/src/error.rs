//! Why a comparison could not be made. Every variant is a usage problem the caller can fix
//! (the CLI maps them to exit code 2); problems with the *data* are never errors here: they
//! become flags and notes in the report.

use thiserror::Error;

/// A comparison that cannot be set up.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CompareError {
    /// A variant named on the command line is not in the result file.
    #[error("variant `{name}` is not in {file} (its variants: {available})")]
    UnknownVariant {
        /// The name asked for.
        name: String,
        /// The result file.
        file: String,
        /// Comma-separated variant names of that file.
        available: String,
    },
    /// A result file whose spec names no baseline variant.
    #[error("{file} has no baseline variant: pick one with --baseline-variant")]
    NoBaseline {
        /// The result file.
        file: String,
    },
    /// Within one run there is nothing to compare the baseline with.
    #[error(
        "{file} has only the variant `{baseline}`: give a second result file to compare \
         across runs, or a run with two or more variants"
    )]
    NothingToCompare {
        /// The result file.
        file: String,
        /// Its only variant.
        baseline: String,
    },
    /// The baseline and candidate are the same variant of the same run.
    #[error("baseline and candidate are the same variant `{name}` of the same run")]
    SameArm {
        /// The variant.
        name: String,
    },
    /// A metric that is not in the catalogue.
    #[error("unknown metric `{name}` (`servebench schema` lists the catalogue)")]
    UnknownMetric {
        /// The name given.
        name: String,
    },
    /// A threshold or α outside its range.
    #[error("{name} = {value} is out of range: {why}")]
    InvalidSetting {
        /// `threshold`, `alpha`, or `thresholds.<metric>`.
        name: String,
        /// The value given.
        value: f64,
        /// The allowed range.
        why: &'static str,
    },
}
