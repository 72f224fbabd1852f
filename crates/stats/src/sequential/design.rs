//! A sequential design in use: looks, the repeated interval of a comparison and its verdict
//! (module docs of `sequential`, "Information" and "Verdict").

use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_probability};
use crate::estimate::{ConfidenceInterval, Estimate};
use crate::interval::MIN_TRIALS_FOR_INTERVAL;
use crate::verdict::{
    ArmComparison, Direction, Margin, Scale, Verdict, classify, compare_arms_arithmetic,
};
use crate::welch::{WelchTest, welch_log_ratio};

use super::{SpendingFunction, boundaries, nominal_alpha, repeated_ci};

/// A sequential design: spending function, overall two-sided `alpha` (both error rates are
/// kept at it across looks) and the budget `max_trials_per_arm` (`N`), which defines the
/// information fraction (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SequentialDesign {
    /// How α is spent over the looks.
    pub spending: SpendingFunction,
    /// Overall two-sided level; the RCIs cover simultaneously with probability ≥ `1 − alpha`.
    pub alpha: f64,
    /// The budget `N`: trials per arm at which the information fraction reaches 1.
    pub max_trials_per_arm: u64,
}

/// One look of a sequential design: where it is and how wide its interval must be.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Look {
    /// 1 for the first look.
    pub index: usize,
    /// Baseline trials at this look.
    pub n_baseline: u64,
    /// Candidate trials at this look.
    pub n_candidate: u64,
    /// Information fraction `t_k` ([`SequentialDesign::fraction`]).
    pub fraction: f64,
    /// The design's overall two-sided α.
    pub alpha: f64,
    /// `α(t_k)`: the error spent up to and including this look.
    pub spent: f64,
    /// The z boundary `c_k`.
    pub z_boundary: f64,
    /// `2(1 − Φ(c_k))`: the nominal level of this look ([`nominal_alpha`]).
    pub nominal_alpha: f64,
    /// The budget is reached (`t_k = 1`): this look is the last one.
    pub last: bool,
}

impl SequentialDesign {
    /// A design, checked: `alpha ∈ (0, 1)`, `max_trials_per_arm ≥ 3` (no interval below 3).
    pub fn new(
        spending: SpendingFunction,
        alpha: f64,
        max_trials_per_arm: u64,
    ) -> Result<Self, StatsError> {
        let design = SequentialDesign {
            spending,
            alpha,
            max_trials_per_arm,
        };
        design.check()?;
        Ok(design)
    }

    /// The checks of [`SequentialDesign::new`], for a design built field by field or read
    /// from a file.
    pub fn check(&self) -> Result<(), StatsError> {
        check_probability("alpha", self.alpha)?;
        if self.max_trials_per_arm < MIN_TRIALS_FOR_INTERVAL as u64 {
            return Err(StatsError::InvalidParameter {
                name: "max_trials_per_arm",
                value: self.max_trials_per_arm as f64,
                why: "must be at least 3 (no interval below 3 trials)",
            });
        }
        Ok(())
    }

    /// The information fraction with `n_baseline` and `n_candidate` trials:
    /// `min(1, H/N)` with `H = 2/(1/n_A + 1/n_B)` the harmonic mean of the counts (module
    /// docs: the information `1/(1/n_A + 1/n_B)` relative to its value `N/2` at the budget).
    /// Equal arms give `n/N`. Both counts must be ≥ 1.
    pub fn fraction(&self, n_baseline: u64, n_candidate: u64) -> Result<f64, StatsError> {
        self.check()?;
        if n_baseline == 0 || n_candidate == 0 {
            return Err(StatsError::TooFewSamples {
                what: "information fraction",
                n: 0,
                required: 1,
            });
        }
        let (a, b) = (n_baseline as f64, n_candidate as f64);
        let harmonic = 2.0 * a * b / (a + b);
        Ok((harmonic / self.max_trials_per_arm as f64).min(1.0))
    }

