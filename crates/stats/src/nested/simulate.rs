//! Monte Carlo of the designs on the nested model (module docs of [`super`]): what a design
//! costs and how often it answers, at equal error rates. `plan --optimize` predicts the
//! sequential design's cost with it, and `examples/design_cost.rs` compares the three designs
//! over scenarios (docs/statistics-measured.md, "Designs by cost").
//!
//! The question every design answers here is the power formula's: is the candidate different
//! (the interval of the log ratio of the arms' means of start means excludes 0)? A run
//! *detects* when it does so in the true direction, and is a *false verdict* when it does so
//! under A/A (or in the wrong direction). The fixed designs read Welch's interval on the start
//! means once, after `n` starts per arm of `k` trials; the sequential design reads the
//! repeated interval (`crate::sequential`, O'Brien–Fleming) after a first stage and after each
//! round of one start per arm, and stops when it excludes 0 or at its budget.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::allocation::{Costs, Variances};
use crate::error::StatsError;
use crate::sequential::{Look, SequentialDesign, SpendingFunction, repeated_ci};
use crate::welch::welch;

/// The truth a run is drawn from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Truth {
    /// The two components (log scale).
    pub variances: Variances,
    /// True ratio candidate/baseline (1 for A/A).
    pub ratio: f64,
}

/// How a simulated design measures.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// `n` starts per arm of `k` trials, read once.
    Fixed {
        /// Starts per arm.
        n: u64,
        /// Trials per start.
        k: u32,
    },
    /// A first stage of `first` starts per arm, then one start per arm per round up to the
    /// looks' budget; `k` trials per start.
    Sequential {
        /// Starts per arm in the first stage.
        first: u64,
        /// Trials per start.
        k: u32,
        /// The looks for equal arms `first..=max` ([`sequential_looks`]).
        looks: Vec<Look>,
    },
}

/// One simulated run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// The interval excluded 0 in the true direction.
    pub detected: bool,
    /// The interval excluded 0 under A/A, or in the wrong direction.
    pub false_verdict: bool,
    /// Starts per arm used.
    pub starts_per_arm: u64,
    /// Seconds for both arms: `2·n·(S + k·T)`.
    pub seconds: f64,
}

/// Tallies over many runs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    /// Runs.
    pub runs: u64,
    /// Runs that detected.
    pub detected: u64,
    /// Runs with a false verdict.
    pub false_verdicts: u64,
    /// Seconds over all runs.
    pub seconds: f64,
    /// Starts per arm over all runs.
    pub starts: u64,
}

impl Tally {
    /// Mean seconds per run.
    pub fn mean_seconds(&self) -> f64 {
        self.seconds / self.runs.max(1) as f64
    }
    /// Share of runs that detected.
    pub fn detection(&self) -> f64 {
        self.detected as f64 / self.runs.max(1) as f64
    }
    /// Share of runs with a false verdict.
    pub fn false_rate(&self) -> f64 {
        self.false_verdicts as f64 / self.runs.max(1) as f64
    }
    /// Seconds per detected cell (all runs' seconds over the detections).
    pub fn seconds_per_detection(&self) -> Option<f64> {
        (self.detected > 0).then(|| self.seconds / self.detected as f64)
    }
}

/// The looks of a sequential design for equal arms at `first, first + 1, …, max` starts.
pub fn sequential_looks(alpha: f64, first: u64, max: u64) -> Result<Vec<Look>, StatsError> {
    let design = SequentialDesign::new(SpendingFunction::OBrienFleming, alpha, max)?;
    let history: Vec<(u64, u64)> = (first..=max).map(|n| (n, n)).collect();
    design.looks(&history)
}

/// Standard normals by Box–Muller.
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// One start's mean of `k` log values around `shift`.
fn start_mean(rng: &mut ChaCha8Rng, v: Variances, shift: f64, k: u32) -> f64 {
    let b = v.between.sqrt() * normal(rng);
    let w: f64 = (0..k).map(|_| v.within.sqrt() * normal(rng)).sum::<f64>() / f64::from(k);
    shift + b + w
}

fn judge(lower: f64, upper: f64, ratio: f64) -> (bool, bool) {
    let excludes = lower > 0.0 || upper < 0.0;
    let right = (ratio > 1.0 && lower > 0.0) || (ratio < 1.0 && upper < 0.0);
    (right, excludes && !right)
}

