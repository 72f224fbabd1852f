//! Robust z-scores for outlier trials.
//!
//! Method: Iglewicz & Hoaglin's modified z-score `zᵢ = 0.6745·|xᵢ − median|/MAD`, with
//! `MAD = median(|xᵢ − median|)` (unscaled); a trial is an outlier when `z > 3.5`. When the
//! MAD is 0 (more than half the trials identical) the mean absolute deviation is used instead,
//! `zᵢ = |xᵢ − median|/(1.253314·MeanAD)` (the same authors' fallback); when that is 0 too,
//! every z is 0. Medians are type 7 (`crate::percentile`). Outliers are flagged, never dropped.
//! Reference: B. Iglewicz & D. C. Hoaglin, *How to Detect and Handle Outliers*, ASQC 1993;
//! hyperfine's outlier warning.

use crate::error::{StatsError, check_finite, check_len};
use crate::percentile::median;

/// A robust z above 3.5 marks an outlier trial (Iglewicz & Hoaglin).
pub const OUTLIER_Z: f64 = 3.5;

/// 95th percentile of Dixon's Q (the `r10` ratio, either end) over samples of n normal
/// values, n = 3…10 (Monte Carlo, 10⁶ samples each: `tests/reference/dixon_cutoffs.py` and
/// its output `dixon_cutoffs.txt`; they agree with Rorabacher's 1991 table to 0.003).
const DIXON_Q95: [f64; 8] = [0.970, 0.829, 0.711, 0.628, 0.569, 0.526, 0.493, 0.466];

/// Dixon's Q of a small sample (Dean & Dixon 1951, the `r10` ratio): the gap between the
/// most extreme value, at either end, and its neighbour, over the range. Returns the index
/// of that value in `values` and Q. Two values equally far from the rest make the gap small:
/// they are a spread, not an outlier — which the robust z, built on the MAD of a handful of
/// values, cannot tell. `None` below 3 values or when all are equal.
pub fn dixon_q(values: &[f64]) -> Option<(usize, f64)> {
    if values.len() < 3 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|a, b| values[*a].total_cmp(&values[*b]));
    let (lo, hi) = (order[0], order[order.len() - 1]);
    let range = values[hi] - values[lo];
    if range <= 0.0 {
        return None;
    }
    let low_gap = values[order[1]] - values[lo];
    let high_gap = values[hi] - values[order[order.len() - 2]];
    Some(if high_gap >= low_gap {
        (hi, high_gap / range)
    } else {
        (lo, low_gap / range)
    })
}

/// The Dixon cutoff for n = 3…10 values (an arm of well-behaved normal trials exceeds it 5%
/// of the time; the outlier rules add a practical floor and a verdict test after it);
/// `None` outside that range, where the r10 ratio is not used.
pub fn dixon_cutoff(n: usize) -> Option<f64> {
    (3..=10).contains(&n).then(|| DIXON_Q95[n - 3])
}

/// `0.6745 ≈ Φ⁻¹(0.75)`, making the MAD consistent with σ for normal data.
pub const MAD_CONSTANT: f64 = 0.6745;

/// Median absolute deviation (unscaled), `median(|xᵢ − median(x)|)`.
pub fn mad(values: &[f64]) -> Result<f64, StatsError> {
    check_len("MAD", values.len(), 1)?;
    check_finite("MAD", values)?;
    let m = median(values).ok_or(StatsError::TooFewSamples {
        what: "MAD",
        n: 0,
        required: 1,
    })?;
    let dev: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    median(&dev).ok_or(StatsError::TooFewSamples {
        what: "MAD",
        n: 0,
        required: 1,
    })
}

/// Robust z-score of every value (module docs), in input order. Needs ≥ 3 values.
pub fn robust_z(values: &[f64]) -> Result<Vec<f64>, StatsError> {
    check_len("robust z", values.len(), 3)?;
    check_finite("robust z", values)?;
    let m = median(values).ok_or(StatsError::TooFewSamples {
        what: "robust z",
        n: 0,
        required: 3,
    })?;
    let dev: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    let mad = mad(values)?;
    if mad > 0.0 {
        return Ok(dev.iter().map(|d| MAD_CONSTANT * d / mad).collect());
    }
    let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
    if mean_ad > 0.0 {
        Ok(dev.iter().map(|d| d / (1.253_314 * mean_ad)).collect())
    } else {
        Ok(vec![0.0; values.len()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_far_trial() {
        let z = robust_z(&[100.0, 101.0, 99.0, 100.5, 130.0]).expect("valid");
        // median 100.5, deviations [0.5, 0.5, 1.5, 0, 29.5], MAD 0.5
        assert!((z[4] - 0.6745 * 29.5 / 0.5).abs() < 1e-12);
        assert!(z[4] > OUTLIER_Z);
        assert!(z[..4].iter().all(|&v| v < OUTLIER_Z));
    }

    #[test]
    fn zero_mad_falls_back() {
        let z = robust_z(&[5.0, 5.0, 5.0, 5.0, 9.0]).expect("valid");
        assert_eq!(z[0], 0.0);
        // MeanAD = 0.8: z = 4/(1.253314·0.8) ≈ 3.99
        assert!((z[4] - 4.0 / (1.253_314 * 0.8)).abs() < 1e-12);
        assert!(z[4] > OUTLIER_Z);
        assert_eq!(robust_z(&[2.0; 4]).expect("valid"), vec![0.0; 4]);
    }

    #[test]
    fn dixon_tells_one_far_trial_from_a_spread() {
        // The 30%-slow trial: the gap to its neighbour is nearly the whole range.
        let (i, q) = dixon_q(&[100.0, 100.5, 99.5, 77.0, 100.2]).expect("a Q");
        assert_eq!(i, 3);
        assert!((q - 22.5 / 23.5).abs() < 1e-12, "{q}");
        assert!(q > dixon_cutoff(5).expect("n = 5"));
        // Two trials equally far from the rest: a spread, no outlier (the MAD-based robust
        // z of the highest is 11.1 here).
        let spread = [7.30, 7.32, 7.35, 7.90, 8.17];
        let (i, q) = dixon_q(&spread).expect("a Q");
        assert_eq!(i, 4);
        assert!(q < dixon_cutoff(5).expect("n = 5"), "{q}");
        assert!(robust_z(&spread).expect("z")[4] > OUTLIER_Z);
        // The low end when it is the more extreme.
        assert_eq!(dixon_q(&[1.0, 10.0, 10.1, 10.2]).map(|(i, _)| i), Some(0));
        assert_eq!(dixon_q(&[5.0, 5.0, 5.0]), None);
        assert_eq!(dixon_q(&[5.0, 6.0]), None);
        assert_eq!(dixon_cutoff(11), None);
        assert_eq!(dixon_cutoff(3), Some(0.970));
    }
}
