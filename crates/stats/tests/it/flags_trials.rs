//! The flags about single trials (`src/flags/trials.rs`, docs/statistics-method.md): drift
//! across and within trials, a cold first start, an outlier trial, an invalid trial — each
//! fires where it could change the verdict, and is a look (or nothing) where it cannot: two
//! trials equally far apart, a 1% outlier among four equal trials.

use crate::common;

use common::*;
use servebench_stats::flags::{
    ArmEvidence, ComparisonContext, Flag, FlagId, FlagLevel, TrialCheck,
};
use servebench_stats::spearman::Correlation;
use servebench_stats::verdict::{Direction, Verdict};

#[test]
fn drift_across_trials_that_changes_the_verdict() {
    // The baseline's throughput rises 3.4% over eight trials in perfect order (exact
    // p = 2/8!) against a flat candidate: likely regressed as measured, equivalent with the
    // trend removed (each drifting arm brought back to its first trial's state).
    let trending =
        ArmEvidence::from_values(vec![100.0, 100.5, 101.2, 101.4, 102.0, 102.3, 102.9, 103.4]);
    let a = assess(
        &[point("c=1", 1.0, trending, arm(100.0, &NOISE_B))],
        &ComparisonContext::interleaved_run(),
    );
    let f = find(&a, FlagId::Drift);
    assert_eq!(f.level, FlagLevel::ReBaseline);
    assert!(
        f.evidence.contains("the baseline trend with run order"),
        "{}",
        f.evidence
    );
    assert!(f.evidence.contains("with the trend removed: equivalent"));
    assert_eq!(
        threat_of(f),
        (Some(Verdict::LikelyRegressed), Some(Verdict::Equivalent))
    );

    // The same trend in both arms (interleaving did its job): the verdict does not depend on
    // it, no flag.
    let both = vec![100.0, 100.5, 101.2, 101.4, 102.0, 102.3, 102.9, 103.4];
    let cand: Vec<f64> = both.iter().map(|v| v * 1.001).collect();
    let a = assess(
        &[point(
            "c=1",
            1.0,
            ArmEvidence::from_values(both),
            ArmEvidence::from_values(cand),
        )],
        &ComparisonContext::interleaved_run(),
    );
    assert!(
        !a.flags.iter().any(|f| f.id == FlagId::Drift),
        "{:#?}",
        a.flags
    );
}

#[test]
fn a_trend_within_a_trial_is_drift() {
    let mut within = arm(100.0, &NOISE_A);
    within.trials = vec![TrialCheck {
        trial: 2,
        requests: 2000,
        within_trial_trend: Some(Correlation {
            rho: 0.45,
            p: 1e-12,
            n: 2000,
        }),
        ..TrialCheck::default()
    }];
    let a = assess(
        &[point("c=1", 1.0, within, arm(100.0, &NOISE_B))],
        &ComparisonContext::interleaved_run(),
    );
    assert!(
        find(&a, FlagId::Drift)
            .evidence
            .contains("trial 2 trends with request order")
    );
}

