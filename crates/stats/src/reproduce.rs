//! Reproduced or not: does a re-run confirm a published value or a published A/B claim?
//!
//! Method (docs/statistics-method.md, "Reproduced or not"):
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
//! scale. Reference: docs/statistics-method.md; Lakens 2017 (equivalence by CI inside bounds).

use serde::{Deserialize, Serialize};

use crate::verdict::Verdict;

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

/// The value rule, read off the verdict of the comparison published (baseline arm) vs new
/// (candidate arm), whose interval and margin it already judged: the CI inside ±margin
/// (*equivalent*) → reproduced; wholly beyond ±margin (*improved* or *regressed*, whichever
/// way the value moved) → not reproduced; anything else (*likely improved* or *likely
/// regressed*, *inconclusive*, or no verdict at all: `None`) → inconclusive.
pub fn value_outcome(verdict: Option<Verdict>) -> Reproduction {
    match verdict {
        Some(Verdict::Equivalent) => Reproduction::Reproduced,
        Some(Verdict::Improved | Verdict::Regressed) => Reproduction::NotReproduced,
        Some(Verdict::LikelyImproved | Verdict::LikelyRegressed | Verdict::Inconclusive) | None => {
            Reproduction::Inconclusive
        }
    }
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
    /// Significantly better, by an uncertain amount (likely improved).
    LikelyImproved,
    /// Significantly worse, by an uncertain amount (likely regressed).
    LikelyRegressed,
}

impl Claim {
    /// The claim a verdict makes. `None` for an inconclusive verdict (no claim).
    pub fn from_verdict(v: Verdict) -> Option<Claim> {
        match v {
            Verdict::Improved => Some(Claim::Improved),
            Verdict::Regressed => Some(Claim::Regressed),
            Verdict::Equivalent => Some(Claim::Equivalent),
            Verdict::LikelyImproved => Some(Claim::LikelyImproved),
            Verdict::LikelyRegressed => Some(Claim::LikelyRegressed),
            Verdict::Inconclusive => None,
        }
    }

    /// The sign of the claim: +1 better, −1 worse, 0 none.
    fn sign(self) -> i8 {
        match self {
            Claim::Improved | Claim::LikelyImproved => 1,
            Claim::Regressed | Claim::LikelyRegressed => -1,
            Claim::Equivalent => 0,
        }
    }
}

/// The claim rule: does the re-run's verdict (`None`: inconclusive) give the published
/// claim's direction?
/// * improved / regressed: reproduced by the same verdict; contradicted by the opposite
///   direction or by *equivalent*; a likely effect in the same direction does not confirm
///   "beyond θ" (inconclusive).
/// * equivalent: reproduced by equivalent; contradicted by improved or regressed.
/// * likely improved / likely regressed: reproduced by any significant effect in the same
///   direction; contradicted by one in the opposite direction.
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
            LikelyImproved | LikelyRegressed => Reproduction::Inconclusive,
        },
        LikelyImproved | LikelyRegressed => {
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
    use crate::verdict::{Direction, compare_arms};

    const UP: Direction = Direction::HigherIsBetter;

    fn value(published: &[f64], new: &[f64], theta: f64) -> (Reproduction, Verdict) {
        let c = compare_arms(published, new, UP, theta, 0.05).expect("valid input");
        (value_outcome(Some(c.verdict)), c.verdict)
    }

    #[test]
    fn same_numbers_reproduce_and_a_half_larger_publication_does_not() {
        let new = [100.0, 101.0, 99.5, 100.4, 100.2];
        let same = [100.3, 99.8, 100.9, 99.9, 100.1];
        assert_eq!(value(&same, &new, 0.05).0, Reproduction::Reproduced);
        let inflated: Vec<f64> = same.iter().map(|v| v * 1.5).collect();
        assert_eq!(value(&inflated, &new, 0.05).0, Reproduction::NotReproduced);
        // A value that moved up by more than θ is not reproduced either.
        let deflated: Vec<f64> = same.iter().map(|v| v * 0.5).collect();
        assert_eq!(value(&deflated, &new, 0.05).0, Reproduction::NotReproduced);
    }

    #[test]
    fn a_spread_larger_than_theta_or_a_small_shift_is_inconclusive() {
        let (outcome, verdict) = value(&[90.0, 110.0, 100.0], &[95.0, 108.0, 99.0], 0.02);
        assert_eq!(outcome, Reproduction::Inconclusive);
        assert_eq!(verdict, Verdict::Inconclusive);
        // 3% higher, very precisely, θ = 5%: significant but not beyond θ, not inside it.
        let base = [100.0, 100.1, 99.9, 100.05, 99.95];
        let up: Vec<f64> = base.iter().map(|v| v * 1.03).collect();
        let (outcome, verdict) = value(&base, &up, 0.05);
        assert_eq!(verdict, Verdict::Equivalent, "3% is inside ±5%");
        assert_eq!(outcome, Reproduction::Reproduced);
        let (outcome, verdict) = value(&base, &up, 0.02);
        assert_eq!(verdict, Verdict::Improved, "3% is beyond ±2%");
        assert_eq!(outcome, Reproduction::NotReproduced);
        assert_eq!(
            value_outcome(Some(Verdict::LikelyImproved)),
            Reproduction::Inconclusive
        );
        assert_eq!(value_outcome(None), Reproduction::Inconclusive);
    }

    #[test]
    fn claim_rule() {
        use Claim::*;
        use Reproduction::*;
        assert_eq!(claim_outcome(Improved, Some(Improved)), Reproduced);
        assert_eq!(claim_outcome(Improved, Some(Regressed)), NotReproduced);
        assert_eq!(claim_outcome(Improved, Some(Equivalent)), NotReproduced);
        assert_eq!(claim_outcome(Improved, Some(LikelyImproved)), Inconclusive);
        assert_eq!(
            claim_outcome(Improved, Some(LikelyRegressed)),
            NotReproduced
        );
        assert_eq!(claim_outcome(Improved, None), Inconclusive);
        assert_eq!(claim_outcome(Regressed, Some(Regressed)), Reproduced);
        assert_eq!(claim_outcome(Equivalent, Some(Equivalent)), Reproduced);
        assert_eq!(claim_outcome(Equivalent, Some(Regressed)), NotReproduced);
        assert_eq!(
            claim_outcome(Equivalent, Some(LikelyImproved)),
            Inconclusive
        );
        assert_eq!(claim_outcome(LikelyImproved, Some(Improved)), Reproduced);
        assert_eq!(
            claim_outcome(LikelyImproved, Some(LikelyRegressed)),
            NotReproduced
        );
        assert_eq!(
            claim_outcome(LikelyImproved, Some(Equivalent)),
            Inconclusive
        );
    }

    #[test]
    fn claims_from_verdicts() {
        assert_eq!(
            Claim::from_verdict(Verdict::LikelyRegressed),
            Some(Claim::LikelyRegressed)
        );
        assert_eq!(Claim::from_verdict(Verdict::Inconclusive), None);
    }
}
