//! Advice: how many trials per arm would settle an *undecided* cell (likely improved, likely
//! regressed, inconclusive).
//!
//! Method (docs/statistics-method.md, "Advice"): a verdict is decided once its interval lies
//! wholly beyond ±L (improved, regressed) or wholly inside it (equivalent), `L = ln(1 + θ)`
//! on the log scale or the margin `M` on the arithmetic scale. From the current estimate `d̂`
//! the interval has to clear the distance `δ = ||d̂| − L|` to the nearer side of the
//! threshold, so the trials per arm are the two-sample size (`crate::power::sample_size`,
//! power 0.8) that resolves `δ` at the observed pooled spread, and at least one more than
//! now. When `d̂` sits on the threshold, `δ` is tiny and the count explodes: above
//! [`PRACTICAL_TRIALS`] the advice says so in words instead of printing a number nobody will
//! run. Advice is never attached to a decided cell (post-hoc power of a detected effect means
//! nothing) and is never a flag.
//! Reference: Cohen (1988) ch. 2; Chromium Pinpoint's "unknown: collect more samples".

use serde::{Deserialize, Serialize};

use crate::verdict::ArmComparison;

/// The count itself, from the two-sample size formula; in [`crate::power`] so that the
/// verdicts (which carry it) and this advice both sit above it.
pub use crate::power::trials_to_settle;

/// More trials per arm than this is not a practical answer: the advice says the difference
/// sits at the threshold instead.
pub const PRACTICAL_TRIALS: u64 = 100;

/// What to tell the user about one undecided cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Settle {
    /// About this many trials per arm would likely settle it.
    Trials {
        /// Trials per arm (total, not additional).
        per_arm: u64,
    },
    /// No practical number would: the estimate sits at the threshold.
    AtThreshold {
        /// The count the formula gives, when it gives one (above [`PRACTICAL_TRIALS`]).
        needed: Option<u64>,
    },
}

/// The advice for a comparison: `None` for a decided verdict.
pub fn settle(c: &ArmComparison) -> Option<Settle> {
    if c.verdict.is_decided() {
        return None;
    }
    Some(match c.trials_to_settle {
        Some(per_arm) if per_arm <= PRACTICAL_TRIALS => Settle::Trials { per_arm },
        needed => Settle::AtThreshold { needed },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::power::{DEFAULT_POWER, sample_size};
    use crate::verdict::{Direction, Verdict, compare_arms};

    #[test]
    fn the_distance_is_to_the_nearer_side_of_the_threshold() {
        let m = 0.05f64.ln_1p();
        // The same distance above and below the threshold asks for the same count.
        let above = trials_to_settle(m + 0.02, 0.05, m, 0.05, (5, 5));
        let below = trials_to_settle(m - 0.02, 0.05, m, 0.05, (5, 5));
        assert_eq!(above, below);
        assert_eq!(above, sample_size(0.05, 0.02, 0.05, DEFAULT_POWER).ok());
        // On the threshold: no number.
        assert_eq!(trials_to_settle(m, 0.05, m, 0.05, (5, 5)), None);
        // Never fewer than one more than now.
        assert_eq!(trials_to_settle(1.0, 0.001, m, 0.05, (7, 5)), Some(8));
    }

    #[test]
    fn an_estimate_at_the_threshold_is_advice_in_words() {
        // +5.0% against θ = 5%, spread ~3%: the count explodes.
        let base = [100.0, 103.0, 97.0, 101.0, 99.0];
        let cand: Vec<f64> = base.iter().map(|v| v * 1.05).collect();
        let c = compare_arms(&base, &cand, Direction::HigherIsBetter, 0.05, 0.05).expect("valid");
        assert!(!c.verdict.is_decided());
        match settle(&c) {
            Some(Settle::AtThreshold { needed }) => {
                assert!(needed.is_none_or(|n| n > PRACTICAL_TRIALS))
            }
            other => panic!("expected at-threshold advice, got {other:?}"),
        }
    }

    #[test]
    fn decided_cells_get_no_advice() {
        let c = compare_arms(
            &[100.0, 101.0, 99.0, 100.0],
            &[100.2, 100.9, 99.3, 100.1],
            Direction::HigherIsBetter,
            0.05,
            0.05,
        )
        .expect("valid");
        assert_eq!(c.verdict, Verdict::Equivalent);
        assert_eq!(settle(&c), None);
    }
}
