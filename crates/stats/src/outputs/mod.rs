//! Output equivalence: does a variant still compute what the baseline computes, judged
//! against the engine's own repeatability (docs/equivalence.md)?
//!
//! The unit is a prompt. For each prompt the caller gives the outputs of every server start
//! of each arm as class labels (equal labels, identical outputs). [`divergence`] measures
//! the share of differing start pairs within the baseline (its own divergence) and between
//! the baseline and the candidate, tests whether the candidate diverges more
//! ([`permutation`]), puts an interval on the difference of the two shares
//! ([`interval::paired_difference`]), and reads a verdict ([`OutputVerdict`]):
//!
//! * `changed`: the permutation p ≤ α — the candidate's outputs differ from the baseline's
//!   beyond the baseline's own variation;
//! * `unchanged`: not changed, and the interval's upper end ≤ the margin — a change of
//!   more than `margin` of the prompts beyond the baseline's own is ruled out;
//! * `inconclusive`: neither; [`prompts_to_settle`] says how many prompts would likely
//!   settle it at the shares measured.
//!
//! Task accuracy against reference answers is [`accuracy::paired_accuracy`] (McNemar's
//! exact test and Newcombe's interval on the difference of accuracies).

pub mod accuracy;
pub mod interval;
pub mod permutation;

use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_probability};
use crate::estimate::Estimate;
pub use permutation::{PermutationMethod, PromptStarts, divergence_permutation};

/// More prompts than this is not a practical answer: the advice says the difference sits at
/// the margin instead.
pub const PRACTICAL_PROMPTS: u64 = 5000;

/// The verdict on a variant's outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputVerdict {
    /// No divergence beyond the baseline's own, and a larger one than the margin is ruled
    /// out.
    Unchanged,
    /// Divergence beyond the baseline's own (p ≤ α).
    Changed,
    /// Neither shown.
    Inconclusive,
}

impl OutputVerdict {
    /// The word, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputVerdict::Unchanged => "unchanged",
            OutputVerdict::Changed => "changed",
            OutputVerdict::Inconclusive => "inconclusive",
        }
    }
}

/// The divergence of a candidate's outputs from a baseline's, against the baseline's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Divergence {
    /// Prompts compared.
    pub prompts: usize,
    /// Share of baseline start pairs whose outputs differ (mean over prompts).
    pub own: f64,
    /// Share of baseline–candidate start pairs whose outputs differ.
    pub cross: f64,
    /// `cross − own` with Newcombe's interval at `1 − α`.
    pub difference: Estimate,
    /// One-sided permutation p (the candidate diverges more).
    pub p: f64,
    /// How `p` was computed.
    pub method: PermutationMethod,
    /// The verdict at `alpha` and `margin`.
    pub verdict: OutputVerdict,
    /// For an inconclusive verdict: prompts that would likely settle it (`None` above
    /// [`PRACTICAL_PROMPTS`], or for a decided verdict).
    pub prompts_to_settle: Option<u64>,
}

/// The verdict of a test's p and interval (module docs).
pub fn output_verdict(p: f64, upper: f64, alpha: f64, margin: f64) -> OutputVerdict {
    if p <= alpha {
        OutputVerdict::Changed
    } else if upper <= margin {
        OutputVerdict::Unchanged
    } else {
        OutputVerdict::Inconclusive
    }
}

/// Prompts (in all) at which the interval would likely settle the verdict, at the shares
/// and correlation measured: its lower end above 0 (a change), or its upper end at most
/// `margin` (no change beyond it); `None` when no count up to [`PRACTICAL_PROMPTS`] does.
pub fn prompts_to_settle(
    cross: f64,
    own: f64,
    phi: f64,
    n: usize,
    alpha: f64,
    margin: f64,
) -> Option<u64> {
    let level = 1.0 - alpha;
    let settled = |m: u64| {
        interval::paired_difference_from(cross, own, phi, m as usize, level)
            .is_ok_and(|ci| ci.lower > 0.0 || ci.upper <= margin)
    };
    let mut hi = (n as u64 + 1).max(2);
    while !settled(hi) {
        if hi >= PRACTICAL_PROMPTS {
            return None;
        }
        hi = (hi * 2).min(PRACTICAL_PROMPTS);
    }
    let mut lo = (n as u64).max(1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if settled(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The whole judgement of the module docs at significance `alpha` and margin `margin` (a
/// share of prompts in (0, 1)).
pub fn divergence(
    prompts: &[PromptStarts],
    alpha: f64,
    margin: f64,
) -> Result<Divergence, StatsError> {
    check_probability("alpha", alpha)?;
    check_probability("margin", margin)?;
    let t = divergence_permutation(prompts)?;
    let difference = interval::paired_difference(&t.cross, &t.own, 1.0 - alpha)?;
    let n = t.prompts as f64;
    let cross = t.cross.iter().sum::<f64>() / n;
    let own = t.own.iter().sum::<f64>() / n;
    let verdict = output_verdict(t.p, difference.ci.upper, alpha, margin);
    let prompts_to_settle = (verdict == OutputVerdict::Inconclusive)
        .then(|| {
            let phi = interval::correlation(&t.cross, &t.own);
            prompts_to_settle(cross, own, phi, t.prompts, alpha, margin)
        })
        .flatten();
    Ok(Divergence {
        prompts: t.prompts,
        own,
        cross,
        difference,
        p: t.p,
        method: t.method,
        verdict,
        prompts_to_settle,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(n: usize) -> Vec<PromptStarts> {
        vec![
            PromptStarts {
                baseline: vec![1, 1],
                candidate: vec![1, 1],
            };
            n
        ]
    }

    #[test]
    fn an_aa_of_sixteen_identical_prompts_is_unchanged() {
        let d = divergence(&same(16), 0.05, 0.25).expect("ok");
        assert_eq!(d.verdict, OutputVerdict::Unchanged);
        assert_eq!((d.own, d.cross, d.p), (0.0, 0.0, 1.0));
        assert!(d.difference.ci.upper < 0.2);
    }

    #[test]
    fn eight_identical_prompts_are_not_enough_and_the_advice_says_how_many() {
        let d = divergence(&same(8), 0.05, 0.25).expect("ok");
        assert_eq!(d.verdict, OutputVerdict::Inconclusive);
        // Wilson's upper end of 0/n at 95% is ≤ 0.25 from n = 12 on (3.8415·0.75/0.25).
        assert_eq!(d.prompts_to_settle, Some(12));
    }

    #[test]
    fn five_changed_prompts_of_sixteen_are_a_change() {
        let mut ps = same(11);
        ps.extend(vec![
            PromptStarts {
                baseline: vec![1, 1],
                candidate: vec![2, 2],
            };
            5
        ]);
        let d = divergence(&ps, 0.05, 0.25).expect("ok");
        assert_eq!(d.verdict, OutputVerdict::Changed, "{d:?}");
        assert!((d.cross - 5.0 / 16.0).abs() < 1e-12);
        assert!(d.difference.ci.lower > 0.0, "{d:?}");
    }

    #[test]
    fn settle_is_none_at_the_margin() {
        // A difference sitting on the margin never settles.
        assert_eq!(prompts_to_settle(0.25, 0.0, 0.0, 16, 0.05, 0.25), Some(17));
        assert!(prompts_to_settle(0.25, 0.25, 0.0, 16, 0.05, 0.0001).is_none());
    }
}
