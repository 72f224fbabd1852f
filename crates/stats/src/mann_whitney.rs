//! Mann–Whitney U test and the Hodges–Lehmann shift estimate, on trial-level values.
//!
//! Method: `U` counts pairs (baseline a, candidate b) with `b > a`, ties counting ½
//! (`U = R_B − n_B(n_B + 1)/2`, `R_B` the rank sum of the candidate with mid-ranks). Two-sided
//! p from `U* = max(U, n_A·n_B − U)`:
//! * exact, when there are no ties and both arms have at most [`EXACT_MAX_N`] values:
//!   `p = min(1, 2·P(U ≥ U*))` under the null distribution, computed by the recurrence over
//!   which arm holds the largest value (`m` baseline, `n` candidate values):
//!   `P_{m,n}(u) = m/(m+n)·P_{m−1,n}(u) + n/(m+n)·P_{m,n−1}(u − m)`;
//! * otherwise the normal approximation with tie correction and continuity correction:
//!   `z = (U* − n_A n_B/2 − ½)/σ`, `σ² = n_A n_B/12·((N + 1) − Σ(t³ − t)/(N(N − 1)))`,
//!   `p = min(1, 2(1 − Φ(z)))`.
//!
//! Both match `scipy.stats.mannwhitneyu(candidate, baseline, method="exact" | "asymptotic")`.
//! The smallest two-sided p an exact test can reach is `2/C(n_A + n_B, n_A)` (asv's check):
//! with 3 trials per arm it is 0.1, so such a test can never reject at α = 0.05.
//! Reference: H. B. Mann & D. R. Whitney, Ann. Math. Statist. 18, 1947; Hollander, Wolfe &
//! Chicken, *Nonparametric Statistical Methods* 3rd ed. (2014) §4.1–4.3; J. L. Hodges &
//! E. L. Lehmann, "Estimates of location based on rank tests", Ann. Math. Statist. 34, 1963.

use serde::{Deserialize, Serialize};

use crate::distributions::normal_sf;
use crate::error::{StatsError, check_finite, check_len};
use crate::percentile::median;
use crate::rank::average_ranks;

/// Largest arm size for which the exact null distribution is used (when there are no ties).
pub const EXACT_MAX_N: usize = 50;

/// How a Mann–Whitney p-value was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MwuMethod {
    /// Exact null distribution (no ties, small arms).
    Exact,
    /// Normal approximation with tie and continuity corrections.
    NormalApprox,
}

/// Result of a two-sided Mann–Whitney U test of candidate vs baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// `U` of the candidate: pairs with candidate > baseline (+½ per tie).
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Which method produced `p`.
    pub method: MwuMethod,
    /// Smallest two-sided p the exact test can reach at these sizes: `2/C(n_A + n_B, n_A)`.
    pub min_attainable_p: f64,
}

impl MannWhitney {
    /// Whether the test can reject at `alpha` at all (`min_attainable_p ≤ alpha`).
    pub fn can_reach(&self, alpha: f64) -> bool {
        self.min_attainable_p <= alpha
    }
}

/// `2/C(n_a + n_b, n_a)`, the smallest two-sided exact p (asv's attainable-p check).
pub fn min_attainable_p(n_a: usize, n_b: usize) -> f64 {
    // C(N, k) as a product of k ratios, in floating point (exact enough for a threshold).
    let (n, k) = (n_a + n_b, n_a.min(n_b));
    let mut c = 1.0f64;
    for i in 1..=k {
        c *= (n - k + i) as f64 / i as f64;
    }
    (2.0 / c).min(1.0)
}

/// Null distribution of U for arm sizes (m, n): `P(U = u)` for `u` in `0..=m·n`.
fn exact_null(m: usize, n: usize) -> Vec<f64> {
    // rows[j] = distribution for (i, j) at the current i; start with i = 0: U ≡ 0.
    let mut rows: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for i in 1..=m {
        let mut next: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        next.push(vec![1.0]); // (i, 0): U ≡ 0
        for j in 1..=n {
            let mut dist = vec![0.0; i * j + 1];
            let total = (i + j) as f64;
            // Largest value is a baseline value (weight i/(i+j)): it beats no candidate
            // value, U unchanged, from (i − 1, j). Largest is a candidate value (weight
            // j/(i+j)): it beats all i baseline values, U + i, from (i, j − 1).
            let from_a = &rows[j];
            for (u, p) in from_a.iter().enumerate() {
                dist[u] += p * i as f64 / total;
            }
            let from_b = &next[j - 1];
            for (u, p) in from_b.iter().enumerate() {
                dist[u + i] += p * j as f64 / total;
            }
            next.push(dist);
        }
        rows = next;
    }
    rows.pop().unwrap_or_else(|| vec![1.0])
}

