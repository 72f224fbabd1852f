//! Welch's unequal-variance t-test, with fractional degrees of freedom, on raw values and on
//! log values (the ratio candidate/baseline).
//!
//! Method (docs/statistics-method.md, "Baseline against candidate"): `d = x̄_B − x̄_A`, `SE = √(s²_A/n_A + s²_B/n_B)`,
//! `ν = SE⁴ / Σ (s²_i/n_i)²/(n_i − 1)` (Welch–Satterthwaite), `t = d/SE`,
//! `p = 2(1 − F_ν(|t|))`, `CI = d ± t(1 − α/2, ν)·SE`. On logs, `exp` of that CI is the CI of
//! the ratio of geometric means. Arm `A` is the baseline, `B` the candidate.
//! Reference: B. L. Welch, "The generalization of Student's problem when several different
//! population variances are involved", Biometrika 34, 1947; F. E. Satterthwaite (1946);
//! scipy `stats.ttest_ind(equal_var=False)`.

use serde::{Deserialize, Serialize};

use crate::distributions::{t_quantile, t_two_sided_p};
use crate::error::{StatsError, check_finite, check_len, check_positive, check_probability};
use crate::estimate::{ConfidenceInterval, Estimate};
use crate::interval::MIN_TRIALS_FOR_INTERVAL;
use crate::summary::mean_var;

/// Result of a Welch test of candidate − baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WelchTest {
    /// `d = mean(candidate) − mean(baseline)` (of logs for the log variant).
    pub diff: f64,
    /// `SE = √(s²_A/n_A + s²_B/n_B)`.
    pub std_err: f64,
    /// Welch–Satterthwaite degrees of freedom (fractional).
    pub df: f64,
    /// `t = d/SE`.
    pub t: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// `d ± t(1 − α/2, ν)·SE`.
    pub ci: ConfidenceInterval,
}

/// Welch test on the logs plus the ratio of geometric means it implies.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioTest {
    /// The test on `ln` values: `diff` is the log ratio.
    pub log: WelchTest,
    /// Ratio candidate/baseline of geometric means: point `exp(d)`, CI `exp(d ± t·SE)`,
    /// `std_err` the SE of the log ratio.
    pub ratio: Estimate,
}

/// Welch's t-test of `candidate − baseline` on raw values at confidence `level` (module docs).
/// Needs ≥ 3 values per arm (no interval below 3) and some variance.
pub fn welch(baseline: &[f64], candidate: &[f64], level: f64) -> Result<WelchTest, StatsError> {
    check_probability("level", level)?;
    check_len(
        "Welch test (baseline)",
        baseline.len(),
        MIN_TRIALS_FOR_INTERVAL,
    )?;
    check_len(
        "Welch test (candidate)",
        candidate.len(),
        MIN_TRIALS_FOR_INTERVAL,
    )?;
    check_finite("Welch test (baseline)", baseline)?;
    check_finite("Welch test (candidate)", candidate)?;
    let too_few = StatsError::TooFewSamples {
        what: "Welch test",
        n: 0,
        required: MIN_TRIALS_FOR_INTERVAL,
    };
    let (ma, va) = mean_var(baseline).ok_or(too_few.clone())?;
    let (mb, vb) = mean_var(candidate).ok_or(too_few)?;
    let (na, nb) = (baseline.len() as f64, candidate.len() as f64);
    let (wa, wb) = (va / na, vb / nb);
    let se2 = wa + wb;
    if se2 <= 0.0 || !se2.is_finite() {
        return Err(StatsError::ZeroVariance {
            what: "Welch test (both arms constant)",
        });
    }
    let std_err = se2.sqrt();
    let df = se2 * se2 / (wa * wa / (na - 1.0) + wb * wb / (nb - 1.0));
    let diff = mb - ma;
    let (t, p, ci) = t_statistic(diff, std_err, df, level)?;
    Ok(WelchTest {
        diff,
        std_err,
        df,
        t,
        p,
        ci,
    })
}

/// The t statistic of a difference, its two-sided p-value and its `level` interval
/// `diff ± t(1 − (1 − level)/2, df)·std_err`: the common end of Welch's test and the pooled
/// (Student) test, which differ only in `std_err` and `df`.
pub(crate) fn t_statistic(
    diff: f64,
    std_err: f64,
    df: f64,
    level: f64,
) -> Result<(f64, f64, ConfidenceInterval), StatsError> {
    let t = diff / std_err;
    let p = t_two_sided_p(t, df)?;
    let half = t_quantile(1.0 - (1.0 - level) / 2.0, df)? * std_err;
    let ci = ConfidenceInterval {
        level,
        lower: diff - half,
        upper: diff + half,
    };
    Ok((t, p, ci))
}

/// Welch's t-test on `ln` values and the ratio candidate/baseline of geometric means with its
/// CI `exp(d ± t(1 − α/2, ν)·SE)` (docs/statistics-method.md, "Baseline against candidate"). Values must be > 0.
pub fn welch_log_ratio(
    baseline: &[f64],
    candidate: &[f64],
    level: f64,
) -> Result<RatioTest, StatsError> {
    check_positive("Welch log test (baseline)", baseline)?;
    check_positive("Welch log test (candidate)", candidate)?;
    let la: Vec<f64> = baseline.iter().map(|v| v.ln()).collect();
    let lb: Vec<f64> = candidate.iter().map(|v| v.ln()).collect();
    let log = welch(&la, &lb, level)?;
    Ok(RatioTest {
        log,
        ratio: Estimate {
            point: log.diff.exp(),
            ci: ConfidenceInterval {
                level,
                lower: log.ci.lower.exp(),
                upper: log.ci.upper.exp(),
            },
            std_err: log.std_err,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_variances_and_sizes_give_pooled_df() {
        // With equal n and equal s², Welch's ν = 2n − 2.
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [2.0, 3.0, 4.0, 5.0];
        let w = welch(&a, &b, 0.95).expect("valid");
        assert!((w.df - 6.0).abs() < 1e-12);
        assert!((w.diff - 1.0).abs() < 1e-15);
        assert!(w.ci.contains(w.diff));
    }

    #[test]
    fn constant_arms_are_an_error() {
        assert!(matches!(
            welch(&[1.0; 3], &[2.0; 3], 0.95),
            Err(StatsError::ZeroVariance { .. })
        ));
        assert!(welch_log_ratio(&[1.0, 2.0, 0.0], &[1.0, 2.0, 3.0], 0.95).is_err());
    }
}
