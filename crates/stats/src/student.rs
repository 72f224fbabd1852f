//! Student's two-sample t-test with a pooled variance: the difference of two means, its
//! standard error from one variance shared by both samples, and its interval.
//!
//! Method: `d = ȳ_B − ȳ_A`, `s²_p = ((n_A − 1)s²_A + (n_B − 1)s²_B)/(n_A + n_B − 2)`,
//! `SE = s_p·√(1/n_A + 1/n_B)`, `t = d/SE` on `ν = n_A + n_B − 2` degrees of freedom,
//! `p = 2(1 − F_ν(|t|))`, `CI = d ± t(1 − α/2, ν)·SE`. Unlike Welch's test ([`crate::welch`])
//! it needs only `ν ≥ 1` and some spread in the pooled sample, so one side may hold a single
//! value: then the test is the prediction-interval comparison of one new value with the
//! others. It is the statistic the change-point search maximises ([`crate::changepoint`]).
//! Reference: Student, "The probable error of a mean", Biometrika 6, 1908; scipy
//! `stats.ttest_ind(equal_var=True)`.

use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_finite, check_len, check_probability};
use crate::estimate::ConfidenceInterval;
use crate::summary::mean_var;
use crate::welch::t_statistic;

/// Result of Student's pooled-variance test of `after − before`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PooledTest {
    /// `d = mean(after) − mean(before)`.
    pub diff: f64,
    /// `SE = s_p·√(1/n_A + 1/n_B)`.
    pub std_err: f64,
    /// `n_A + n_B − 2`.
    pub df: f64,
    /// `t = d/SE`.
    pub t: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// `d ± t(1 − α/2, ν)·SE` at the level asked for.
    pub ci: ConfidenceInterval,
}

/// Student's pooled-variance t-test of `after − before` at confidence `level` (module docs).
/// Each side needs at least one value and both together at least three; errors when the
/// pooled sample has no spread.
pub fn pooled(before: &[f64], after: &[f64], level: f64) -> Result<PooledTest, StatsError> {
    check_probability("level", level)?;
    check_len("pooled t-test (before)", before.len(), 1)?;
    check_len("pooled t-test (after)", after.len(), 1)?;
    check_len("pooled t-test", before.len() + after.len(), 3)?;
    check_finite("pooled t-test (before)", before)?;
    check_finite("pooled t-test (after)", after)?;
    let (ma, va) = mean_var(before).unwrap_or((0.0, 0.0));
    let (mb, vb) = mean_var(after).unwrap_or((0.0, 0.0));
    let (na, nb) = (before.len() as f64, after.len() as f64);
    let df = na + nb - 2.0;
    let pooled_var = ((na - 1.0) * va + (nb - 1.0) * vb) / df;
    if pooled_var <= 0.0 || !pooled_var.is_finite() {
        return Err(StatsError::ZeroVariance {
            what: "pooled t-test (no spread within the samples)",
        });
    }
    let std_err = (pooled_var * (1.0 / na + 1.0 / nb)).sqrt();
    let diff = mb - ma;
    let (t, p, ci) = t_statistic(diff, std_err, df, level)?;
    Ok(PooledTest {
        diff,
        std_err,
        df,
        t,
        p,
        ci,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        // before 1, 2, 3 (mean 2, s² 1); after 4, 6 (mean 5, s² 2): s²_p = (2 + 2)/3,
        // SE = √(4/3 · (1/3 + 1/2)) = √(10/9), df 3.
        let t = pooled(&[1.0, 2.0, 3.0], &[4.0, 6.0], 0.95).expect("valid");
        assert!((t.diff - 3.0).abs() < 1e-15);
        assert!((t.std_err - (10.0f64 / 9.0).sqrt()).abs() < 1e-15);
        assert_eq!(t.df, 3.0);
        assert!(t.ci.contains(3.0));
    }

    #[test]
    fn one_value_on_a_side_is_a_prediction_comparison() {
        let t = pooled(&[1.0, 2.0, 3.0], &[10.0], 0.95).expect("valid");
        assert_eq!(t.df, 2.0);
        assert!(t.p < 0.05);
        assert!(
            pooled(&[1.0], &[2.0], 0.95).is_err(),
            "no degree of freedom"
        );
        assert!(matches!(
            pooled(&[1.0, 1.0], &[1.0], 0.95),
            Err(StatsError::ZeroVariance { .. })
        ));
    }
}
