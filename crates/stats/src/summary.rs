//! Per-trial summaries over exact values: count, mean, standard deviation, extremes, and
//! percentiles by the one percentile method (Hyndman–Fan type 7, `crate::percentile`), each
//! marked with whether the trial holds enough requests to report it
//! (`crate::order_stat::min_requests_for_quantile`).
//!
//! Method: arithmetic mean and the unbiased (n − 1) sample variance computed by Welford's
//! one-pass update; geometric mean as `exp(mean(ln x))`.
//! Reference: Welford (1962), *Technometrics* 4(3); Hyndman & Fan (1996).

use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_finite, check_len, check_positive};
use crate::order_stat::{REPORTABLE_CONFIDENCE, min_requests_for_quantile};
use crate::percentile::percentile_sorted;

/// One quantile of a trial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuantileValue {
    /// The quantile in `[0, 1]` (0.99 for p99).
    pub q: f64,
    /// Its value by Hyndman–Fan type 7.
    pub value: f64,
    /// Whether the trial has at least `ln(1 − c)/ln q` values at `c = 0.99`
    /// ([`REPORTABLE_CONFIDENCE`]), the count docs/statistics-method.md requires to report this quantile.
    /// The extremes (q = 0 and q = 1) are always reportable as the trial's own min and max.
    pub reportable: bool,
}

/// Summary of one trial's exact values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub count: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1 denominator); 0 for a single value.
    pub std_dev: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// The requested quantiles, in the order asked.
    pub quantiles: Vec<QuantileValue>,
}

/// Arithmetic mean and sample variance (n − 1) in one pass. Method: Welford (1962).
/// `None` when `values` is empty. The variance is 0 for one value.
pub fn mean_var(values: &[f64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let mut mean = 0.0;
    let mut m2 = 0.0;
    for (i, x) in values.iter().enumerate() {
        let delta = x - mean;
        mean += delta / (i + 1) as f64;
        m2 += delta * (x - mean);
    }
    let var = if values.len() > 1 {
        m2 / (values.len() - 1) as f64
    } else {
        0.0
    };
    Some((mean, var))
}

/// Arithmetic mean; `None` when empty.
pub fn mean(values: &[f64]) -> Option<f64> {
    mean_var(values).map(|(m, _)| m)
}

/// Geometric mean `exp(mean(ln x))` of positive values (docs/statistics-method.md: positive metrics are
/// summarised as geometric means). Errors on an empty slice or a value ≤ 0.
pub fn geometric_mean(values: &[f64]) -> Result<f64, StatsError> {
    check_len("geometric mean", values.len(), 1)?;
    check_positive("geometric mean", values)?;
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let m = mean(&logs).ok_or(StatsError::TooFewSamples {
        what: "geometric mean",
        n: 0,
        required: 1,
    })?;
    Ok(m.exp())
}

/// Coefficient of variation `s / x̄` of raw values (sample SD, n − 1). Errors on fewer than 2
/// values or a mean of 0.
pub fn coefficient_of_variation(values: &[f64]) -> Result<f64, StatsError> {
    check_len("coefficient of variation", values.len(), 2)?;
    check_finite("coefficient of variation", values)?;
    let (m, v) = mean_var(values).ok_or(StatsError::TooFewSamples {
        what: "coefficient of variation",
        n: values.len(),
        required: 2,
    })?;
    if m == 0.0 {
        return Err(StatsError::ZeroVariance {
            what: "coefficient of variation (mean is 0)",
        });
    }
    Ok(v.sqrt() / m.abs())
}

/// Summarise one trial's exact values: count, mean, SD, min, max and the quantiles `qs`
/// (Hyndman–Fan type 7). Errors when `values` is empty, holds a non-finite value, or a `q`
/// is outside `[0, 1]`.
pub fn summarize(values: &[f64], qs: &[f64]) -> Result<Summary, StatsError> {
    check_len("summary", values.len(), 1)?;
    check_finite("summary", values)?;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (mean, var) = mean_var(&sorted).ok_or(StatsError::TooFewSamples {
        what: "summary",
        n: 0,
        required: 1,
    })?;
    let count = sorted.len() as u64;
    let mut quantiles = Vec::with_capacity(qs.len());
    for &q in qs {
        let value = percentile_sorted(&sorted, q).ok_or(StatsError::InvalidParameter {
            name: "q",
            value: q,
            why: "a quantile must lie in [0, 1]",
        })?;
        let reportable = min_requests_for_quantile(q, REPORTABLE_CONFIDENCE)
            .map(|need| count >= need)
            .unwrap_or(true);
        quantiles.push(QuantileValue {
            q,
            value,
            reportable,
        });
    }
    Ok(Summary {
        count,
        mean,
        std_dev: var.sqrt(),
        min: sorted[0],
        max: sorted[sorted.len() - 1],
        quantiles,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_small_trial() {
        let s = summarize(&[4.0, 1.0, 3.0, 2.0], &[0.5, 0.99]).expect("valid");
        assert_eq!(s.count, 4);
        assert!((s.mean - 2.5).abs() < 1e-15);
        assert!((s.std_dev - (5.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert_eq!((s.min, s.max), (1.0, 4.0));
        assert_eq!(s.quantiles[0].value, 2.5);
        // 4 values support neither a median (7 needed at c = 0.99) nor a p99 (459).
        assert!(!s.quantiles[0].reportable);
        assert!(!s.quantiles[1].reportable);
        let many: Vec<f64> = (0..459).map(f64::from).collect();
        let s = summarize(&many, &[0.5, 0.99, 0.999]).expect("valid");
        let flags: Vec<bool> = s.quantiles.iter().map(|q| q.reportable).collect();
        assert_eq!(flags, vec![true, true, false]);
        assert!(summarize(&[], &[0.5]).is_err());
        assert!(summarize(&[1.0, f64::NAN], &[0.5]).is_err());
    }

    #[test]
    fn geometric_mean_and_cv() {
        let g = geometric_mean(&[1.0, 4.0, 16.0]).expect("valid");
        assert!((g - 4.0).abs() < 1e-12);
        assert!(geometric_mean(&[1.0, 0.0]).is_err());
        let cv = coefficient_of_variation(&[9.0, 10.0, 11.0]).expect("valid");
        assert!((cv - 0.1).abs() < 1e-12);
    }
}
