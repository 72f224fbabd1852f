//! Reproduced or not: does a re-run confirm a published value or a published A/B claim?
//!
//! Method (STATISTICS.md, "Reproduced or not"):
//! * A published **value** is *reproduced* when the re-run's ratio new/published has a CI
//!   inside ±θ — the equivalence half of the verdict rule ([`crate::verdict`]), with the
//!   published trials as the baseline arm and the new trials as the candidate. It is *not
//!   reproduced* when the whole CI lies beyond ±θ (the value moved by more than θ, whichever
//!   way), and *inconclusive* otherwise, with the trials per arm that would settle it.
//!   "The published value lies inside the new 95% CI" is deliberately not the test: it
//!   ignores between-session variance and fails about one honest re-run in eight.
//! * A published **A/B claim** (candidate vs baseline within the published run) is
//!   *reproduced* when the re-run gives the same verdict direction ([`claim_outcome`]).
//!
//! The margins are the verdict module's: `ln(1 + θ)` on the log scale, `M` on the arithmetic
//! scale. Reference: STATISTICS.md; Lakens 2017 (equivalence by CI inside bounds).

use serde::{Deserialize, Serialize};

use crate::error::StatsError;
use crate::verdict::{
    ArmComparison, Direction, Margin, Verdict, compare_arms, compare_arms_arithmetic,
};

/// The outcome for one published value or claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reproduction {
    /// The re-run confirms it.
    Reproduced,
    /// The re-run contradicts it.
    NotReproduced,
    /// Neither: more trials are needed (or the evidence is missing).
    Inconclusive,
}

impl Reproduction {
    /// As written in reports: `reproduced`, `not reproduced`, `inconclusive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reproduction::Reproduced => "reproduced",
            Reproduction::NotReproduced => "not reproduced",
            Reproduction::Inconclusive => "inconclusive",
        }
    }
}

/// The value rule on the analysis scale: `[lower, upper]` is the CI of `ln(new/published)`
/// (log scale) or of `new − published` (arithmetic scale), `margin` is `ln(1+θ)` or `M`.
/// Inside ±margin → reproduced; wholly beyond → not reproduced; else inconclusive.
pub fn value_outcome(lower: f64, upper: f64, margin: f64) -> Reproduction {
    if !(lower.is_finite() && upper.is_finite() && margin.is_finite()) {
        return Reproduction::Inconclusive;
    }
    if lower > -margin && upper < margin {
        Reproduction::Reproduced
    } else if lower > margin || upper < -margin {
        Reproduction::NotReproduced
    } else {
        Reproduction::Inconclusive
    }
}

/// A published value checked against a re-run: the comparison (published = baseline arm,
/// new = candidate arm) and the outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueCheck {
    /// The Welch comparison the outcome is read from.
    pub comparison: ArmComparison,
    /// Reproduced, not reproduced or inconclusive.
    pub outcome: Reproduction,
    /// With an inconclusive outcome, the trials per arm that would settle it.
    pub trials_per_arm: Option<u64>,
}

fn check(comparison: ArmComparison) -> ValueCheck {
    let outcome = value_outcome(
        comparison.test.ci.lower,
        comparison.test.ci.upper,
        comparison.margin,
    );
    let trials_per_arm = match (outcome, comparison.verdict) {
        (Reproduction::Inconclusive, Verdict::Inconclusive { trials_per_arm }) => trials_per_arm,
        _ => None,
    };
    ValueCheck {
        comparison,
        outcome,
        trials_per_arm,
    }
}

/// Check the per-trial values of a positive metric (log scale, ratio new/published) against
/// θ = `threshold` at level `1 − alpha`. Needs ≥ 3 trials per side and values > 0.
pub fn reproduce_value(
    published: &[f64],
    new: &[f64],
    direction: Direction,
    threshold: f64,
    alpha: f64,
) -> Result<ValueCheck, StatsError> {
    compare_arms(published, new, direction, threshold, alpha).map(check)
}

/// The same for a metric that can be 0 (difference new − published against `margin`).
pub fn reproduce_value_arithmetic(
    published: &[f64],
    new: &[f64],
    direction: Direction,
    margin: Margin,
    alpha: f64,
) -> Result<ValueCheck, StatsError> {
    compare_arms_arithmetic(published, new, direction, margin, alpha).map(check)
}

/// What an A/B verdict claims, with its direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Claim {
    /// Better by more than θ.
    Improved,
    /// Worse by more than θ.
    Regressed,
    /// Within ±θ.
    Equivalent,
    /// Significantly better, perhaps by less than θ.
    SmallImprovement,
    /// Significantly worse, perhaps by less than θ.
    SmallRegression,
}

impl Claim {
    /// The claim a verdict makes; `effect_is_better` gives the direction of a
    /// significant-but-small one. `None` for an inconclusive verdict (no claim).
    pub fn from_verdict(v: Verdict, effect_is_better: bool) -> Option<Claim> {
        match v {
            Verdict::Improved => Some(Claim::Improved),
            Verdict::Regressed => Some(Claim::Regressed),
            Verdict::Equivalent => Some(Claim::Equivalent),
            Verdict::SignificantButSmall if effect_is_better => Some(Claim::SmallImprovement),
            Verdict::SignificantButSmall => Some(Claim::SmallRegression),
            Verdict::Inconclusive { .. } => None,
        }
    }

