//! Task accuracy of two variants on the same prompts with reference answers: each prompt
//! answered right or wrong by each, compared pair by pair.
//!
//! Method. McNemar's exact test: of the `b` prompts only the baseline got right and the `c`
//! only the candidate got right, under "no difference" each discordant prompt is either
//! way with probability ½, so `p = min(1, 2·P(X ≤ min(b, c)))`, `X ~ Binomial(b + c, ½)`
//! (two-sided; `p = 1` without discordant prompts). The difference of accuracies
//! (candidate − baseline) gets Newcombe's interval for paired proportions (method 10,
//! [`super::interval`]). The verdict: `lower` or `higher` when p ≤ α, `unchanged` when not
//! and the interval lies within ±margin, else `inconclusive`.
//! Reference: McNemar, Psychometrika 12 (1947); Fagerland, Lydersen & Laake, "The McNemar
//! test for binary matched-pairs data: mid-p and asymptotic are better than exact
//! conditional", BMC Med. Res. Methodol. 13:91 (2013) — the exact form is kept here as the
//! conservative one; Newcombe (1998).

use serde::{Deserialize, Serialize};

use super::interval::paired_difference;
use crate::distributions::binomial_cdf;
use crate::error::{StatsError, check_probability};
use crate::estimate::Estimate;

/// The verdict on accuracy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccuracyVerdict {
    /// Significantly lower than the baseline's.
    Lower,
    /// Significantly higher.
    Higher,
    /// Not significant, and the interval lies within ±margin.
    Unchanged,
    /// Neither.
    Inconclusive,
}

impl AccuracyVerdict {
    /// The word, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            AccuracyVerdict::Lower => "lower",
            AccuracyVerdict::Higher => "higher",
            AccuracyVerdict::Unchanged => "unchanged",
            AccuracyVerdict::Inconclusive => "inconclusive",
        }
    }
}

/// Two variants' accuracy on the same prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedAccuracy {
    /// Prompts answered by both.
    pub prompts: usize,
    /// The baseline's share right.
    pub baseline: f64,
    /// The candidate's share right.
    pub candidate: f64,
    /// Prompts only the baseline got right.
    pub baseline_only: u64,
    /// Prompts only the candidate got right.
    pub candidate_only: u64,
    /// Candidate − baseline, with Newcombe's interval at `1 − α`.
    pub difference: Estimate,
    /// McNemar's exact two-sided p.
    pub p: f64,
    /// The verdict at `alpha` and `margin`.
    pub verdict: AccuracyVerdict,
}

/// McNemar's exact two-sided p of `b` and `c` discordant pairs.
pub fn mcnemar_exact(b: u64, c: u64) -> Result<f64, StatsError> {
    if b + c == 0 {
        return Ok(1.0);
    }
    Ok((2.0 * binomial_cdf(b.min(c), b + c, 0.5)?).min(1.0))
}

/// The comparison of the module docs: `pairs` holds, per prompt, whether the baseline and
/// whether the candidate answered it right.
pub fn paired_accuracy(
    pairs: &[(bool, bool)],
    alpha: f64,
    margin: f64,
) -> Result<PairedAccuracy, StatsError> {
    check_probability("alpha", alpha)?;
    check_probability("margin", margin)?;
    if pairs.is_empty() {
        return Err(StatsError::TooFewSamples {
            what: "paired accuracy",
            n: 0,
            required: 1,
        });
    }
    let base: Vec<f64> = pairs.iter().map(|p| f64::from(u8::from(p.0))).collect();
    let cand: Vec<f64> = pairs.iter().map(|p| f64::from(u8::from(p.1))).collect();
    let baseline_only = pairs.iter().filter(|p| p.0 && !p.1).count() as u64;
    let candidate_only = pairs.iter().filter(|p| !p.0 && p.1).count() as u64;
    let p = mcnemar_exact(baseline_only, candidate_only)?;
    let difference = paired_difference(&cand, &base, 1.0 - alpha)?;
    let n = pairs.len() as f64;
    let verdict = if p <= alpha {
        if difference.point < 0.0 {
            AccuracyVerdict::Lower
        } else {
            AccuracyVerdict::Higher
        }
    } else if difference.ci.lower >= -margin && difference.ci.upper <= margin {
        AccuracyVerdict::Unchanged
    } else {
        AccuracyVerdict::Inconclusive
    };
    Ok(PairedAccuracy {
        prompts: pairs.len(),
        baseline: base.iter().sum::<f64>() / n,
        candidate: cand.iter().sum::<f64>() / n,
        baseline_only,
        candidate_only,
        difference,
        p,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_of_known_counts() {
        // b = 0, c = 6: 2·(1/2)^6 = 0.03125.
        assert!((mcnemar_exact(0, 6).expect("ok") - 0.031_25).abs() < 1e-12);
        assert_eq!(mcnemar_exact(0, 0).expect("ok"), 1.0);
        assert_eq!(mcnemar_exact(3, 3).expect("ok"), 1.0);
    }

    #[test]
    fn a_drop_in_accuracy_is_lower() {
        let mut pairs = vec![(true, true); 30];
        pairs.extend(vec![(true, false); 10]);
        pairs.extend(vec![(false, false); 10]);
        let a = paired_accuracy(&pairs, 0.05, 0.1).expect("ok");
        assert_eq!(a.verdict, AccuracyVerdict::Lower);
        assert!((a.baseline - 0.8).abs() < 1e-12 && (a.candidate - 0.6).abs() < 1e-12);
        assert!(a.difference.ci.upper < 0.0, "{a:?}");
        let same = vec![(true, true); 200];
        let a = paired_accuracy(&same, 0.05, 0.05).expect("ok");
        assert_eq!(a.verdict, AccuracyVerdict::Unchanged, "{a:?}");
    }
}
