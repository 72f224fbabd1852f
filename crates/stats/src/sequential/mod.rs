//! Sequential trials: repeated confidence intervals (RCIs) from a group-sequential design with
//! Lan–DeMets alpha spending.
//!
//! Looking at a comparison after every round of trials and stopping once it is decided
//! inflates both error rates (optional stopping). A group-sequential design fixes it: the
//! comparison may be looked at any number of times, at information fractions
//! `0 < t_1 < t_2 < … ≤ 1` that need not be planned, and look `k` uses a wider interval, so
//! that all the intervals of a run cover the truth *simultaneously* with probability
//! ≥ `1 − α`. Declaring a direction (interval beyond ±L, or excluding 0) when the truth is 0,
//! or equivalence (interval inside ±L) when the truth is outside, needs an interval that
//! misses the truth at some look, so each has probability ≤ `α` however the looks went.
//!
//! Method.
//! * **Spending** (Lan & DeMets 1983): the type-I error spent by information `t` is `α(t)`,
//!   increasing from `α(0) = 0` to `α(1) = α` ([`SpendingFunction`]). The two-sided
//!   symmetric design spends `α/2` on each side with the one-sided function, as Lan &
//!   DeMets' ld98 program and R's ldbounds do: O'Brien–Fleming type
//!   `α(t) = 2·(2 − 2Φ(z_{1−α/4}/√t))`, which spends almost nothing early; Pocock type
//!   `α(t) = α·ln(1 + (e − 1)t)` (linear in α, so per side or not is the same), which spends
//!   evenly. For five equal looks at α = 0.05 these give the published 4.877, 3.357, 2.680,
//!   2.290, 2.031 and 2.438, 2.427, 2.410, 2.397, 2.386. (Putting the whole two-sided α into
//!   the O'Brien–Fleming form, `2 − 2Φ(z_{1−α/2}/√t)`, is a different design: 4.383, 3.100,
//!   2.553, 2.254, 2.064.)
//! * **Boundaries** ([`boundaries`]): the standardized cumulative statistics `Z_k` of a
//!   Brownian motion seen at the fractions (`Corr(Z_j, Z_k) = √(t_j/t_k)`) get symmetric
//!   critical values `c_k` with `P_H0(|Z_j| < c_j for j < k, |Z_k| ≥ c_k) = α(t_k) − α(t_{k−1})`.
//!   `c_1 = z_{1−α(t_1)/2}`; later ones by the recursive numerical integration of Armitage,
//!   McPherson & Rowe (1969) in the form of Jennison & Turnbull (2000) ch. 19: the density of
//!   `Z_k` on the continuation region `(−c_k, c_k)` is carried from look to look on J&T's grid
//!   (`6r − 1` points around the mean, `r =` [`GRID_R`], trimmed to the region, plus midpoints,
//!   Simpson weights), and each `c_k` is solved by safeguarded Newton on the exit probability.
//!   A look at `t = 1` spends all that is left, whatever was planned. A boundary above
//!   [`MAX_Z_BOUNDARY`] is reported as that value (module constant's docs).
//! * **Repeated confidence interval** ([`repeated_ci`]): `d ± c_k·SE` for a normal statistic;
//!   with an estimated variance (Welch's `ν` degrees of freedom) the nominal two-sided level
//!   of the z boundary, `p_k = 2(1 − Φ(c_k))` ([`nominal_alpha`]), is kept and the t quantile
//!   `t(1 − p_k/2, ν)` replaces `c_k` — the "significance level approach" Jennison & Turnbull
//!   describe for group-sequential t-tests, exact at each look and close to nominal overall
//!   (`examples/sequential_oc.rs` measures it for servebench's schedules).
//! * **Information** ([`SequentialDesign::fraction`]): the fraction at a look with `n_A` and
//!   `n_B` trials is `I/I_max = [1/(1/n_A + 1/n_B)] / [N/2]` — the harmonic mean of the two
//!   counts over `N = max_trials_per_arm` — capped at 1. `Var(d̂) ∝ 1/n_A + 1/n_B`, so this is
//!   the true information ratio when the arms' variances are equal, and for equal arms
//!   (servebench's rounds add one trial to each) it is `n/N` whatever the variances; it makes
//!   the correlation between looks the one the boundaries assume. `min(n_A, n_B)/N` agrees
//!   for equal arms but misstates the correlation when they differ.
//! * **Verdict** ([`compare_arms_sequential`], [`compare_arms_arithmetic_sequential`]): the
//!   fixed-sample rule ([`crate::verdict::classify`]) applied to the RCI, with "significant"
//!   meaning the RCI excludes 0. The estimate, SE and ν come from the same Welch test as
//!   the fixed-sample comparison ([`crate::welch::welch_log_ratio`],
//!   [`crate::verdict::compare_arms_arithmetic`]); only the interval's width differs.
//!
//! References: K. K. G. Lan & D. L. DeMets, "Discrete sequential boundaries for clinical
//! trials", Biometrika 70(3), 1983; P. Armitage, C. K. McPherson & B. C. Rowe, "Repeated
//! significance tests on accumulating data", JRSS A 132, 1969; C. Jennison & B. W. Turnbull,
//! *Group Sequential Methods with Applications to Clinical Trials* (2000), ch. 9 (RCIs) and
//! ch. 19 (numerical computation). Checked against scipy's multivariate normal CDF, a
//! uniform-grid quadrature and a Monte Carlo of Brownian paths
//! (`tests/reference/sequential_boundaries.py`).

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

