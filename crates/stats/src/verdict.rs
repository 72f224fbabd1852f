//! Verdicts per metric: improved, regressed, equivalent, likely improved, likely regressed,
//! inconclusive.
//!
//! Method (docs/statistics-method.md, "Verdicts"): work on the log of the ratio `r = candidate/baseline`
//! with the Welch CI `[lo, hi]` of `ln r` at level `1 − α`, and `L = ln(1 + θ)`:
//! * *beyond ±θ*: every point of the CI has `|ln r| > L` (`lo > L` or `hi < −L`);
//! * *inside ±θ*: every point has `|ln r| < L` (`−L < lo` and `hi < L`).
//!
//! The rules are tried in the order docs/statistics-method.md lists them:
//! 1. `p < α` and the CI is beyond ±θ → **improved** or **regressed**, by the metric's
//!    [`Direction`];
//! 2. the CI is inside ±θ → **equivalent** (even when `p < α`: the difference, if real, is
//!    smaller than the threshold everywhere in the CI);
//! 3. `p < α` (the CI excludes 0 but reaches inside ±θ) → **likely improved** or **likely
//!    regressed**: the direction is known, whether it matters is not. (It is not called
//!    "small": −12% [−23%, −1%] is not small, its size is uncertain.)
//! 4. otherwise **inconclusive**.
//!
//! Improved, regressed and equivalent are *decided*; the likely verdicts and inconclusive are
//! *undecided*, and only those get advice ([`crate::advice`]): the trials per arm that would
//! settle them. Advice is kept apart from the verdict, as flags are ([`crate::flags`]).
//!
//! Metrics that can be 0 (goodput, error rate) use the arithmetic variant: the Welch CI of the
//! difference of means against a margin `±M`, where `M` is absolute or `θ·|mean_baseline|`.
//! Reference: docs/statistics-method.md; Lakens, "Equivalence tests", Soc. Psychol. Personal. Sci. 8(4),
//! 2017 (CI-inside-bounds equivalence); Chromium Pinpoint's "unknown, needs more runs".

use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_probability};
use crate::estimate::{ConfidenceInterval, Estimate};
use crate::interval::{geometric_mean_ci, mean_ci};
use crate::power::{minimum_detectable_effect_unequal, sample_size, trials_to_settle};
use crate::summary::{coefficient_of_variation, mean_var};
use crate::welch::{WelchTest, welch, welch_log_ratio};

/// Power used for "how many trials would settle it" and for the minimum detectable effect.
pub use crate::power::DEFAULT_POWER;

/// Which way is better for a metric. stats is told this; it does not know metric names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Throughput, goodput: bigger is better.
    HigherIsBetter,
    /// Latencies, error rate: smaller is better.
    LowerIsBetter,
}

impl Direction {
    /// The other direction.
    pub fn flipped(self) -> Self {
        match self {
            Direction::HigherIsBetter => Direction::LowerIsBetter,
            Direction::LowerIsBetter => Direction::HigherIsBetter,
        }
    }

    /// Whether a change of sign `delta` (candidate − baseline) is an improvement.
    pub fn is_better(self, delta: f64) -> bool {
        match self {
            Direction::HigherIsBetter => delta > 0.0,
            Direction::LowerIsBetter => delta < 0.0,
        }
    }
}

/// Scale the comparison was made on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scale {
    /// Geometric means, ratio candidate/baseline (positive metrics).
    Log,
    /// Arithmetic means, difference candidate − baseline (metrics that can be 0).
    Arithmetic,
}

impl Scale {
    /// `e`'s interval on this analysis scale: the log of a ratio's interval (log scale), or
    /// the difference's interval itself (arithmetic).
    pub fn interval_of(self, e: &Estimate) -> ConfidenceInterval {
        match self {
            Scale::Log => ConfidenceInterval {
                level: e.ci.level,
                lower: e.ci.lower.ln(),
                upper: e.ci.upper.ln(),
            },
            Scale::Arithmetic => e.ci,
        }
    }
}

/// Practical margin for the arithmetic variant.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Margin {
    /// `θ·|mean of the baseline|` (needs a non-zero baseline mean).
    Relative(f64),
    /// A fixed margin in the metric's own unit (e.g. 0.01 for one point of error rate).
    Absolute(f64),
}

