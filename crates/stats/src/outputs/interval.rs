//! Intervals on shares of prompts: Wilson's score interval for one share, and Newcombe's
//! hybrid score interval for the difference of two shares measured on the same prompts.
//!
//! Method. Wilson (1927): for a share `p` of `n` units and `z = z₁₋α/₂`,
//! `(p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n)`; it never collapses to a point at
//! `p = 0` or `1` (0 of 16 gives `[0, 0.194]` at 95%), which a Wald or bootstrap interval
//! does, and is the interval Newcombe builds on. Newcombe (1998, method 10), for paired
//! shares `p₁`, `p₂` with Wilson limits `(l₁, u₁)`, `(l₂, u₂)` and the correlation `φ` of
//! the pairs: `δ = p₁ − p₂`,
//! `lower = δ − √((p₁−l₁)² − 2φ(p₁−l₁)(u₂−p₂) + (u₂−p₂)²)`,
//! `upper = δ + √((u₁−p₁)² − 2φ(u₁−p₁)(p₂−l₂) + (p₂−l₂)²)`, `φ = 0` where a margin is
//! empty. For 0/1 outcomes `φ` is the 2×2 table's `(AD − BC)/√((A+B)(C+D)(A+C)(B+D))`,
//! which is the Pearson correlation of the two indicator vectors; for shares in `[0, 1]`
//! per unit (a prompt's share of differing start pairs) the same formula is used with the
//! Pearson correlation of the per-unit shares and the Wilson interval of their mean — an
//! approximation that reduces to method 10 when every unit's share is 0 or 1
//! (docs/equivalence.md).
//! Reference: Wilson, JASA 22 (1927); Newcombe, Stat. Med. 17:2635–2650 (1998), method 10;
//! checked against a transcription with scipy's `binomtest(...).proportion_ci("wilson")`
//! (`tests/reference/outputs.py`).

use crate::distributions::normal_quantile;
use crate::error::{StatsError, check_probability};
use crate::estimate::{ConfidenceInterval, Estimate};
use crate::summary::mean_var;

/// Wilson's score interval for a share `p` of `n` units at confidence `level` (module docs).
pub fn wilson(p: f64, n: usize, level: f64) -> Result<ConfidenceInterval, StatsError> {
    check_probability("level", level)?;
    if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
        return Err(StatsError::InvalidParameter {
            name: "share",
            value: p,
            why: "must lie in [0, 1]",
        });
    }
    if n == 0 {
        return Err(StatsError::TooFewSamples {
            what: "Wilson interval",
            n,
            required: 1,
        });
    }
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0)?;
    let n = n as f64;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Ok(ConfidenceInterval {
        level,
        lower: (centre - half).max(0.0),
        upper: (centre + half).min(1.0),
    })
}

/// Pearson's correlation of two equally long series; 0 where either has no spread.
pub(crate) fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let (Some((ma, va)), Some((mb, vb))) = (mean_var(a), mean_var(b)) else {
        return 0.0;
    };
    if va <= 0.0 || vb <= 0.0 || a.len() != b.len() || a.len() < 2 {
        return 0.0;
    }
    let cov = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - ma) * (y - mb))
        .sum::<f64>()
        / (a.len() - 1) as f64;
    (cov / (va * vb).sqrt()).clamp(-1.0, 1.0)
}

/// Newcombe's interval for `mean(first) − mean(second)`, the two series paired unit by unit,
/// each value a share in `[0, 1]` (module docs). `std_err` is the standard error of the
/// per-unit differences (0 for one unit).
pub fn paired_difference(
    first: &[f64],
    second: &[f64],
    level: f64,
) -> Result<Estimate, StatsError> {
    if first.len() != second.len() {
        return Err(StatsError::InvalidParameter {
            name: "paired series length",
            value: second.len() as f64,
            why: "both series must have one value per unit",
        });
    }
    let n = first.len();
    if n == 0 {
        return Err(StatsError::TooFewSamples {
            what: "paired difference of shares",
            n,
            required: 1,
        });
    }
    for (i, v) in first.iter().chain(second).enumerate() {
        if !(v.is_finite() && (0.0..=1.0).contains(v)) {
            return Err(StatsError::InvalidValue {
                what: "paired difference of shares",
                index: i % n,
                value: *v,
                why: "a share must lie in [0, 1]",
            });
        }
    }
    let p1 = first.iter().sum::<f64>() / n as f64;
    let p2 = second.iter().sum::<f64>() / n as f64;
    let phi = correlation(first, second);
    paired_difference_from(p1, p2, phi, n, level).map(|ci| {
        let diffs: Vec<f64> = first.iter().zip(second).map(|(a, b)| a - b).collect();
        let std_err = mean_var(&diffs).map_or(0.0, |(_, v)| (v / n as f64).sqrt());
        Estimate {
            point: p1 - p2,
            ci,
            std_err,
        }
    })
}

/// Newcombe's interval from the two shares, their correlation and the number of units: the
/// interval [`paired_difference`] gives, and what more units at the same shares would give
/// (the advice on prompts needed).
pub fn paired_difference_from(
    p1: f64,
    p2: f64,
    phi: f64,
    n: usize,
    level: f64,
) -> Result<ConfidenceInterval, StatsError> {
    let w1 = wilson(p1, n, level)?;
    let w2 = wilson(p2, n, level)?;
    let phi = if phi.is_finite() {
        phi.clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let delta = p1 - p2;
    let (a1, b1) = (p1 - w1.lower, w1.upper - p1);
    let (a2, b2) = (p2 - w2.lower, w2.upper - p2);
    let lower = delta - (a1 * a1 - 2.0 * phi * a1 * b2 + b2 * b2).max(0.0).sqrt();
    let upper = delta + (b1 * b1 - 2.0 * phi * b1 * a2 + a2 * a2).max(0.0).sqrt();
    Ok(ConfidenceInterval {
        level,
        lower: lower.max(-1.0),
        upper: upper.min(1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_at_zero_is_not_a_point() {
        // 0 of 16 at 95%: upper z²/(n + z²) = 3.8415/19.8415.
        let ci = wilson(0.0, 16, 0.95).expect("ok");
        assert_eq!(ci.lower, 0.0);
        assert!((ci.upper - 0.193_615).abs() < 1e-5, "{ci:?}");
        let ci = wilson(1.0, 16, 0.95).expect("ok");
        assert!((ci.lower - (1.0 - 0.193_615)).abs() < 1e-5 && (ci.upper - 1.0).abs() < 1e-12);
    }

    #[test]
    fn paired_difference_of_identical_series_is_symmetric() {
        let zeros = vec![0.0; 16];
        let e = paired_difference(&zeros, &zeros, 0.95).expect("ok");
        assert_eq!(e.point, 0.0);
        assert!((e.ci.upper - 0.193_615).abs() < 1e-5, "{e:?}");
        assert!((e.ci.lower + 0.193_615).abs() < 1e-5, "{e:?}");
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(wilson(1.5, 3, 0.95).is_err());
        assert!(wilson(0.5, 0, 0.95).is_err());
        assert!(paired_difference(&[0.5], &[0.5, 0.5], 0.95).is_err());
        assert!(paired_difference(&[2.0], &[0.5], 0.95).is_err());
        assert!(paired_difference(&[], &[], 0.95).is_err());
    }
}
