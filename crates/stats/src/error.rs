//! The error type of the statistics crate.

use thiserror::Error;

/// Why a statistic could not be computed. Every variant says what was wrong with the input, so a
/// caller can turn it into a message ("2 trials: no interval below 3") without guessing.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    /// Fewer samples than the method needs (for example a t interval from fewer than 3 trials:
    /// docs/statistics-method.md gives no interval below 3).
    #[error("{what}: {n} sample(s), at least {required} needed")]
    TooFewSamples {
        /// What was being computed.
        what: &'static str,
        /// Samples given.
        n: usize,
        /// Samples required.
        required: usize,
    },
    /// A value the method cannot take: NaN, infinite, or (for log-scale methods) not > 0.
    #[error("{what}: value {value} at index {index} is not allowed ({why})")]
    InvalidValue {
        /// What was being computed.
        what: &'static str,
        /// Position of the first offending value.
        index: usize,
        /// The value (NaN and infinities included).
        value: f64,
        /// Which condition failed, e.g. "must be finite and > 0".
        why: &'static str,
    },
    /// A parameter outside its domain (a level outside (0, 1), a threshold ≤ 0, …).
    #[error("parameter `{name}` = {value} is out of range: {why}")]
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The allowed range, in words.
        why: &'static str,
    },
    /// The data carry no spread where the method divides by it (all values equal).
    #[error("{what}: zero variance, the statistic is undefined")]
    ZeroVariance {
        /// What was being computed.
        what: &'static str,
    },
    /// Histograms that cannot be merged or read (different precision, empty, …).
    #[error("histogram: {0}")]
    Histogram(String),
    /// A serialized histogram that could not be decoded.
    #[error("histogram decoding failed: {0}")]
    HistogramDecode(String),
    /// An iterative solution did not converge within its bound.
    #[error("{what}: no solution up to {limit}")]
    NoSolution {
        /// What was being solved.
        what: &'static str,
        /// The bound searched up to.
        limit: u64,
    },
}

/// Checks that `level` is a probability strictly inside (0, 1).
pub(crate) fn check_probability(name: &'static str, value: f64) -> Result<(), StatsError> {
    if value.is_finite() && value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidParameter {
            name,
            value,
            why: "must lie strictly between 0 and 1",
        })
    }
}

/// Checks that every value is finite.
pub(crate) fn check_finite(what: &'static str, values: &[f64]) -> Result<(), StatsError> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(index) => Err(StatsError::InvalidValue {
            what,
            index,
            value: values[index],
            why: "must be finite",
        }),
    }
}

/// Checks that every value is finite and strictly positive (log-scale methods).
pub(crate) fn check_positive(what: &'static str, values: &[f64]) -> Result<(), StatsError> {
    match values.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        None => Ok(()),
        Some(index) => Err(StatsError::InvalidValue {
            what,
            index,
            value: values[index],
            why: "must be finite and > 0 (log scale)",
        }),
    }
}

/// Checks that there are at least `required` values.
pub(crate) fn check_len(what: &'static str, n: usize, required: usize) -> Result<(), StatsError> {
    if n >= required {
        Ok(())
    } else {
        Err(StatsError::TooFewSamples { what, n, required })
    }
}