/// The verdict for one metric at one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Significant and beyond the threshold, in the good direction.
    Improved,
    /// Significant and beyond the threshold, in the bad direction.
    Regressed,
    /// The whole CI is inside ±θ.
    Equivalent,
    /// Significant in the good direction, but the CI reaches inside ±θ: the direction is
    /// known, whether it matters is not.
    LikelyImproved,
    /// Significant in the bad direction, but the CI reaches inside ±θ.
    LikelyRegressed,
    /// Anything else: more trials would settle it ([`crate::advice`]).
    Inconclusive,
}

impl Verdict {
    /// The verdict seen with the arms swapped: improved ↔ regressed, likely improved ↔ likely
    /// regressed, the rest unchanged.
    pub fn mirrored(self) -> Self {
        match self {
            Verdict::Improved => Verdict::Regressed,
            Verdict::Regressed => Verdict::Improved,
            Verdict::LikelyImproved => Verdict::LikelyRegressed,
            Verdict::LikelyRegressed => Verdict::LikelyImproved,
            other => other,
        }
    }

    /// Improved, regressed or equivalent: the cell has its answer.
    pub fn is_decided(self) -> bool {
        matches!(
            self,
            Verdict::Improved | Verdict::Regressed | Verdict::Equivalent
        )
    }

    /// Says which way the candidate went, when the verdict says it: improved and likely
    /// improved are `Some(true)`, regressed and likely regressed `Some(false)`.
    pub fn is_better(self) -> Option<bool> {
        match self {
            Verdict::Improved | Verdict::LikelyImproved => Some(true),
            Verdict::Regressed | Verdict::LikelyRegressed => Some(false),
            Verdict::Equivalent | Verdict::Inconclusive => None,
        }
    }

    /// The kebab-case name, as in JSON (`likely-improved`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::Equivalent => "equivalent",
            Verdict::LikelyImproved => "likely-improved",
            Verdict::LikelyRegressed => "likely-regressed",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// A full baseline-vs-candidate comparison of one metric at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmComparison {
    /// Log (ratio) or arithmetic (difference).
    pub scale: Scale,
    /// Direction of "better" the caller gave.
    pub direction: Direction,
    /// Significance level α; intervals are at `1 − α`.
    pub alpha: f64,
    /// Margin on the analysis scale: `ln(1 + θ)` (log) or `M` (arithmetic).
    pub margin: f64,
    /// Trials in the baseline arm.
    pub n_baseline: usize,
    /// Trials in the candidate arm.
    pub n_candidate: usize,
    /// Baseline geometric mean (log) or mean (arithmetic) with its t interval.
    pub baseline: Estimate,
    /// Candidate geometric mean (log) or mean (arithmetic) with its t interval.
    pub candidate: Estimate,
    /// Ratio candidate/baseline (log; `std_err` of the log ratio) or difference
    /// candidate − baseline (arithmetic).
    pub effect: Estimate,
    /// The Welch test on the analysis scale (logs, or raw values).
    pub test: WelchTest,
    /// Coefficient of variation `s/x̄` of the raw baseline values (`None` when the mean is 0).
    pub cv_baseline: Option<f64>,
    /// Coefficient of variation of the raw candidate values.
    pub cv_candidate: Option<f64>,
    /// Pooled SD on the analysis scale, `√((s²_A + s²_B)/2)` (of logs for the log scale).
    pub pooled_sd: f64,
    /// Minimum detectable effect at these counts (power 0.8), on the analysis scale.
    pub mde: f64,
    /// Trials per arm needed to detect the margin with power 0.8 at this spread (`None` when
    /// the spread is 0 or more than `power::MAX_TRIALS` are needed).
    pub trials_for_margin: Option<u64>,
    /// For an undecided verdict: trials per arm that would likely settle it
    /// ([`crate::power::trials_to_settle`]); `None` when decided, when the estimate sits
    /// exactly on the threshold, or when more than `power::MAX_TRIALS` would be needed.
    pub trials_to_settle: Option<u64>,
    /// `p < α`.
    pub significant: bool,
    /// The whole CI of the effect lies beyond ±margin.
    pub ci_beyond_margin: bool,
    /// The whole CI of the effect lies inside ±margin.
    pub ci_inside_margin: bool,
    /// The verdict (module docs).
    pub verdict: Verdict,
}