use crate::distributions::{normal_sf, t_quantile};
use crate::error::{StatsError, check_probability};
use crate::estimate::ConfidenceInterval;

mod boundaries;
mod design;

pub use boundaries::{Crossing, boundaries, exit_probabilities};
pub use design::{
    Look, SequentialComparison, SequentialDesign, at_look, compare_arms_arithmetic_sequential,
    compare_arms_sequential,
};

/// Jennison & Turnbull's grid parameter `r`: `6r − 1` points per look before trimming to the
/// continuation region (twice that with Simpson's midpoints). Measured against `r = 256`:
/// the boundaries are within 7e-8 for five equally spaced looks and within 5e-6 for 26 looks
/// at steps of 1/30 (close looks are the hard case; the error falls as `r⁻⁴`); 40 looks take
/// about 10 ms (`examples/sequential_oc.rs` prints the time).
pub const GRID_R: usize = 32;

/// The largest boundary reported. A look whose exact boundary is larger (an O'Brien–Fleming
/// first look at `t < 0.078` for α = 0.05, or two looks at almost the same fraction) gets it:
/// it may then spend up to `2(1 − Φ(8)) ≈ 1.2e-15` more than planned, far below the
/// integration's own error, and its RCI (nominal level ≤ 1.2e-15) can decide nothing anyway.
/// Keeping boundaries finite keeps every nominal level > 0 and every RCI finite.
pub const MAX_Z_BOUNDARY: f64 = 8.0;

const FRACTION: &str = "information fraction";

/// The alpha-spending function `α(t)` of a Lan–DeMets design (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SpendingFunction {
    /// O'Brien–Fleming type, `α/2` per side: `α(t) = 2·(2 − 2Φ(z_{1−α/4}/√t))` in all
    /// (module docs). Spends little early, so the last boundary is close to the fixed-sample
    /// `z_{1−α/2}`.
    #[serde(rename = "obrien-fleming")]
    OBrienFleming,
    /// Pocock type: `α(t) = α·ln(1 + (e − 1)t)`. Nearly constant boundaries: earlier
    /// decisions, a wider interval at the end.
    #[serde(rename = "pocock")]
    Pocock,
}

