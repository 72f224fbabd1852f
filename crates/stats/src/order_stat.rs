//! Distribution-free intervals for a quantile within one trial, from order statistics, and the
//! minimum number of requests a quantile needs.
//!
//! Method: for `n` sorted values and quantile `q`, the interval `[x_(l), x_(u)]` (1-based
//! ranks) covers the true `q`-quantile with probability `F(u − 1) − F(l − 1)`, where `F` is
//! the CDF of `Binomial(n, q)`. We take `l − 1 = max{k : F(k) ≤ α/2}` and
//! `u − 1 = min{k : F(k) ≥ 1 − α/2}`, so each tail holds at most α/2 and coverage ≥ 1 − α.
//! The minimum request count is the `n` for which the sample maximum exceeds the
//! `q`-quantile with probability at least `c`: `1 − qⁿ ≥ c`, i.e. `n ≥ ln(1 − c)/ln q`.
//!
//! Diagnostic only: requests within a trial are correlated (docs/statistics-method.md, "Unit of analysis").
//! Reference: H. A. David and H. N. Nagaraja, *Order Statistics*, 3rd ed., §7.1 (2003);
//! asv's `quantile_ci`; MLPerf LoadGen minimum query counts.

use serde::{Deserialize, Serialize};

use crate::distributions::binomial_cdf;
use crate::error::{StatsError, check_finite, check_probability};

/// The confidence docs/statistics-method.md uses for "a trial's q-quantile is reportable": 0.99.
pub const REPORTABLE_CONFIDENCE: f64 = 0.99;

/// An order-statistic confidence interval for one quantile of one trial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuantileInterval {
    /// The quantile in (0, 1).
    pub q: f64,
    /// The requested confidence level `1 − α`.
    pub level: f64,
    /// Type-7 point estimate of the quantile (for reference).
    pub point: f64,
    /// 1-based rank `l` of the lower bound.
    pub lower_rank: u64,
    /// 1-based rank `u` of the upper bound.
    pub upper_rank: u64,
    /// `x_(l)`.
    pub lower: f64,
    /// `x_(u)`.
    pub upper: f64,
    /// Exact coverage `F(u − 1) − F(l − 1)` of `[x_(l), x_(u)]`, ≥ `level`.
    pub coverage: f64,
}

/// Minimum number of requests a trial needs for its `q`-quantile to be reportable at
/// confidence `c`: `⌈ln(1 − c)/ln q⌉` (44 for p90, 459 for p99, 4603 for p99.9 at c = 0.99).
/// Method: `P(max of n < ξ_q) = qⁿ ≤ 1 − c`. Reference: MLPerf LoadGen; docs/statistics-method.md.
/// `None` when `q` or `c` is not strictly inside (0, 1).
pub fn min_requests_for_quantile(q: f64, c: f64) -> Option<u64> {
    if !(q.is_finite() && q > 0.0 && q < 1.0 && c.is_finite() && c > 0.0 && c < 1.0) {
        return None;
    }
    let n = ((1.0 - c).ln() / q.ln()).ceil();
    Some(n.max(1.0) as u64)
}

/// Smallest `k` in `[0, n]` with `F(k) ≥ target` (F the Binomial(n, q) CDF; F(n) = 1).
fn first_cdf_at_least(n: u64, q: f64, target: f64) -> Result<u64, StatsError> {
    let (mut lo, mut hi) = (0u64, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if binomial_cdf(mid, n, q)? >= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo)
}

/// Smallest `n` for which both order-statistic bounds exist at this `q` and `α`:
/// `(1 − q)ⁿ ≤ α/2` and `qⁿ ≤ α/2`.
fn required_n(q: f64, alpha: f64) -> usize {
    let half = (alpha / 2.0).ln();
    let a = half / (1.0 - q).ln();
    let b = half / q.ln();
    a.max(b).ceil() as usize
}

/// Order-statistic confidence interval `[x_(l), x_(u)]` for the `q`-quantile of one trial's
/// values, already sorted ascending, at confidence `level`. Method: binomial bounds (module
/// docs; David & Nagaraja §7.1). Errors with [`StatsError::TooFewSamples`] (carrying the `n`
/// needed) when the trial is too small for either bound to exist.
pub fn quantile_ci_sorted(
    sorted: &[f64],
    q: f64,
    level: f64,
) -> Result<QuantileInterval, StatsError> {
    check_probability("q", q)?;
    check_probability("level", level)?;
    check_finite("order-statistic interval", sorted)?;
    let alpha = 1.0 - level;
    let n = sorted.len() as u64;
    let too_few = StatsError::TooFewSamples {
        what: "order-statistic quantile interval",
        n: sorted.len(),
        required: required_n(q, alpha),
    };
    if n == 0 {
        return Err(too_few);
    }
    // l − 1 = max{k : F(k) ≤ α/2}: one less than the first k with F(k) > α/2.
    let first_above = first_cdf_at_least(n, q, f64::from_bits((alpha / 2.0).to_bits() + 1))?;
    if first_above == 0 {
        return Err(too_few);
    }
    let lower_rank = first_above; // (l − 1) + 1
    // u − 1 = min{k : F(k) ≥ 1 − α/2}; it must be ≤ n − 1 for x_(u) to exist.
    let u_minus_1 = first_cdf_at_least(n, q, 1.0 - alpha / 2.0)?;
    if u_minus_1 >= n {
        return Err(too_few);
    }
    let upper_rank = u_minus_1 + 1;
    let coverage = binomial_cdf(u_minus_1, n, q)? - binomial_cdf(lower_rank - 1, n, q)?;
    let point =
        crate::percentile::percentile_sorted(sorted, q).ok_or(StatsError::TooFewSamples {
            what: "order-statistic quantile interval",
            n: 0,
            required: 1,
        })?;
    Ok(QuantileInterval {
        q,
        level,
        point,
        lower_rank,
        upper_rank,
        lower: sorted[(lower_rank - 1) as usize],
        upper: sorted[(upper_rank - 1) as usize],
        coverage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_md_check_values() {
        assert_eq!(min_requests_for_quantile(0.90, 0.99), Some(44));
        assert_eq!(min_requests_for_quantile(0.99, 0.99), Some(459));
        assert_eq!(min_requests_for_quantile(0.999, 0.99), Some(4603));
        assert_eq!(min_requests_for_quantile(1.0, 0.99), None);
    }

    #[test]
    fn median_interval_of_ranks() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let ci = quantile_ci_sorted(&v, 0.5, 0.95).expect("enough data");
        assert!(ci.coverage >= 0.95);
        assert!(ci.lower <= ci.point && ci.point <= ci.upper);
        // Classic table: n = 100, median 95% CI is [x_(40), x_(61)].
        assert_eq!((ci.lower_rank, ci.upper_rank), (40, 61));
    }

    #[test]
    fn too_small_trial_says_how_many() {
        let v: Vec<f64> = (1..=50).map(f64::from).collect();
        match quantile_ci_sorted(&v, 0.99, 0.95) {
            Err(StatsError::TooFewSamples { required, .. }) => assert_eq!(required, 368),
            other => panic!("expected TooFewSamples, got {other:?}"),
        }
    }
}