/// One run of `plan` under `truth` at `alpha`, seeded.
pub fn run_once(plan: &Plan, truth: Truth, costs: Costs, alpha: f64, seed: u64) -> Outcome {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let shift = truth.ratio.ln();
    let v = truth.variances;
    let cost = |n: u64, k: u32| 2.0 * n as f64 * (costs.start_s + f64::from(k) * costs.trial_s);
    match plan {
        Plan::Fixed { n, k } => {
            let a: Vec<f64> = (0..*n).map(|_| start_mean(&mut rng, v, 0.0, *k)).collect();
            let b: Vec<f64> = (0..*n)
                .map(|_| start_mean(&mut rng, v, shift, *k))
                .collect();
            let (detected, false_verdict) = match welch(&a, &b, 1.0 - alpha) {
                Ok(w) => judge(w.ci.lower, w.ci.upper, truth.ratio),
                Err(_) => (false, false),
            };
            Outcome {
                detected,
                false_verdict,
                starts_per_arm: *n,
                seconds: cost(*n, *k),
            }
        }
        Plan::Sequential { first, k, looks } => {
            let max = looks.last().map_or(*first, |l| l.n_baseline);
            let a: Vec<f64> = (0..max).map(|_| start_mean(&mut rng, v, 0.0, *k)).collect();
            let b: Vec<f64> = (0..max)
                .map(|_| start_mean(&mut rng, v, shift, *k))
                .collect();
            for look in looks {
                let n = look.n_baseline as usize;
                let Ok(w) = welch(&a[..n], &b[..n], 1.0 - alpha) else {
                    continue;
                };
                let Ok(ci) = repeated_ci(w.diff, w.std_err, w.df, look.z_boundary, 1.0 - alpha)
                else {
                    continue;
                };
                let (detected, false_verdict) = judge(ci.lower, ci.upper, truth.ratio);
                if detected || false_verdict || look.last {
                    return Outcome {
                        detected,
                        false_verdict,
                        starts_per_arm: n as u64,
                        seconds: cost(n as u64, *k),
                    };
                }
            }
            Outcome {
                detected: false,
                false_verdict: false,
                starts_per_arm: max,
                seconds: cost(max, *k),
            }
        }
    }
}

/// `runs` seeded runs (seeds `seed..seed + runs`).
pub fn tally(plan: &Plan, truth: Truth, costs: Costs, alpha: f64, seed: u64, runs: u64) -> Tally {
    let mut t = Tally::default();
    for s in seed..seed + runs {
        let o = run_once(plan, truth, costs, alpha, s);
        t.runs += 1;
        t.detected += u64::from(o.detected);
        t.false_verdicts += u64::from(o.false_verdict);
        t.seconds += o.seconds;
        t.starts += o.starts_per_arm;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: Variances = Variances {
        between: 0.0004,
        within: 0.0025,
    };
    const C: Costs = Costs {
        start_s: 60.0,
        trial_s: 10.0,
    };

    #[test]
    fn a_fixed_design_is_wrong_about_alpha_of_the_time_under_a_a() {
        let t = tally(
            &Plan::Fixed { n: 6, k: 4 },
            Truth {
                variances: V,
                ratio: 1.0,
            },
            C,
            0.05,
            1,
            4000,
        );
        // 4000 runs: SE of a 5% rate is 0.34%.
        assert!((t.false_rate() - 0.05).abs() < 0.015, "{}", t.false_rate());
        assert_eq!(t.detected, 0);
        assert_eq!(t.mean_seconds(), 2.0 * 6.0 * (60.0 + 40.0));
    }

    #[test]
    fn the_sequential_design_stops_early_on_a_large_effect() {
        let looks = sequential_looks(0.05, 3, 20).unwrap();
        let t = tally(
            &Plan::Sequential {
                first: 3,
                k: 1,
                looks,
            },
            Truth {
                variances: V,
                ratio: 1.2,
            },
            C,
            0.05,
            1,
            500,
        );
        assert!(t.detection() > 0.95, "{}", t.detection());
        assert!((t.starts as f64 / 500.0) < 10.0);
    }
}
