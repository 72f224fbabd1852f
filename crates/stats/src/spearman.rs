//! Spearman's rank correlation with its two-sided p-value, for drift (a metric trending with
//! run order across trials, or with request order within a trial).
//!
//! Method: `ρ` is Pearson's correlation of the mid-ranks (ties averaged). The p-value uses
//! `t = ρ·√((n − 2)/(1 − ρ²))` with `n − 2` degrees of freedom, two-sided (p = 0 when
//! `|ρ| = 1`), as `scipy.stats.spearmanr`. For the small n of trial counts that
//! approximation is badly anti-conservative, so [`trend`] (the drift rule's test) computes
//! the exact permutation p-value for n ≤ 9.
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

/// Largest n for which [`trend`] enumerates every permutation (9! = 362,880).
pub const EXACT_TREND_MAX_N: usize = 9;

/// Spearman's ρ of `values` against their position (0, 1, 2, …): a trend with run order.
///
/// For n ≤ [`EXACT_TREND_MAX_N`] (the usual trial counts) the p-value is exact: the share of
/// all n! orderings of the observed ranks whose |ρ| is at least the observed |ρ| (a
/// permutation test; Zar §19.9, scipy `stats.permutation_test`). The t approximation gives
/// p = 0 for a perfect order, but 5 trials fall in perfect order by chance 2 times in 120
/// (p = 0.0167), which would make the drift rule fire on well-behaved runs. Larger n use
/// [`spearman`]'s t approximation.
pub fn trend(values: &[f64]) -> Result<Correlation, StatsError> {
    let order: Vec<f64> = (0..values.len()).map(|i| i as f64).collect();
    let c = spearman(&order, values)?;
    if values.len() > EXACT_TREND_MAX_N {
        return Ok(c);
    }
    let (ranks, _) = average_ranks(values);
    Ok(Correlation {
        p: exact_trend_p(&order, &ranks, c.rho),
        ..c
    })
}

/// Share of permutations of `ranks` whose |ρ| against `order` reaches |`rho`| (Heap's
/// algorithm over all n! orderings).
///
/// Both spreads and both means are the same for every ordering, so ρ of an ordering `a` is
/// a fixed multiple of Σ dᵢ·aᵢ with dᵢ = orderᵢ − mean(order): comparing that sum (n
/// multiply-adds) decides as comparing ρ would.
fn exact_trend_p(order: &[f64], ranks: &[f64], rho: f64) -> f64 {
    let n = ranks.len();
    let mean = order.iter().sum::<f64>() / n as f64;
    let d: Vec<f64> = order.iter().map(|o| o - mean).collect();
    let dot = |a: &[f64]| d.iter().zip(a).map(|(x, y)| x * y).sum::<f64>().abs();
    let mut a = ranks.to_vec();
    let observed = dot(&a);
    debug_assert!(rho == 0.0 || observed > 0.0);
    let target = observed * (1.0 - 1e-12) - 1e-12;
    let mut hits = 0u64;
    let mut total = 0u64;
    let mut count = |a: &[f64]| {
        total += 1;
        if dot(a) >= target {
            hits += 1;
        }
    };
    count(&a);
    let mut c = vec![0usize; n];
    let mut i = 1;
    while i < n {
        if c[i] < i {
            if i % 2 == 0 {
                a.swap(0, i);
            } else {
                a.swap(c[i], i);
            }
            count(&a);
            c[i] += 1;
            i = 1;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    hits as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotone_is_one() {
        let c = trend(&[1.0, 2.0, 4.0, 8.0, 16.0]).expect("valid");
        assert_eq!(c.rho, 1.0);
        // Exact: 2 of the 120 orderings are perfectly monotone.
        assert!((c.p - 2.0 / 120.0).abs() < 1e-12, "{}", c.p);
        let s = spearman(&[0.0, 1.0, 2.0, 3.0, 4.0], &[1.0, 2.0, 4.0, 8.0, 16.0]).expect("valid");
        assert_eq!(s.p, 0.0);
        let d = trend(&[5.0, 4.0, 3.0]).expect("valid");
        assert_eq!(d.rho, -1.0);
        assert!(trend(&[1.0, 1.0, 1.0]).is_err());
        assert!(spearman(&[1.0, 2.0], &[1.0, 2.0]).is_err());
    }

    /// The exact p-value by the definition: every ordering's ρ, computed in full.
    fn p_by_definition(values: &[f64]) -> f64 {
        fn perms(a: &mut Vec<f64>, k: usize, out: &mut Vec<Vec<f64>>) {
            if k == a.len() {
                out.push(a.clone());
            }
            for i in k..a.len() {
                a.swap(k, i);
                perms(a, k + 1, out);
                a.swap(k, i);
            }
        }
        let order: Vec<f64> = (0..values.len()).map(|i| i as f64).collect();
        let (ranks, _) = average_ranks(values);
        let rho = pearson(&order, &ranks).unwrap().abs();
        let mut all = Vec::new();
        perms(&mut ranks.clone(), 0, &mut all);
        let hits = all
            .iter()
            .filter(|a| pearson(&order, a).unwrap().abs() >= rho - 1e-12)
            .count();
        hits as f64 / all.len() as f64
    }

    #[test]
    fn exact_p_is_the_share_of_orderings_at_least_as_correlated() {
        for values in [
            &[3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0][..],
            &[2.0, 2.0, 1.0, 3.0, 3.0, 0.5],
            &[1.0, 2.0, 3.0, 5.0, 4.0],
            &[10.0, 9.0, 11.0, 10.5],
            &[1.0, 3.0, 2.0, 3.0, 1.0, 2.0, 4.0, 0.0],
        ] {
            let got = trend(values).unwrap().p;
            let want = p_by_definition(values);
            assert!((got - want).abs() < 1e-12, "{values:?}: {got} vs {want}");
        }
    }
}
