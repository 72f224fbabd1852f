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
}