    /// Every look of a run whose looks so far had `history[k] = (n_baseline, n_candidate)`
    /// trials, in order, the current look last. The fractions must increase strictly: a
    /// look after the budget was reached (fraction already 1) is an error. `looks(h)[k]` is
    /// `look(&h[..=k])`: later looks never change earlier boundaries.
    pub fn looks(&self, history: &[(u64, u64)]) -> Result<Vec<Look>, StatsError> {
        let fractions = history
            .iter()
            .map(|&(a, b)| self.fraction(a, b))
            .collect::<Result<Vec<f64>, StatsError>>()?;
        let bounds = boundaries(self.spending, self.alpha, &fractions)?;
        history
            .iter()
            .zip(fractions.iter().zip(&bounds))
            .enumerate()
            .map(|(k, (&(a, b), (&t, &c)))| {
                Ok(Look {
                    index: k + 1,
                    n_baseline: a,
                    n_candidate: b,
                    fraction: t,
                    alpha: self.alpha,
                    spent: self.spending.spent(self.alpha, t)?,
                    z_boundary: c,
                    nominal_alpha: nominal_alpha(c),
                    last: t >= 1.0,
                })
            })
            .collect()
    }

    /// The current look (the last entry of `history`; see [`SequentialDesign::looks`]).
    pub fn look(&self, history: &[(u64, u64)]) -> Result<Look, StatsError> {
        self.looks(history)?.pop().ok_or(StatsError::TooFewSamples {
            what: "group-sequential looks",
            n: 0,
            required: 1,
        })
    }
}

/// A baseline-vs-candidate comparison of one metric at one look of a sequential design.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialComparison {
    /// Log (ratio) or arithmetic (difference).
    pub scale: Scale,
    /// Direction of "better" the caller gave.
    pub direction: Direction,
    /// The look this comparison was made at.
    pub look: Look,
    /// Margin on the analysis scale: `ln(1 + θ)` (log) or `M` (arithmetic).
    pub margin: f64,
    /// The Welch test on the analysis scale, as the fixed-sample comparison has it (its `ci`
    /// is the fixed-sample interval at `1 − α`, for reference only: not valid after looking).
    pub test: WelchTest,
    /// The repeated confidence interval on the analysis scale (level: the simultaneous
    /// `1 − α`).
    pub rci: ConfidenceInterval,
    /// Ratio candidate/baseline (log: point `exp(d)`, interval `exp` of the RCI, `std_err` of
    /// the log ratio) or difference (arithmetic, interval the RCI).
    pub effect: Estimate,
    /// The RCI excludes 0.
    pub significant: bool,
    /// The whole RCI lies beyond ±margin.
    pub ci_beyond_margin: bool,
    /// The whole RCI lies inside ±margin.
    pub ci_inside_margin: bool,
    /// [`crate::verdict::classify`] on the RCI.
    pub verdict: Verdict,
    /// The cell is done: its verdict is decided (improved, regressed, equivalent) or this was
    /// the last look. Otherwise add a round of trials and look again.
    pub stop: bool,
}

fn check_counts(baseline: &[f64], candidate: &[f64], look: &Look) -> Result<(), StatsError> {
    for (n, expected) in [
        (baseline.len(), look.n_baseline),
        (candidate.len(), look.n_candidate),
    ] {
        if n as u64 != expected {
            return Err(StatsError::InvalidParameter {
                name: "look",
                value: n as f64,
                why: "the arms' trial counts differ from those the look was computed for",
            });
        }
    }
    Ok(())
}

