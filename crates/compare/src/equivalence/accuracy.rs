//! Task accuracy of a comparison (`spec.equivalence.reference`, docs/equivalence.md): each
//! probe completion was scored right or wrong against the reference when it was recorded
//! (`ProbeOutput::correct`); per prompt each arm's starts are pooled into one outcome, and
//! the two arms' outcomes are compared pair by pair (stats' `outputs::paired_accuracy`:
//! McNemar's exact test, Newcombe's paired interval).
//!
//! Pooling: a prompt is right for an arm when a strict majority of that arm's scored starts
//! answered it right (a tie, e.g. one of two, counts wrong). Both arms are pooled alike, so
//! under "the arms are exchangeable" the discordant prompts still fall either way with
//! probability ½ and McNemar's test keeps its level; prompts whose starts disagree are
//! counted (`baseline_unstable`, `candidate_unstable`), as the engine's own repeatability of
//! its answers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use servebench_result::ProbeRecord;
use servebench_stats::Estimate;
use servebench_stats::outputs::accuracy::paired_accuracy;

/// The `accuracy` object of a comparison's `equivalence`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyReport {
    /// Prompts scored in both arms (at least one start each).
    pub prompts: usize,
    /// The baseline's share of prompts right (pooled over its starts).
    pub baseline: f64,
    /// The candidate's.
    pub candidate: f64,
    /// Prompts only the baseline got right.
    pub baseline_only: u64,
    /// Prompts only the candidate got right.
    pub candidate_only: u64,
    /// Candidate − baseline, with Newcombe's paired interval at `1 − α`.
    pub difference: Estimate,
    /// McNemar's exact two-sided p on the discordant prompts.
    pub p_value: f64,
    /// `lower`, `higher`, `unchanged` or `inconclusive`.
    pub verdict: String,
    /// `unchanged` needs the interval within ±this (`equivalence.accuracy_margin`).
    pub margin: f64,
    /// How each arm's starts were pooled per prompt.
    pub pooling: String,
    /// Prompts the baseline answered right at some starts and wrong at others.
    pub baseline_unstable: usize,
    /// The same for the candidate.
    pub candidate_unstable: usize,
}

/// The pooling rule, in words (also in `AccuracyReport::pooling`).
pub const POOLING: &str = "majority of starts (a tie counts wrong)";

/// Per prompt, (starts right, starts scored).
fn tally(recs: &[&ProbeRecord]) -> BTreeMap<usize, (usize, usize)> {
    let mut out: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    for r in recs {
        for o in &r.outputs {
            if let Some(ok) = o.correct {
                let e = out.entry(o.prompt).or_default();
                e.0 += usize::from(ok);
                e.1 += 1;
            }
        }
    }
    out
}

/// The accuracy comparison of the candidate's records `v` against the baseline's `b`;
/// `None` when no prompt was scored in both.
pub(super) fn accuracy(
    b: &[&ProbeRecord],
    v: &[&ProbeRecord],
    alpha: f64,
    margin: f64,
) -> Option<AccuracyReport> {
    let (tb, tv) = (tally(b), tally(v));
    let majority = |(right, n): (usize, usize)| 2 * right > n;
    let unstable =
        |t: &BTreeMap<usize, (usize, usize)>| t.values().filter(|(r, n)| *r > 0 && r < n).count();
    let pairs: Vec<(bool, bool)> = tb
        .iter()
        .filter_map(|(p, &x)| tv.get(p).map(|&y| (majority(x), majority(y))))
        .collect();
    let a = paired_accuracy(&pairs, alpha, margin).ok()?;
    Some(AccuracyReport {
        prompts: a.prompts,
        baseline: a.baseline,
        candidate: a.candidate,
        baseline_only: a.baseline_only,
        candidate_only: a.candidate_only,
        difference: a.difference,
        p_value: a.p,
        verdict: a.verdict.as_str().to_owned(),
        margin,
        pooling: POOLING.to_owned(),
        baseline_unstable: unstable(&tb),
        candidate_unstable: unstable(&tv),
    })
}

/// The accuracy line of compare's text output.
pub fn line(a: &AccuracyReport) -> String {
    format!(
        "accuracy {} ({} reference prompts, {}): baseline {:.1}%, candidate {:.1}%, \
         difference {:+.1} points [{:+.1}, {:+.1}], McNemar p = {:.3} ({} only the baseline \
         got right, {} only the candidate){}",
        a.verdict,
        a.prompts,
        a.pooling,
        100.0 * a.baseline,
        100.0 * a.candidate,
        100.0 * a.difference.point,
        100.0 * a.difference.ci.lower,
        100.0 * a.difference.ci.upper,
        a.p_value,
        a.baseline_only,
        a.candidate_only,
        if a.baseline_unstable + a.candidate_unstable > 0 {
            format!(
                "; answers that changed across starts: baseline {}, candidate {}",
                a.baseline_unstable, a.candidate_unstable
            )
        } else {
            String::new()
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use servebench_result::ProbeOutput;

    fn rec(block: usize, correct: &[Option<bool>]) -> ProbeRecord {
        ProbeRecord {
            block,
            variant: "v".into(),
            repetition: 1,
            concurrency: 1,
            started_at: String::new(),
            compared_by: "text".into(),
            outputs: correct
                .iter()
                .enumerate()
                .map(|(i, c)| ProbeOutput {
                    prompt: i,
                    text: Some("x".into()),
                    token_ids: None,
                    logprobs: None,
                    tokens: None,
                    error: None,
                    correct: *c,
                })
                .collect(),
        }
    }

    #[test]
    fn starts_are_pooled_by_majority_and_a_tie_counts_wrong() {
        let t = Some(true);
        let f = Some(false);
        // Prompt 0: right at 2 of 3 starts; prompt 1: 1 of 2 (a tie); prompt 2: unscored.
        let (b1, b2, b3) = (
            rec(0, &[t, t, None]),
            rec(1, &[t, f, None]),
            rec(2, &[f, None, None]),
        );
        let (c1, c2) = (rec(3, &[t, t, None]), rec(4, &[t, t, None]));
        let a = accuracy(&[&b1, &b2, &b3], &[&c1, &c2], 0.05, 0.05).expect("scored");
        assert_eq!(a.prompts, 2);
        assert_eq!((a.baseline, a.candidate), (0.5, 1.0));
        assert_eq!((a.baseline_only, a.candidate_only), (0, 1));
        assert_eq!(a.baseline_unstable, 2);
        assert_eq!(a.candidate_unstable, 0);
        let none = rec(5, &[None, None, None]);
        assert!(accuracy(&[&none], &[&none], 0.05, 0.05).is_none());
    }
}
