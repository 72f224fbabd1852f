//! How many trials: sample size per arm and the minimum detectable effect.
//!
//! Method (docs/statistics-method.md, "How many trials"): two-sample t-test with equal arms,
//! `n = ⌈2(t(1 − α/2, ν) + t(1 − β, ν))²·CV²/δ²⌉` with `ν = 2n − 2`. Because the right side
//! falls as n grows, we return the smallest `n ≥ 2` with `n ≥ f(n)`; this is the fixed point
//! the iteration `n ← ⌈f(n)⌉` settles on (checked: α = 0.05, power 0.8, δ = 5%: CV 2% → 4,
//! CV 5% → 17, CV 10% → 64, as docs/statistics-method.md says). `MDE(n) = (t(1 − α/2, ν) + t(1 − β, ν))·
//! CV·√(2/n)`; for unequal arms `√(1/n_A + 1/n_B)` replaces `√(2/n)` and `ν = n_A + n_B − 2`.
//! On the log scale, pass the SD of the logs as CV and `ln(1 + θ)` as δ.
//! Reference: Cohen, *Statistical Power Analysis for the Behavioral Sciences* (1988) ch. 2;
//! Chow, Shao & Wang, *Sample Size Calculations in Clinical Research* (2008) §3.2.

use crate::distributions::t_quantile;
use crate::error::{StatsError, check_probability};

/// The largest per-arm count searched before giving up.
pub const MAX_TRIALS: u64 = 1_000_000;

/// Power used for "how many trials would settle it" and for the minimum detectable effect.
pub const DEFAULT_POWER: f64 = 0.8;

fn check_positive_param(name: &'static str, value: f64) -> Result<(), StatsError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidParameter {
            name,
            value,
            why: "must be finite and > 0",
        })
    }
}

fn t_sum(alpha: f64, power: f64, df: f64) -> Result<f64, StatsError> {
    Ok(t_quantile(1.0 - alpha / 2.0, df)? + t_quantile(power, df)?)
}

/// Trials per arm to detect a relative difference `delta` with a two-sided test at `alpha`
/// and the given `power` (= 1 − β), when the per-trial coefficient of variation is `cv`
/// (module docs). Errors on parameters out of range or when more than [`MAX_TRIALS`] are
/// needed.
pub fn sample_size(cv: f64, delta: f64, alpha: f64, power: f64) -> Result<u64, StatsError> {
    check_positive_param("cv", cv)?;
    check_positive_param("delta", delta)?;
    check_probability("alpha", alpha)?;
    check_probability("power", power)?;
    let ratio2 = (cv / delta) * (cv / delta);
    let f = |n: u64| -> Result<f64, StatsError> {
        let s = t_sum(alpha, power, (2 * n - 2) as f64)?;
        Ok(2.0 * s * s * ratio2)
    };
    // f is decreasing in n: bisect for the smallest n with n ≥ f(n).
    let (mut lo, mut hi) = (2u64, 2u64);
    while (hi as f64) < f(hi)? {
        lo = hi + 1;
        hi = hi.saturating_mul(2);
        if hi > MAX_TRIALS {
            if (MAX_TRIALS as f64) < f(MAX_TRIALS)? {
                return Err(StatsError::NoSolution {
                    what: "sample size",
                    limit: MAX_TRIALS,
                });
            }
            hi = MAX_TRIALS;
            break;
        }
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if (mid as f64) >= f(mid)? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo)
}

/// Minimum detectable effect with `n` trials per arm (module docs), as a fraction on the same
/// scale as `cv`. Needs n ≥ 2.
pub fn minimum_detectable_effect(
    n: u64,
    cv: f64,
    alpha: f64,
    power: f64,
) -> Result<f64, StatsError> {
    minimum_detectable_effect_unequal(n, n, cv, alpha, power)
}

/// Minimum detectable effect with `n_a` and `n_b` trials: `(t(1 − α/2, ν) + t(1 − β, ν))·
/// CV·√(1/n_A + 1/n_B)`, `ν = n_A + n_B − 2`. Needs `n_A + n_B ≥ 3` and each ≥ 1.
pub fn minimum_detectable_effect_unequal(
    n_a: u64,
    n_b: u64,
    cv: f64,
    alpha: f64,
    power: f64,
) -> Result<f64, StatsError> {
    if n_a == 0 || n_b == 0 || n_a + n_b < 3 {
        return Err(StatsError::TooFewSamples {
            what: "minimum detectable effect",
            n: n_a.min(n_b) as usize,
            required: 2,
        });
    }
    check_positive_param("cv", cv)?;
    check_probability("alpha", alpha)?;
    check_probability("power", power)?;
    let s = t_sum(alpha, power, (n_a + n_b - 2) as f64)?;
    Ok(s * cv * (1.0 / n_a as f64 + 1.0 / n_b as f64).sqrt())
}

/// Trials per arm that would likely settle a cell whose estimate is `d` with pooled spread
/// `sd` (both on the analysis scale) against `margin`, at `alpha`, given `n` trials per arm
/// now (the method is [`crate::advice`]'s). `None` when `d` sits exactly on the threshold or
/// the count exceeds [`MAX_TRIALS`].
pub fn trials_to_settle(
    d: f64,
    sd: f64,
    margin: f64,
    alpha: f64,
    n: (usize, usize),
) -> Option<u64> {
    let distance = (d.abs() - margin).abs();
    if distance.is_nan() || distance <= 0.0 {
        return None;
    }
    sample_size(sd, distance, alpha, DEFAULT_POWER)
        .ok()
        .map(|k| k.max(n.0.max(n.1) as u64 + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_md_check_values() {
        assert_eq!(sample_size(0.02, 0.05, 0.05, 0.8).expect("valid"), 4);
        assert_eq!(sample_size(0.05, 0.05, 0.05, 0.8).expect("valid"), 17);
        assert_eq!(sample_size(0.10, 0.05, 0.05, 0.8).expect("valid"), 64);
    }

    #[test]
    fn mde_at_sample_size_is_at_most_delta() {
        for cv in [0.01, 0.03, 0.07, 0.2] {
            let n = sample_size(cv, 0.05, 0.05, 0.8).expect("valid");
            let at_n = minimum_detectable_effect(n, cv, 0.05, 0.8).expect("valid");
            assert!(at_n <= 0.05 + 1e-12, "cv {cv}: n {n}, mde {at_n}");
            if n > 2 {
                let below = minimum_detectable_effect(n - 1, cv, 0.05, 0.8).expect("valid");
                assert!(below > 0.05, "cv {cv}: n − 1 = {} already enough", n - 1);
            }
        }
        assert!(sample_size(1.0, 1e-6, 0.05, 0.8).is_err());
    }
}
