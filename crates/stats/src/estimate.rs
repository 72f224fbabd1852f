//! The serde-able estimate every interval method returns.
//!
//! Shape borrowed from criterion.rs `src/estimate.rs`: a point estimate, a confidence interval
//! with its level, and a standard error.

use serde::{Deserialize, Serialize};

/// A two-sided confidence interval `[lower, upper]` at confidence `level` (e.g. 0.95).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ConfidenceInterval {
    /// Confidence level, `1 − α`.
    pub level: f64,
    /// Lower bound.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
}

impl ConfidenceInterval {
    /// Whether `x` lies inside the closed interval.
    pub fn contains(&self, x: f64) -> bool {
        self.lower <= x && x <= self.upper
    }

    /// `upper − lower`.
    pub fn width(&self) -> f64 {
        self.upper - self.lower
    }
}

/// A point estimate with its confidence interval and standard error.
///
/// For log-scale estimates (geometric means, ratios) `point`, `lower` and `upper` are on the
/// original scale while `std_err` is the standard error *of the logarithm* (that is what the
/// interval was built from); each function says which.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Point estimate.
    pub point: f64,
    /// Confidence interval around it.
    pub ci: ConfidenceInterval,
    /// Standard error (of the log for log-scale estimates).
    pub std_err: f64,
}