impl ArmComparison {
    /// The same comparison with its test of "no difference" read at `test_alpha` instead of
    /// `alpha` (the interval stays at `1 − alpha`): `significant` becomes `p < test_alpha`,
    /// the verdict is reclassified on it, and the advice follows the new verdict. What a
    /// multiplicity correction does to one cell: with Holm's level for the cell
    /// ([`crate::holm::holm_levels`]) the verdict is significant exactly when Holm rejects
    /// (docs/statistics-method.md, "Many tests").
    pub fn tested_at(&self, test_alpha: f64) -> ArmComparison {
        let mut out = self.clone();
        out.significant = self.test.p < test_alpha;
        out.verdict = classify(
            self.test.diff,
            &self.effect_interval_on_scale(),
            out.significant,
            self.margin,
            self.direction,
        );
        out.trials_to_settle = if out.verdict.is_decided() {
            None
        } else {
            trials_to_settle(
                self.test.diff,
                self.pooled_sd.max(f64::MIN_POSITIVE),
                self.margin,
                self.alpha,
                (self.n_baseline, self.n_candidate),
            )
        };
        out
    }

    /// The effect's interval on the analysis scale: the log of the ratio's interval (log
    /// scale), or the difference's interval (arithmetic).
    pub fn effect_interval_on_scale(&self) -> ConfidenceInterval {
        self.scale.interval_of(&self.effect)
    }
}

/// The verdict rule by itself, on the analysis scale (module docs): `d` the estimate,
/// `ci` its interval, `significant` whether the test rejects "no difference" (`p < α` for a
/// fixed-size comparison; the repeated interval excluding 0 for a sequential one), `margin`
/// = `ln(1+θ)` or `M`.
pub fn classify(
    d: f64,
    ci: &ConfidenceInterval,
    significant: bool,
    margin: f64,
    direction: Direction,
) -> Verdict {
    let beyond = ci.lower > margin || ci.upper < -margin;
    let inside = ci.lower > -margin && ci.upper < margin;
    let better = direction.is_better(d);
    if significant && beyond {
        if better {
            Verdict::Improved
        } else {
            Verdict::Regressed
        }
    } else if inside {
        Verdict::Equivalent
    } else if significant {
        if better {
            Verdict::LikelyImproved
        } else {
            Verdict::LikelyRegressed
        }
    } else {
        Verdict::Inconclusive
    }
}

