//! Student-t confidence intervals for the mean of per-trial values, on the log scale (geometric
//! mean) and on the raw scale (arithmetic mean).
//!
//! Method (docs/statistics-method.md, "Intervals"): with `lᵢ = ln yᵢ`,
//! `CI = exp(l̄ ± t(1 − α/2, n − 1) · s_l/√n)`; the arithmetic form is `ȳ ± t · s/√n`.
//! Fewer than [`MIN_TRIALS_FOR_INTERVAL`] trials give no interval: the functions return
//! [`StatsError::TooFewSamples`].
//! Reference: Student (1908); Kalibera & Jones, "Rigorous benchmarking in reasonable time",
//! ISMM 2013 (trials as the unit); Limpert et al., "Log-normal distributions across the
//! sciences", BioScience 51(5), 2001 (geometric mean intervals).

use crate::distributions::t_quantile;
use crate::error::{StatsError, check_finite, check_len, check_positive, check_probability};
use crate::estimate::{ConfidenceInterval, Estimate};
use crate::summary::mean_var;

/// docs/statistics-method.md: "n < 3: no interval, say so".
pub const MIN_TRIALS_FOR_INTERVAL: usize = 3;

/// t interval for the mean of `values` on the raw scale: `ȳ ± t(1 − α/2, n − 1)·s/√n`,
/// `α = 1 − level`. `std_err` is `s/√n`. Method: Student's t. Reference: Student (1908).
pub fn mean_ci(values: &[f64], level: f64) -> Result<Estimate, StatsError> {
    check_probability("level", level)?;
    check_len("t interval", values.len(), MIN_TRIALS_FOR_INTERVAL)?;
    check_finite("t interval", values)?;
    raw_t_interval(values, level)
}

fn raw_t_interval(values: &[f64], level: f64) -> Result<Estimate, StatsError> {
    let n = values.len();
    let (m, var) = mean_var(values).ok_or(StatsError::TooFewSamples {
        what: "t interval",
        n,
        required: MIN_TRIALS_FOR_INTERVAL,
    })?;
    let se = (var / n as f64).sqrt();
    let t = t_quantile(1.0 - (1.0 - level) / 2.0, (n - 1) as f64)?;
    Ok(Estimate {
        point: m,
        ci: ConfidenceInterval {
            level,
            lower: m - t * se,
            upper: m + t * se,
        },
        std_err: se,
    })
}

/// t interval on the log scale, returned on the original scale: point = geometric mean
/// `exp(l̄)`, CI = `exp(l̄ ± t(1 − α/2, n − 1)·s_l/√n)`, `std_err` = `s_l/√n` (of the log).
/// Values must be > 0. Method: Student's t on logs. Reference: Limpert et al. (2001);
/// docs/statistics-method.md.
pub fn geometric_mean_ci(values: &[f64], level: f64) -> Result<Estimate, StatsError> {
    check_probability("level", level)?;
    check_len(
        "log-scale t interval",
        values.len(),
        MIN_TRIALS_FOR_INTERVAL,
    )?;
    check_positive("log-scale t interval", values)?;
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let e = raw_t_interval(&logs, level)?;
    Ok(Estimate {
        point: e.point.exp(),
        ci: ConfidenceInterval {
            level,
            lower: e.ci.lower.exp(),
            upper: e.ci.upper.exp(),
        },
        std_err: e.std_err,
    })
}

/// Prediction interval for one new value from earlier values, on the log scale:
/// `exp(l̄ ± t(1 − α/2, m − 1)·s_l·√(1 + 1/m))`. Used by the `implausible` rule ("outside the
/// prediction interval of earlier runs of the same fingerprint"). Needs ≥ 3 earlier values.
/// Method: Student's t prediction interval. Reference: Hahn & Meeker, *Statistical Intervals*
/// (1991) §4.7; bencher.dev t-test thresholds.
pub fn log_prediction_interval(
    earlier: &[f64],
    level: f64,
) -> Result<ConfidenceInterval, StatsError> {
    check_positive("prediction interval", earlier)?;
    let logs: Vec<f64> = earlier.iter().map(|v| v.ln()).collect();
    let ci = prediction_interval(&logs, level)?;
    Ok(ConfidenceInterval {
        level,
        lower: ci.lower.exp(),
        upper: ci.upper.exp(),
    })
}

/// Prediction interval for one new value from earlier values, on the raw scale:
/// `ȳ ± t(1 − α/2, m − 1)·s·√(1 + 1/m)`. Needs ≥ 3 earlier values. Method: Student's t
/// prediction interval. Reference: Hahn & Meeker, *Statistical Intervals* (1991) §4.7.
pub fn prediction_interval(earlier: &[f64], level: f64) -> Result<ConfidenceInterval, StatsError> {
    check_probability("level", level)?;
    check_len(
        "prediction interval",
        earlier.len(),
        MIN_TRIALS_FOR_INTERVAL,
    )?;
    check_finite("prediction interval", earlier)?;
    let m = earlier.len();
    let (mean, var) = mean_var(earlier).ok_or(StatsError::TooFewSamples {
        what: "prediction interval",
        n: m,
        required: MIN_TRIALS_FOR_INTERVAL,
    })?;
    let half = t_quantile(1.0 - (1.0 - level) / 2.0, (m - 1) as f64)?
        * var.sqrt()
        * (1.0 + 1.0 / m as f64).sqrt();
    Ok(ConfidenceInterval {
        level,
        lower: mean - half,
        upper: mean + half,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_trials_give_no_interval() {
        assert_eq!(
            geometric_mean_ci(&[1.0, 2.0], 0.95),
            Err(StatsError::TooFewSamples {
                what: "log-scale t interval",
                n: 2,
                required: 3
            })
        );
        assert!(mean_ci(&[1.0, 2.0], 0.95).is_err());
    }

    #[test]
    fn raw_interval_by_hand() {
        // mean 2, s = 1, n = 3, t(0.975, 2) = 4.302652729749464
        let e = mean_ci(&[1.0, 2.0, 3.0], 0.95).expect("valid");
        let half = 4.302_652_729_749_464 / 3f64.sqrt();
        assert!((e.ci.lower - (2.0 - half)).abs() < 1e-12);
        assert!((e.ci.upper - (2.0 + half)).abs() < 1e-12);
    }

    #[test]
    fn geometric_interval_is_multiplicative() {
        let e = geometric_mean_ci(&[100.0, 110.0, 121.0], 0.95).expect("valid");
        assert!((e.point - 110.0).abs() < 1e-9);
        // Symmetric on the log scale: lower·upper = point².
        assert!((e.ci.lower * e.ci.upper - e.point * e.point).abs() < 1e-6);
    }
}
