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

/// STATISTICS.md: a robust z above 3.5 marks an outlier trial.
pub const OUTLIER_Z: f64 = 3.5;

/// 99th percentile of the largest robust z among n standard-normal values, n = 3…30
/// (Monte Carlo, 200,000 arms each; `tests/reference/robust_cutoffs.py`).
const MAX_Z_Q99: [f64; 28] = [
    110.25, 16.09, 18.53, 9.94, 10.79, 8.05, 8.17, 6.92, 7.07, 6.3, 6.4, 5.88, 5.98, 5.58, 5.67,
    5.43, 5.42, 5.24, 5.28, 5.1, 5.13, 4.96, 5.02, 4.94, 4.95, 4.83, 4.88, 4.78,
];

/// The outlier cutoff for an arm of `n` trials: `base` (3.5) raised to the 99th percentile
/// of the largest robust z of n well-behaved (normal) trials. With the fixed 3.5, an arm of
/// 5 normal trials is flagged 21% of the time (9–29% for n = 3…30), so nearly every
/// comparison would carry an outlier flag; the calibrated cutoff flags such an arm about 1%
/// of the time while a trial far from the rest (z of 20 and more) is still caught. Beyond
/// 30 trials the n = 30 value is kept (conservative).
pub fn outlier_cutoff(n: usize, base: f64) -> f64 {
    let calibrated = match n {
        0..=2 => f64::INFINITY,
        3..=30 => MAX_Z_Q99[n - 3],
        _ => MAX_Z_Q99[27],
    };
    base.max(calibrated)
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
    fn cutoff_is_calibrated_to_the_trial_count() {
        // Five ordinary trials whose largest robust z (about 4.0) passes the fixed 3.5 but
        // not the calibrated cutoff for n = 5; one trial far off is still caught.
        let ordinary = [100.0, 101.0, 100.5, 99.8, 103.5];
        let z = robust_z(&ordinary).expect("valid");
        let top = z.iter().copied().fold(0.0, f64::max);
        assert!(
            top > OUTLIER_Z && top < outlier_cutoff(5, OUTLIER_Z),
            "{top}"
        );
        let far = [100.0, 101.0, 100.5, 99.8, 130.0];
        let z = robust_z(&far).expect("valid");
        assert!(z[4] > outlier_cutoff(5, OUTLIER_Z), "{}", z[4]);
        assert_eq!(outlier_cutoff(100, OUTLIER_Z), 4.78);
        assert!(outlier_cutoff(2, OUTLIER_Z).is_infinite());
    }
}