#[test]
fn a_cold_first_start_is_drift_when_it_changes_the_verdict() {
    // 20% slow first trial: inconclusive with it, equivalent without it.
    let cold_start = ArmEvidence::from_values(vec![80.0, 100.4, 99.7, 100.1, 99.5]);
    let a = assess(
        &[point("c=1", 1.0, arm(100.0, &NOISE_A), cold_start)],
        &ComparisonContext::interleaved_run(),
    );
    let f = find(&a, FlagId::Drift);
    assert!(
        f.evidence.contains("candidate: the first trial (80.0000)"),
        "{}",
        f.evidence
    );
    assert!(f.evidence.contains("cold first start"));
    assert_eq!(threat_of(f).1, Some(Verdict::Equivalent));
    assert!(!a.flags.iter().any(|f| f.id == FlagId::OutlierTrial));

    // A first trial merely the slowest of five by a little (3.5%, robust z 2.6) is chance,
    // even where leaving it out would change the verdict.
    let slowest = ArmEvidence::from_values(vec![96.0, 100.4, 98.7, 101.1, 99.5]);
    let p = point("c=1", 1.0, arm(100.0, &NOISE_A), slowest.clone());
    let without = p.verdict_with(
        Direction::HigherIsBetter,
        &p.baseline.trial_values,
        &slowest.trial_values[1..],
    );
    assert_ne!(p.verdict(), without, "the verdict depends on it");
    let a = assess(&[p], &ComparisonContext::interleaved_run());
    assert!(
        !a.flags.iter().any(|f| f.id == FlagId::Drift),
        "{:#?}",
        a.flags
    );

    // A first trial *faster* than the rest is not a warm-up problem.
    let hot = ArmEvidence::from_values(vec![120.0, 100.4, 99.7, 100.1, 99.5]);
    let a = assess(
        &[point("c=1", 1.0, arm(100.0, &NOISE_A), hot)],
        &ComparisonContext::interleaved_run(),
    );
    assert!(!a.flags.iter().any(|f| f.id == FlagId::Drift));

    // A slow first trial on a +50% improvement: improved either way, no flag.
    let slow_first = ArmEvidence::from_values(vec![120.0, 150.4, 149.7, 150.1, 149.5]);
    let a = assess(
        &[point("c=1", 1.0, arm(100.0, &NOISE_A), slow_first)],
        &ComparisonContext::interleaved_run(),
    );
    assert!(
        !a.flags.iter().any(|f| f.id == FlagId::Drift),
        "{:#?}",
        a.flags
    );
}

#[test]
fn outlier_trial_that_flips_the_verdict_is_flagged_not_dropped() {
    let odd = ArmEvidence::from_values(vec![100.0, 100.5, 99.5, 130.0, 100.2]);
    let p = point("c=10", 10.0, odd, arm(100.0, &NOISE_B));
    assert_eq!(
        p.comparison.as_ref().map(|c| c.n_baseline),
        Some(5),
        "kept in the analysis"
    );
    let a = assess(&[p], &ComparisonContext::interleaved_run());
    let f = find(&a, FlagId::OutlierTrial);
    // Inconclusive as measured: nothing is claimed, the trial only costs a decision.
    assert_eq!(f.level, FlagLevel::Look);
    assert!(
        f.evidence
            .contains("baseline trial 3: 130.0000 is +29.7% against the arm's median 100.2000"),
        "{}",
        f.evidence
    );
    assert!(
        f.evidence
            .contains("with that trial at the median of the others: equivalent"),
        "{}",
        f.evidence
    );
    assert!(f.evidence.contains("Dixon's Q = "), "{}", f.evidence);
    assert_eq!(threat_of(f).1, Some(Verdict::Equivalent));
}

#[test]
fn an_outlier_that_only_keeps_a_likely_cell_from_being_decided_is_a_look() {
    // Ten trials a side: a +3% candidate, and one baseline trial 10% low. With it the cell is
    // likely improved; with that trial at the median of the others, improved in the same
    // direction: the trial costs a decision, no claim rests on it.
    let base = vec![
        100.0, 100.3, 99.8, 100.1, 90.0, 99.9, 100.2, 99.7, 100.0, 100.1,
    ];
    let cand = vec![
        103.0, 103.2, 102.9, 103.1, 102.8, 103.0, 103.3, 102.9, 103.1, 103.0,
    ];
    let p = point(
        "c=1",
        1.0,
        ArmEvidence::from_values(base),
        ArmEvidence::from_values(cand),
    );
    assert_eq!(p.verdict(), Some(Verdict::LikelyImproved));
    let a = assess(&[p], &ComparisonContext::interleaved_run());
    let f = find(&a, FlagId::OutlierTrial);
    assert_eq!(f.level, FlagLevel::Look);
    assert_eq!(
        threat_of(f),
        (Some(Verdict::LikelyImproved), Some(Verdict::Improved))
    );
}