/// Two-sided Mann–Whitney U test of `candidate` against `baseline` (module docs). Needs at
/// least one value per arm.
pub fn mann_whitney(baseline: &[f64], candidate: &[f64]) -> Result<MannWhitney, StatsError> {
    check_len("Mann–Whitney (baseline)", baseline.len(), 1)?;
    check_len("Mann–Whitney (candidate)", candidate.len(), 1)?;
    check_finite("Mann–Whitney (baseline)", baseline)?;
    check_finite("Mann–Whitney (candidate)", candidate)?;
    let (na, nb) = (baseline.len(), candidate.len());
    let pooled: Vec<f64> = baseline.iter().chain(candidate).copied().collect();
    let (ranks, tie_sizes) = average_ranks(&pooled);
    let rank_sum_b: f64 = ranks[na..].iter().sum();
    let u = rank_sum_b - (nb * (nb + 1)) as f64 / 2.0;
    let u_star = u.max((na * nb) as f64 - u);
    let has_ties = tie_sizes.iter().any(|&t| t > 1);
    let (p, method) = if !has_ties && na <= EXACT_MAX_N && nb <= EXACT_MAX_N {
        let dist = exact_null(na, nb);
        // U* is an integer without ties; P(U ≥ U*).
        let k = u_star.round() as usize;
        let tail: f64 = dist.iter().skip(k).sum();
        ((2.0 * tail).min(1.0), MwuMethod::Exact)
    } else {
        let n = (na + nb) as f64;
        let tie_term: f64 = tie_sizes
            .iter()
            .map(|&t| {
                let t = t as f64;
                t * t * t - t
            })
            .sum();
        let var = (na * nb) as f64 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
        if var <= 0.0 {
            return Err(StatsError::ZeroVariance {
                what: "Mann–Whitney (all values tied)",
            });
        }
        let z = (u_star - (na * nb) as f64 / 2.0 - 0.5) / var.sqrt();
        (
            (2.0 * normal_sf(z)).clamp(0.0, 1.0),
            MwuMethod::NormalApprox,
        )
    };
    Ok(MannWhitney {
        u,
        p,
        method,
        min_attainable_p: min_attainable_p(na, nb),
    })
}

/// Hodges–Lehmann estimate of the shift candidate − baseline: the median of all `n_A·n_B`
/// pairwise differences `b_j − a_i` (type-7 median). Pass logs to estimate a log ratio.
/// Reference: Hodges & Lehmann (1963).
pub fn hodges_lehmann(baseline: &[f64], candidate: &[f64]) -> Result<f64, StatsError> {
    check_len("Hodges–Lehmann (baseline)", baseline.len(), 1)?;
    check_len("Hodges–Lehmann (candidate)", candidate.len(), 1)?;
    check_finite("Hodges–Lehmann (baseline)", baseline)?;
    check_finite("Hodges–Lehmann (candidate)", candidate)?;
    let diffs: Vec<f64> = candidate
        .iter()
        .flat_map(|b| baseline.iter().map(move |a| b - a))
        .collect();
    median(&diffs).ok_or(StatsError::TooFewSamples {
        what: "Hodges–Lehmann",
        n: 0,
        required: 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_null_sums_to_one_and_is_symmetric() {
        let d = exact_null(4, 6);
        assert_eq!(d.len(), 25);
        assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        for u in 0..d.len() {
            assert!((d[u] - d[d.len() - 1 - u]).abs() < 1e-15);
        }
        // P(U = 0) = 1/C(10, 4) = 1/210.
        assert!((d[0] - 1.0 / 210.0).abs() < 1e-16);
    }

    #[test]
    fn attainable_p() {
        assert!((min_attainable_p(3, 3) - 0.1).abs() < 1e-15);
        assert!((min_attainable_p(4, 4) - 2.0 / 70.0).abs() < 1e-15);
        let full = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).expect("valid");
        assert_eq!(full.method, MwuMethod::Exact);
        assert!((full.p - 0.1).abs() < 1e-15);
        assert!(!full.can_reach(0.05));
    }

    #[test]
    fn hodges_lehmann_shift() {
        let hl = hodges_lehmann(&[1.0, 2.0, 3.0], &[11.0, 12.0, 13.0]).expect("valid");
        assert!((hl - 10.0).abs() < 1e-15);
    }
}
