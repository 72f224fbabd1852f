//! How many starts per arm, and how many trials per start, reach a target precision at the
//! least GPU time (docs/statistics-method.md, "Choosing n and k").
//!
//! With `n` starts per arm of `k` trials each, the variance of an arm's mean of start means
//! (log scale) is `(σ²_between + σ²_within/k)/n`, and a start costs `S + k·T` seconds (`S` the
//! start: launch, readiness, warm-up; `T` one trial of every point it measures, cool-down
//! included). Minimising `n·(S + k·T)` at a fixed variance gives the classic allocation
//! `k* = √(S·σ²_within / (T·σ²_between))` (Cochran, *Sampling Techniques*, 3rd ed. 1977,
//! §10.6, two-stage sampling). `n` is then the power formula's ([`crate::power::sample_size`])
//! with the start mean's SD `√(σ²_between + σ²_within/k)` for the CV. Since `n` is an integer,
//! every `k` from 1 to the bound is costed and the cheapest kept: never dearer than
//! `k = 1`, and at `k*` rounded whenever that is cheapest.

use serde::{Deserialize, Serialize};

use crate::error::StatsError;
use crate::power::sample_size;

/// The two variance components on the log scale.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Variances {
    /// σ²_between: the variance of what a server start draws.
    pub between: f64,
    /// σ²_within: the variance of trials within one start.
    pub within: f64,
}

/// What one start and one trial cost, in seconds of the accelerators.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Costs {
    /// S: launch until ready, plus warm-up.
    pub start_s: f64,
    /// T: one repeat of every point a start measures, cool-down included.
    pub trial_s: f64,
}

/// The precision asked for: detect a ratio of `1 + θ` with a two-sided test at `alpha` with
/// `power`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// θ (relative).
    pub theta: f64,
    /// α.
    pub alpha: f64,
    /// 1 − β.
    pub power: f64,
}

/// One design and its predicted cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Design {
    /// Starts per arm n.
    pub starts_per_arm: u64,
    /// Trials per start k.
    pub per_start: u32,
    /// SD of a start's mean on the log scale, `√(σ²_between + σ²_within/k)`.
    pub sd_start_mean: f64,
    /// Predicted seconds for both arms: `2·n·(S + k·T)`.
    pub seconds: f64,
}

/// `k* = √(S·σ²_within / (T·σ²_between))`, unbounded; infinite when σ²_between is 0.
pub fn optimal_k(v: Variances, c: Costs) -> f64 {
    (c.start_s * v.within / (c.trial_s * v.between)).sqrt()
}

fn check(v: Variances, c: Costs) -> Result<(), StatsError> {
    for (name, x) in [
        ("between-start variance", v.between),
        ("within-start variance", v.within),
        ("start cost", c.start_s),
    ] {
        if !(x.is_finite() && x >= 0.0) {
            return Err(StatsError::InvalidParameter {
                name,
                value: x,
                why: "must be finite and ≥ 0",
            });
        }
    }
    if !(c.trial_s.is_finite() && c.trial_s > 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "trial cost",
            value: c.trial_s,
            why: "must be finite and > 0",
        });
    }
    if v.between + v.within <= 0.0 {
        return Err(StatsError::ZeroVariance {
            what: "design (both components 0)",
        });
    }
    Ok(())
}

/// The design with `k` trials per start reaching `target` (module docs).
pub fn design_with(v: Variances, c: Costs, target: Target, k: u32) -> Result<Design, StatsError> {
    check(v, c)?;
    let k = k.max(1);
    let sd = (v.between + v.within / f64::from(k)).sqrt();
    let n = sample_size(sd, target.theta.ln_1p(), target.alpha, target.power)?;
    Ok(Design {
        starts_per_arm: n,
        per_start: k,
        sd_start_mean: sd,
        seconds: 2.0 * n as f64 * (c.start_s + f64::from(k) * c.trial_s),
    })
}

/// The cheapest design with `1 ≤ k ≤ max_k` (module docs).
pub fn optimize(v: Variances, c: Costs, target: Target, max_k: u32) -> Result<Design, StatsError> {
    let mut best = design_with(v, c, target, 1)?;
    for k in 2..=max_k.max(1) {
        let d = design_with(v, c, target, k)?;
        if d.seconds < best.seconds {
            best = d;
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TARGET: Target = Target {
        theta: 0.05,
        alpha: 0.05,
        power: 0.8,
    };

    #[test]
    fn expensive_starts_and_within_variance_favour_many_trials_per_start() {
        let v = Variances {
            between: 0.01f64.powi(2),
            within: 0.05f64.powi(2),
        };
        let c = Costs {
            start_s: 80.0,
            trial_s: 10.0,
        };
        // k* = √(80·25/10) = 14.1; bounded at 10.
        assert!((optimal_k(v, c) - (80.0f64 * 25.0 / 10.0).sqrt()).abs() < 1e-9);
        let one = design_with(v, c, TARGET, 1).unwrap();
        let best = optimize(v, c, TARGET, 10).unwrap();
        // n is an integer: the cheapest k near the bound, not necessarily the bound itself.
        assert!(best.per_start >= 5, "{best:?}");
        assert!(best.seconds * 2.0 <= one.seconds, "{best:?} vs {one:?}");
    }

    #[test]
    fn cheap_starts_and_between_variance_keep_one_trial_per_start() {
        let v = Variances {
            between: 0.05f64.powi(2),
            within: 0.005f64.powi(2),
        };
        let c = Costs {
            start_s: 1.0,
            trial_s: 10.0,
        };
        assert!(optimal_k(v, c) < 0.1);
        assert_eq!(optimize(v, c, TARGET, 10).unwrap().per_start, 1);
    }

    #[test]
    fn never_dearer_than_one_trial_per_start() {
        for (b, w, s) in [(0.02, 0.02, 5.0), (0.001, 0.1, 100.0), (0.1, 0.0, 50.0)] {
            let v = Variances {
                between: b * b,
                within: w * w,
            };
            let c = Costs {
                start_s: s,
                trial_s: 7.0,
            };
            let one = design_with(v, c, TARGET, 1).unwrap();
            assert!(optimize(v, c, TARGET, 20).unwrap().seconds <= one.seconds);
        }
    }

    #[test]
    fn one_trial_per_start_is_the_power_formula() {
        // k = 1: the start mean's SD is the trial SD, n the "How many trials" formula's.
        let v = Variances {
            between: 0.03f64.powi(2),
            within: 0.04f64.powi(2),
        };
        let c = Costs {
            start_s: 10.0,
            trial_s: 5.0,
        };
        let d = design_with(v, c, TARGET, 1).unwrap();
        assert_eq!(
            d.starts_per_arm,
            sample_size(0.05, 0.05f64.ln_1p(), 0.05, 0.8).unwrap()
        );
        assert_eq!(d.seconds, 2.0 * d.starts_per_arm as f64 * 15.0);
    }

    #[test]
    fn bad_costs_are_refused() {
        let v = Variances {
            between: 0.01,
            within: 0.01,
        };
        let c = Costs {
            start_s: 1.0,
            trial_s: 0.0,
        };
        assert!(design_with(v, c, TARGET, 1).is_err());
    }
}