impl SpendingFunction {
    /// The type-I error `α(t)` spent by information fraction `t ∈ [0, 1]`, for an overall
    /// two-sided `alpha ∈ (0, 1)`: `α(0) = 0`, `α(1) = alpha` exactly, increasing between.
    pub fn spent(self, alpha: f64, t: f64) -> Result<f64, StatsError> {
        check_probability("alpha", alpha)?;
        if !(0.0..=1.0).contains(&t) {
            return Err(StatsError::InvalidParameter {
                name: FRACTION,
                value: t,
                why: "must lie in [0, 1]",
            });
        }
        if t == 0.0 {
            return Ok(0.0);
        }
        if t == 1.0 {
            return Ok(alpha);
        }
        let spent = match self {
            SpendingFunction::OBrienFleming => {
                4.0 * normal_sf(normal_upper_quantile(alpha / 4.0) / t.sqrt())
            }
            SpendingFunction::Pocock => alpha * ((std::f64::consts::E - 1.0) * t).ln_1p(),
        };
        Ok(spent.min(alpha))
    }
}

/// `z` with `1 − Φ(z) = p`, for `0 < p < 1`: statrs' inverse CDF taken in the lower tail
/// (no `1 − p` cancellation), then two Newton steps on `normal_sf`.
pub(super) fn normal_upper_quantile(p: f64) -> f64 {
    let mut z = -Normal::standard().inverse_cdf(p);
    for _ in 0..2 {
        let density = phi(z);
        if density > 0.0 {
            z += (normal_sf(z) - p) / density;
        }
    }
    z
}

/// Standard normal density.
pub(super) fn phi(x: f64) -> f64 {
    const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
    INV_SQRT_2PI * (-0.5 * x * x).exp()
}

/// The nominal two-sided level of a z boundary, `2(1 − Φ(c))`: the significance level a
/// single look at boundary `c` would have. With [`repeated_ci`] it becomes the t quantile.
pub fn nominal_alpha(z_boundary: f64) -> f64 {
    (2.0 * normal_sf(z_boundary)).min(1.0)
}

/// The critical value of a t statistic with `df` degrees of freedom at the nominal level of
/// the z boundary: `t(1 − p/2, ν)` with `p =` [`nominal_alpha`]`(z_boundary)`, computed in the
/// lower tail (`−t(p/2, ν)`) so that tiny levels keep their precision.
pub fn t_boundary(z_boundary: f64, df: f64) -> Result<f64, StatsError> {
    check_boundary(z_boundary)?;
    Ok(-t_quantile(nominal_alpha(z_boundary) / 2.0, df)?)
}

/// The repeated confidence interval `d ± t(1 − p_k/2, ν)·SE` at a look with z boundary
/// `z_boundary` (module docs), for an estimate `d` with standard error `std_err` and `df`
/// degrees of freedom. `level` is recorded in the interval: pass the design's simultaneous
/// coverage `1 − α` (each single interval's own level is `1 −` [`nominal_alpha`]).
pub fn repeated_ci(
    d: f64,
    std_err: f64,
    df: f64,
    z_boundary: f64,
    level: f64,
) -> Result<ConfidenceInterval, StatsError> {
    check_probability("level", level)?;
    if !d.is_finite() {
        return Err(StatsError::InvalidParameter {
            name: "estimate",
            value: d,
            why: "must be finite",
        });
    }
    if !(std_err.is_finite() && std_err >= 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "standard error",
            value: std_err,
            why: "must be finite and ≥ 0",
        });
    }
    let half = t_boundary(z_boundary, df)? * std_err;
    Ok(ConfidenceInterval {
        level,
        lower: d - half,
        upper: d + half,
    })
}

pub(super) fn check_boundary(z_boundary: f64) -> Result<(), StatsError> {
    if z_boundary.is_finite() && z_boundary > 0.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidParameter {
            name: "z boundary",
            value: z_boundary,
            why: "must be finite and > 0",
        })
    }
}

pub(super) fn check_fractions(fractions: &[f64]) -> Result<(), StatsError> {
    if fractions.is_empty() {
        return Err(StatsError::TooFewSamples {
            what: "group-sequential looks",
            n: 0,
            required: 1,
        });
    }
    let mut previous = 0.0;
    for &t in fractions {
        if !(t > 0.0 && t <= 1.0) {
            return Err(StatsError::InvalidParameter {
                name: FRACTION,
                value: t,
                why: "must lie in (0, 1]",
            });
        }
        if t <= previous {
            return Err(StatsError::InvalidParameter {
                name: FRACTION,
                value: t,
                why: "must increase strictly from look to look",
            });
        }
        previous = t;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