fn check_threshold(name: &'static str, value: f64) -> Result<(), StatsError> {
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

struct Core {
    test: WelchTest,
    pooled_sd: f64,
    mde: f64,
    trials_for_margin: Option<u64>,
    trials_to_settle: Option<u64>,
    verdict: Verdict,
}

fn core(
    test: WelchTest,
    var_a: f64,
    var_b: f64,
    n: (usize, usize),
    margin: f64,
    alpha: f64,
    direction: Direction,
) -> Result<Core, StatsError> {
    let pooled_sd = ((var_a + var_b) / 2.0).sqrt();
    let spread_or_tiny = pooled_sd.max(f64::MIN_POSITIVE);
    let mde = minimum_detectable_effect_unequal(
        n.0 as u64,
        n.1 as u64,
        spread_or_tiny,
        alpha,
        DEFAULT_POWER,
    )?;
    let trials_for_margin = if pooled_sd > 0.0 {
        sample_size(pooled_sd, margin, alpha, DEFAULT_POWER).ok()
    } else {
        None
    };
    let verdict = classify(test.diff, &test.ci, test.p < alpha, margin, direction);
    let trials_to_settle = if verdict.is_decided() {
        None
    } else {
        trials_to_settle(test.diff, spread_or_tiny, margin, alpha, n)
    };
    Ok(Core {
        test,
        pooled_sd,
        mde,
        trials_for_margin,
        trials_to_settle,
        verdict,
    })
}

/// Compare per-trial values of a positive metric (throughput, latency) on the log scale:
/// Welch on logs, ratio CI `exp(d ± t·SE)`, verdict against `θ = threshold` (e.g. 0.02), with
/// intervals at `1 − alpha`. Needs ≥ 3 trials per arm and values > 0 (module docs).
pub fn compare_arms(
    baseline: &[f64],
    candidate: &[f64],
    direction: Direction,
    threshold: f64,
    alpha: f64,
) -> Result<ArmComparison, StatsError> {
    check_threshold("threshold", threshold)?;
    check_probability("alpha", alpha)?;
    let level = 1.0 - alpha;
    let ratio = welch_log_ratio(baseline, candidate, level)?;
    let base = geometric_mean_ci(baseline, level)?;
    let cand = geometric_mean_ci(candidate, level)?;
    let margin = threshold.ln_1p();
    let log_var = |v: &[f64]| {
        let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        mean_var(&logs).map_or(0.0, |(_, var)| var)
    };
    let (var_a, var_b) = (log_var(baseline), log_var(candidate));
    let c = core(
        ratio.log,
        var_a,
        var_b,
        (baseline.len(), candidate.len()),
        margin,
        alpha,
        direction,
    )?;
    Ok(ArmComparison {
        scale: Scale::Log,
        direction,
        alpha,
        margin,
        n_baseline: baseline.len(),
        n_candidate: candidate.len(),
        baseline: base,
        candidate: cand,
        effect: ratio.ratio,
        test: c.test,
        cv_baseline: coefficient_of_variation(baseline).ok(),
        cv_candidate: coefficient_of_variation(candidate).ok(),
        pooled_sd: c.pooled_sd,
        mde: c.mde,
        trials_for_margin: c.trials_for_margin,
        trials_to_settle: c.trials_to_settle,
        significant: c.test.p < alpha,
        ci_beyond_margin: c.test.ci.lower > margin || c.test.ci.upper < -margin,
        ci_inside_margin: c.test.ci.lower > -margin && c.test.ci.upper < margin,
        verdict: c.verdict,
    })
}

/// Compare per-trial values of a metric that can be 0 (goodput, error rate) on the raw scale:
/// Welch on values, CI of the difference candidate − baseline, verdict against `±M`
/// ([`Margin`]). When both arms are constant and equal (e.g. no errors anywhere) the result
/// is *equivalent* with a zero-width interval; constant but different arms are an error.
pub fn compare_arms_arithmetic(
    baseline: &[f64],
    candidate: &[f64],
    direction: Direction,
    margin: Margin,
    alpha: f64,
) -> Result<ArmComparison, StatsError> {
    check_probability("alpha", alpha)?;
    let level = 1.0 - alpha;
    let base = mean_ci(baseline, level)?;
    let cand = mean_ci(candidate, level)?;
    let m = match margin {
        Margin::Absolute(m) => {
            check_threshold("margin", m)?;
            m
        }
        Margin::Relative(theta) => {
            check_threshold("threshold", theta)?;
            if base.point == 0.0 {
                return Err(StatsError::InvalidParameter {
                    name: "relative margin",
                    value: theta,
                    why: "baseline mean is 0: give an absolute margin",
                });
            }
            theta * base.point.abs()
        }
    };
    let (n_a, n_b) = (baseline.len(), candidate.len());
    let test = match welch(baseline, candidate, level) {
        Ok(t) => t,
        Err(StatsError::ZeroVariance { .. }) if base.point == cand.point => WelchTest {
            diff: 0.0,
            std_err: 0.0,
            df: (n_a + n_b - 2) as f64,
            t: 0.0,
            p: 1.0,
            ci: ConfidenceInterval {
                level,
                lower: 0.0,
                upper: 0.0,
            },
        },
        Err(e) => return Err(e),
    };
    let var_a = mean_var(baseline).map_or(0.0, |(_, v)| v);
    let var_b = mean_var(candidate).map_or(0.0, |(_, v)| v);
    let c = core(test, var_a, var_b, (n_a, n_b), m, alpha, direction)?;
    Ok(ArmComparison {
        scale: Scale::Arithmetic,
        direction,
        alpha,
        margin: m,
        n_baseline: n_a,
        n_candidate: n_b,
        baseline: base,
        candidate: cand,
        effect: Estimate {
            point: test.diff,
            ci: test.ci,
            std_err: test.std_err,
        },
        test: c.test,
        cv_baseline: coefficient_of_variation(baseline).ok(),
        cv_candidate: coefficient_of_variation(candidate).ok(),
        pooled_sd: c.pooled_sd,
        mde: c.mde,
        trials_for_margin: c.trials_for_margin,
        trials_to_settle: c.trials_to_settle,
        significant: c.test.p < alpha,
        ci_beyond_margin: c.test.ci.lower > m || c.test.ci.upper < -m,
        ci_inside_margin: c.test.ci.lower > -m && c.test.ci.upper < m,
        verdict: c.verdict,
    })
}

#[cfg(test)]
mod tests;