#[test]
fn two_trials_equally_far_are_a_spread_not_an_outlier() {
    // TTFT-like: two of five trials 8–11% above the rest. The robust z of the highest is 11
    // (the MAD of five values is tiny), but Dixon's Q sees no gap between the two.
    let base = ArmEvidence::from_values(vec![7.30, 7.32, 7.35, 7.90, 8.17]);
    let a = assess(
        &[point("c=1", 1.0, base, arm(7.3, &NOISE_B))],
        &ComparisonContext::interleaved_run(),
    );
    assert!(
        !a.flags.iter().any(|f| f.id == FlagId::OutlierTrial),
        "{:#?}",
        a.flags
    );
}

#[test]
fn a_one_percent_outlier_among_four_equal_trials_is_not_an_outlier() {
    // Robust z is huge (the MAD of four nearly equal trials is tiny), but 0.8% is below the
    // practical floor θ/2 = 1%.
    let base = ArmEvidence::from_values(vec![100.0, 100.01, 99.99, 100.8, 100.0]);
    let z = servebench_stats::robust::robust_z(&base.trial_values).expect("valid");
    assert!(z[3] > 50.0, "{z:?}");
    let a = assess(
        &[point("c=4", 4.0, base, arm(100.0, &NOISE_B))],
        &ComparisonContext::interleaved_run(),
    );
    assert!(a.flags.is_empty(), "{:#?}", a.flags);

    // A 30% outlier that cannot change the answer (+60% either way) is not flagged either.
    let odd = ArmEvidence::from_values(vec![160.0, 160.5, 159.5, 208.0, 160.2]);
    let a = assess(
        &[point("c=4", 4.0, arm(100.0, &NOISE_A), odd)],
        &ComparisonContext::interleaved_run(),
    );
    assert!(
        !a.flags.iter().any(|f| f.id == FlagId::OutlierTrial),
        "{:#?}",
        a.flags
    );
}

#[test]
fn invalid_trial_lists_every_broken_rule() {
    let mut base = arm(100.0, &NOISE_A);
    base.trials = vec![
        TrialCheck {
            trial: 0,
            requests: 500,
            ..TrialCheck::default()
        },
        TrialCheck {
            trial: 1,
            value_index: Some(1),
            errors: 3,
            peak_concurrency: Some(2),
            max_concurrency: Some(1),
            achieved_rate: Some(9.5),
            target_rate: Some(10.0),
            output_token_ratio: Some(0.8),
            requests: 20,
            reported_quantile: Some(0.99),
            within_trial_trend: None,
            limit_held_fraction: None,
        },
    ];
    let a = assess(
        &[point("c=1", 1.0, base, arm(100.0, &NOISE_B))],
        &ComparisonContext::interleaved_run(),
    );
    let flags: Vec<&Flag> = a
        .flags
        .iter()
        .filter(|f| f.id == FlagId::InvalidTrial)
        .collect();
    assert_eq!(flags.len(), 1, "trial 0 is valid");
    let e = &flags[0].evidence;
    for needle in [
        "baseline trial 1",
        "3 failed request(s)",
        "peak concurrency 2 above the limit 1",
        "achieved rate 9.500/s is 95% of the target",
        "output tokens are 80% of requested",
        "20 requests cannot support the reported p99 (459 needed)",
    ] {
        assert!(e.contains(needle), "missing {needle:?} in {e}");
    }
    assert_eq!(
        flags[0].level,
        FlagLevel::ReBaseline,
        "a broken limit taints every number"
    );
}

#[test]
fn an_invalid_trial_that_cannot_change_the_verdict_is_a_look() {
    let mut base = arm(100.0, &NOISE_A);
    base.trials = vec![TrialCheck {
        trial: 4,
        value_index: Some(4),
        errors: 2,
        requests: 500,
        ..TrialCheck::default()
    }];
    let a = assess(
        &[point("c=1", 1.0, base, arm(100.0, &NOISE_B))],
        &ComparisonContext::interleaved_run(),
    );
    let f = find(&a, FlagId::InvalidTrial);
    assert_eq!(f.level, FlagLevel::Look, "{f:#?}");
    assert!(
        f.evidence
            .contains("the verdict (equivalent) is the same without"),
        "{}",
        f.evidence
    );
}