    /// The sign of the claim: +1 better, −1 worse, 0 none.
    fn sign(self) -> i8 {
        match self {
            Claim::Improved | Claim::SmallImprovement => 1,
            Claim::Regressed | Claim::SmallRegression => -1,
            Claim::Equivalent => 0,
        }
    }
}

/// The claim rule: does the re-run's verdict (`None`: inconclusive) give the published
/// claim's direction?
/// * improved / regressed: reproduced by the same verdict; contradicted by the opposite
///   direction or by *equivalent*; a significant-but-small effect in the same direction
///   does not confirm "beyond θ" (inconclusive).
/// * equivalent: reproduced by equivalent; contradicted by improved or regressed.
/// * significant but small: reproduced by any significant effect in the same direction;
///   contradicted by one in the opposite direction.
pub fn claim_outcome(published: Claim, new: Option<Claim>) -> Reproduction {
    let Some(new) = new else {
        return Reproduction::Inconclusive;
    };
    use Claim::*;
    match published {
        Improved | Regressed => {
            if new == published {
                Reproduction::Reproduced
            } else if new == Equivalent || new.sign() == -published.sign() {
                Reproduction::NotReproduced
            } else {
                Reproduction::Inconclusive
            }
        }
        Equivalent => match new {
            Equivalent => Reproduction::Reproduced,
            Improved | Regressed => Reproduction::NotReproduced,
            SmallImprovement | SmallRegression => Reproduction::Inconclusive,
        },
        SmallImprovement | SmallRegression => {
            if new.sign() == published.sign() {
                Reproduction::Reproduced
            } else if new.sign() == -published.sign() {
                Reproduction::NotReproduced
            } else {
                Reproduction::Inconclusive
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UP: Direction = Direction::HigherIsBetter;

    #[test]
    fn value_rule_branches() {
        let m = 0.05f64.ln_1p();
        assert_eq!(value_outcome(-0.01, 0.02, m), Reproduction::Reproduced);
        assert_eq!(value_outcome(0.06, 0.2, m), Reproduction::NotReproduced);
        assert_eq!(value_outcome(-0.3, -0.1, m), Reproduction::NotReproduced);
        assert_eq!(value_outcome(-0.01, 0.08, m), Reproduction::Inconclusive);
        assert_eq!(value_outcome(f64::NAN, 0.0, m), Reproduction::Inconclusive);
    }

    #[test]
    fn same_numbers_reproduce_and_a_half_larger_publication_does_not() {
        let new = [100.0, 101.0, 99.5, 100.4, 100.2];
        let same = [100.3, 99.8, 100.9, 99.9, 100.1];
        let c = reproduce_value(&same, &new, UP, 0.05, 0.05).expect("valid input");
        assert_eq!(c.outcome, Reproduction::Reproduced);
        let inflated: Vec<f64> = same.iter().map(|v| v * 1.5).collect();
        let c = reproduce_value(&inflated, &new, UP, 0.05, 0.05).expect("valid input");
        assert_eq!(c.outcome, Reproduction::NotReproduced);
        assert!(c.comparison.effect.point < 0.7 && c.comparison.effect.point > 0.64);
    }

    #[test]
    fn a_spread_larger_than_theta_is_inconclusive_with_a_trial_count() {
        let published = [90.0, 110.0, 100.0];
        let new = [95.0, 108.0, 99.0];
        let c = reproduce_value(&published, &new, UP, 0.02, 0.05).expect("valid input");
        assert_eq!(c.outcome, Reproduction::Inconclusive);
        assert!(c.trials_per_arm.is_some_and(|n| n > 3));
    }

    #[test]
    fn too_few_trials_is_an_error_not_a_verdict() {
        assert!(reproduce_value(&[1.0], &[1.0, 1.1, 1.2], UP, 0.05, 0.05).is_err());
    }

    #[test]
    fn claim_rule() {
        use Claim::*;
        use Reproduction::*;
        assert_eq!(claim_outcome(Improved, Some(Improved)), Reproduced);
        assert_eq!(claim_outcome(Improved, Some(Regressed)), NotReproduced);
        assert_eq!(claim_outcome(Improved, Some(Equivalent)), NotReproduced);
        assert_eq!(
            claim_outcome(Improved, Some(SmallImprovement)),
            Inconclusive
        );
        assert_eq!(
            claim_outcome(Improved, Some(SmallRegression)),
            NotReproduced
        );
        assert_eq!(claim_outcome(Improved, None), Inconclusive);
        assert_eq!(claim_outcome(Regressed, Some(Regressed)), Reproduced);
        assert_eq!(claim_outcome(Equivalent, Some(Equivalent)), Reproduced);
        assert_eq!(claim_outcome(Equivalent, Some(Regressed)), NotReproduced);
        assert_eq!(
            claim_outcome(Equivalent, Some(SmallImprovement)),
            Inconclusive
        );
        assert_eq!(claim_outcome(SmallImprovement, Some(Improved)), Reproduced);
        assert_eq!(
            claim_outcome(SmallImprovement, Some(SmallRegression)),
            NotReproduced
        );
        assert_eq!(
            claim_outcome(SmallImprovement, Some(Equivalent)),
            Inconclusive
        );
    }

    #[test]
    fn claims_from_verdicts() {
        assert_eq!(
            Claim::from_verdict(Verdict::SignificantButSmall, false),
            Some(Claim::SmallRegression)
        );
        assert_eq!(
            Claim::from_verdict(
                Verdict::Inconclusive {
                    trials_per_arm: Some(9)
                },
                true
            ),
            None
        );
    }
}