fn sequential_verdict(
    scale: Scale,
    direction: Direction,
    look: &Look,
    margin: f64,
    test: WelchTest,
) -> Result<SequentialComparison, StatsError> {
    let rci = repeated_ci(
        test.diff,
        test.std_err,
        test.df,
        look.z_boundary,
        1.0 - look.alpha,
    )?;
    let significant = rci.lower > 0.0 || rci.upper < 0.0;
    let verdict = classify(test.diff, &rci, significant, margin, direction);
    let effect = match scale {
        Scale::Log => Estimate {
            point: test.diff.exp(),
            ci: ConfidenceInterval {
                level: rci.level,
                lower: rci.lower.exp(),
                upper: rci.upper.exp(),
            },
            std_err: test.std_err,
        },
        Scale::Arithmetic => Estimate {
            point: test.diff,
            ci: rci,
            std_err: test.std_err,
        },
    };
    Ok(SequentialComparison {
        scale,
        direction,
        look: *look,
        margin,
        test,
        rci,
        effect,
        significant,
        ci_beyond_margin: rci.lower > margin || rci.upper < -margin,
        ci_inside_margin: rci.lower > -margin && rci.upper < margin,
        verdict,
        stop: verdict.is_decided() || look.last,
    })
}

/// The sequential verdict of a positive metric on the log scale at `look`: the Welch test on
/// logs ([`welch_log_ratio`], as [`crate::verdict::compare_arms`]), its RCI at the look's
/// boundary, and [`classify`] against `L = ln(1 + threshold)` with "significant" = the RCI
/// excludes 0. The arms must hold the look's trial counts (≥ 3 each).
pub fn compare_arms_sequential(
    baseline: &[f64],
    candidate: &[f64],
    direction: Direction,
    threshold: f64,
    look: &Look,
) -> Result<SequentialComparison, StatsError> {
    if !(threshold.is_finite() && threshold > 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "threshold",
            value: threshold,
            why: "must be finite and > 0",
        });
    }
    check_counts(baseline, candidate, look)?;
    let ratio = welch_log_ratio(baseline, candidate, 1.0 - look.alpha)?;
    sequential_verdict(Scale::Log, direction, look, threshold.ln_1p(), ratio.log)
}

/// The sequential verdict of a metric that can be 0 on the raw scale at `look`: the
/// fixed-sample comparison ([`compare_arms_arithmetic`]: Welch on values, margin `M` from
/// [`Margin`], constant equal arms as a zero-width difference) with its interval replaced by
/// the RCI and "significant" = the RCI excludes 0.
pub fn compare_arms_arithmetic_sequential(
    baseline: &[f64],
    candidate: &[f64],
    direction: Direction,
    margin: Margin,
    look: &Look,
) -> Result<SequentialComparison, StatsError> {
    check_counts(baseline, candidate, look)?;
    let fixed = compare_arms_arithmetic(baseline, candidate, direction, margin, look.alpha)?;
    sequential_verdict(Scale::Arithmetic, direction, look, fixed.margin, fixed.test)
}

/// A fixed-sample comparison ([`crate::verdict::compare_arms`],
/// [`crate::verdict::compare_arms_arithmetic`]) read at `look`: its effect interval replaced
/// by the repeated confidence interval, "significant" by "the RCI excludes 0", and its
/// verdict reclassified on the RCI — what [`compare_arms_sequential`] gives, for a
/// comparison already made. Unlike that function it does not require the arms to hold the
/// look's trial counts: the validity flags re-read a cell without one trial, or with a trend
/// removed, at the boundary of the look the cell stopped at. Advice (`trials_to_settle`, the
/// fixed-sample count of [`crate::advice`]) is given for an undecided verdict and cleared
/// for a decided one.
pub fn at_look(c: &ArmComparison, look: &Look) -> Result<ArmComparison, StatsError> {
    let s = sequential_verdict(c.scale, c.direction, look, c.margin, c.test)?;
    let mut out = c.clone();
    out.effect = s.effect;
    out.significant = s.significant;
    out.ci_beyond_margin = s.ci_beyond_margin;
    out.ci_inside_margin = s.ci_inside_margin;
    out.verdict = s.verdict;
    out.trials_to_settle = if s.verdict.is_decided() {
        None
    } else {
        crate::advice::trials_to_settle(
            c.test.diff,
            c.pooled_sd.max(f64::MIN_POSITIVE),
            c.margin,
            c.alpha,
            (c.n_baseline, c.n_candidate),
        )
    };
    Ok(out)
}
