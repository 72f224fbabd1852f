//! Consistency of a delta across a sweep: Cochran's Q and leave-one-out residuals.
//!
//! Method: for k per-level estimates `dᵢ` (log ratios) with standard errors `sᵢ`, weights
//! `wᵢ = 1/sᵢ²`, the fixed-effect pooled estimate `d̄ = Σwᵢdᵢ/Σwᵢ`, and
//! `Q = Σ wᵢ(dᵢ − d̄)²`, referred to χ² with k − 1 degrees of freedom. The leave-one-out
//! residual of level i compares `dᵢ` with the pooled estimate of the other levels,
//! `d̄₋ᵢ = Σ_{j≠i} wⱼdⱼ / Σ_{j≠i} wⱼ` (SE `1/√Σ_{j≠i} wⱼ`), in units of the SE of their
//! difference: `rᵢ = (dᵢ − d̄₋ᵢ)/√(sᵢ² + 1/Σ_{j≠i} wⱼ)`.
//! Reference: W. G. Cochran, "The combination of estimates from different experiments",
//! Biometrics 10, 1954; Viechtbauer & Cheung, "Outlier and influence diagnostics for
//! meta-analysis", Res. Synth. Methods 1, 2010 (leave-one-out residuals).

use serde::{Deserialize, Serialize};

use crate::distributions::chi2_sf;
use crate::error::{StatsError, check_finite, check_len};

/// Cochran's Q test and the leave-one-out residual of every level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Heterogeneity {
    /// `Q = Σ wᵢ(dᵢ − d̄)²`.
    pub q: f64,
    /// `k − 1`.
    pub df: usize,
    /// `P(χ²_{k−1} > Q)`.
    pub p: f64,
    /// Inverse-variance pooled estimate `d̄`.
    pub pooled: f64,
    /// Its standard error `1/√Σwᵢ`.
    pub pooled_se: f64,
    /// Leave-one-out residual `rᵢ` of each level, in input order.
    pub residuals: Vec<f64>,
}

/// Cochran's Q and leave-one-out residuals of `estimates` with standard errors `std_errs`
/// (module docs). Needs k ≥ 2 levels and every SE finite and > 0.
pub fn cochran_q(estimates: &[f64], std_errs: &[f64]) -> Result<Heterogeneity, StatsError> {
    if estimates.len() != std_errs.len() {
        return Err(StatsError::InvalidParameter {
            name: "std_errs length",
            value: std_errs.len() as f64,
            why: "one standard error per estimate",
        });
    }
    check_len("Cochran's Q", estimates.len(), 2)?;
    check_finite("Cochran's Q (estimates)", estimates)?;
    if let Some(index) = std_errs.iter().position(|s| !(s.is_finite() && *s > 0.0)) {
        return Err(StatsError::InvalidValue {
            what: "Cochran's Q (standard errors)",
            index,
            value: std_errs[index],
            why: "must be finite and > 0",
        });
    }
    let w: Vec<f64> = std_errs.iter().map(|s| 1.0 / (s * s)).collect();
    let sum_w: f64 = w.iter().sum();
    let sum_wd: f64 = w.iter().zip(estimates).map(|(w, d)| w * d).sum();
    let pooled = sum_wd / sum_w;
    let q: f64 = w
        .iter()
        .zip(estimates)
        .map(|(w, d)| w * (d - pooled) * (d - pooled))
        .sum();
    let df = estimates.len() - 1;
    let p = chi2_sf(q, df as f64)?;
    let residuals = estimates
        .iter()
        .zip(&w)
        .zip(std_errs)
        .map(|((d, wi), s)| {
            let rest_w = sum_w - wi;
            let rest = (sum_wd - wi * d) / rest_w;
            (d - rest) / (s * s + 1.0 / rest_w).sqrt()
        })
        .collect();
    Ok(Heterogeneity {
        q,
        df,
        p,
        pooled,
        pooled_se: 1.0 / sum_w.sqrt(),
        residuals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homogeneous_levels_give_q_zero() {
        let h = cochran_q(&[0.1, 0.1, 0.1], &[0.01, 0.02, 0.03]).expect("valid");
        assert!(h.q.abs() < 1e-20);
        assert!((h.p - 1.0).abs() < 1e-12);
        assert!(h.residuals.iter().all(|r| r.abs() < 1e-9));
    }

    #[test]
    fn one_level_off() {
        let h = cochran_q(&[0.0, 0.0, 0.5, 0.0], &[0.05; 4]).expect("valid");
        assert!(h.p < 1e-6);
        assert!(h.residuals[2] > 3.0);
        assert!(cochran_q(&[0.1], &[0.1]).is_err());
        assert!(cochran_q(&[0.1, 0.2], &[0.1, 0.0]).is_err());
    }
}
