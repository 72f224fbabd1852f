//! Spearman's rank correlation with its two-sided p-value, for drift (a metric trending with
//! run order across trials, or with request order within a trial).
//!
//! Method: `ρ` is Pearson's correlation of the mid-ranks (ties averaged). The p-value uses
//! `t = ρ·√((n − 2)/(1 − ρ²))` with `n − 2` degrees of freedom, two-sided (p = 0 when
//! `|ρ| = 1`), as `scipy.stats.spearmanr`. For very small n (≤ 6) this approximation is
//! coarse; the drift rule therefore uses a strict threshold (see `flags`).
//! Reference: C. Spearman, Amer. J. Psychol. 15, 1904; Zar, *Biostatistical Analysis* 5th ed.
//! §19.9; scipy `stats.spearmanr`.

use serde::{Deserialize, Serialize};

use crate::distributions::t_two_sided_p;
use crate::error::{StatsError, check_finite, check_len};
use crate::rank::average_ranks;

/// A rank correlation and its two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Correlation {
    /// Spearman's ρ in [−1, 1].
    pub rho: f64,
    /// Two-sided p-value (t approximation, n − 2 df).
    pub p: f64,
    /// Number of pairs.
    pub n: usize,
}

fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len() as f64;
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    Some((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

/// Spearman's ρ between `x` and `y` (same length, ≥ 3 pairs) and its two-sided p-value
/// (module docs). Errors when either variable is constant.
pub fn spearman(x: &[f64], y: &[f64]) -> Result<Correlation, StatsError> {
    if x.len() != y.len() {
        return Err(StatsError::InvalidParameter {
            name: "y length",
            value: y.len() as f64,
            why: "x and y must have the same length",
        });
    }
    check_len("Spearman correlation", x.len(), 3)?;
    check_finite("Spearman correlation (x)", x)?;
    check_finite("Spearman correlation (y)", y)?;
    let (rx, _) = average_ranks(x);
    let (ry, _) = average_ranks(y);
    let rho = pearson(&rx, &ry).ok_or(StatsError::ZeroVariance {
        what: "Spearman correlation (a constant variable)",
    })?;
    let n = x.len();
    let p = if rho.abs() >= 1.0 {
        0.0
    } else {
        let df = (n - 2) as f64;
        let t = rho * (df / ((1.0 - rho) * (1.0 + rho))).sqrt();
        t_two_sided_p(t, df)?
    };
    Ok(Correlation { rho, p, n })
}

/// Spearman's ρ of `values` against their position (0, 1, 2, …): a trend with run order.
pub fn trend(values: &[f64]) -> Result<Correlation, StatsError> {
    let order: Vec<f64> = (0..values.len()).map(|i| i as f64).collect();
    spearman(&order, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotone_is_one() {
        let c = trend(&[1.0, 2.0, 4.0, 8.0, 16.0]).expect("valid");
        assert_eq!(c.rho, 1.0);
        assert_eq!(c.p, 0.0);
        let d = trend(&[5.0, 4.0, 3.0]).expect("valid");
        assert_eq!(d.rho, -1.0);
        assert!(trend(&[1.0, 1.0, 1.0]).is_err());
        assert!(spearman(&[1.0, 2.0], &[1.0, 2.0]).is_err());
    }
}
