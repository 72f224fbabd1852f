//! Every per-point and per-comparison flag of docs/statistics-method.md fires on a hand-built
//! case where it could change the verdict, and stays quiet on a clean one — and on a case
//! that looks odd but cannot change the answer (a 0.8% "outlier" among four nearly equal
//! trials, a decided comparison with noisy arms).

use crate::common;

use common::*;
use servebench_stats::advice::settle;
use servebench_stats::flags::rules::{load_not_sustained, multiplicity, stale_baseline};
use servebench_stats::flags::{
    Analysis, ArmEvidence, ComparisonContext, FingerprintDifference, Flag, FlagId, FlagLevel,
    MetricSettings, NamedP, PointComparison, RuleSettings, Threatens, TrialCheck, assess_sweep,
};
use servebench_stats::spearman::Correlation;
use servebench_stats::verdict::{Direction, Margin, Verdict};

/// The one flag of `id` in `a`, with the verdict it threatens and what it would be otherwise.
fn threat_of(f: &Flag) -> (Option<Verdict>, Option<Verdict>) {
    match &f.threatens {
        Threatens::Cells(cells) => {
            assert_eq!(cells.len(), 1, "{f:#?}");
            (cells[0].verdict, cells[0].otherwise)
        }
        Threatens::Comparison => panic!("expected a cell threat: {f:#?}"),
    }
}

#[test]
fn not_comparable_lists_the_fields() {
    let ctx = ComparisonContext {
        fingerprint_differences: vec![FingerprintDifference {
            field: "workload.seed".into(),
            baseline: "1".into(),
            candidate: "2".into(),
        }],
        ..ComparisonContext::interleaved_run()
    };
    let pts = vec![point(
        "c=1",
        1.0,
        arm(100.0, &NOISE_A),
        arm(100.0, &NOISE_B),
    )];
    let f = find(&assess(&pts, &ctx), FlagId::NotComparable).clone();
    assert_eq!(f.level, FlagLevel::ReBaseline);
    assert!(
        f.evidence
            .contains("workload.seed (baseline `1`, candidate `2`)"),
        "{}",
        f.evidence
    );
    assert!(stale_baseline(&ComparisonContext::interleaved_run(), 5).is_none());
}

#[test]
fn too_few_trials_below_three_only() {
    let two = point(
        "c=1",
        1.0,
        arm(100.0, &NOISE_A[..2]),
        arm(100.0, &NOISE_B[..2]),
    );
    assert!(two.comparison.is_none());
    assert!(
        two.comparison_error
            .as_deref()
            .unwrap_or("")
            .contains("at least 3")
    );
    let a = assess(&[two], &ComparisonContext::interleaved_run());
    let f = find(&a, FlagId::TooFewTrials);
    assert_eq!(f.level, FlagLevel::ReBaseline);
    assert!(
        f.evidence.contains("2 baseline and 2 candidate"),
        "{}",
        f.evidence
    );
    // Four trials have an interval: no flag (the interval's width is the verdict's business).
    let four = point(
        "c=1",
        1.0,
        arm(100.0, &NOISE_A[..4]),
        arm(100.0, &NOISE_B[..4]),
    );
    let a = assess(&[four], &ComparisonContext::interleaved_run());
    assert!(a.flags.is_empty(), "{:#?}", a.flags);
}

#[test]
fn a_decided_cell_with_noisy_arms_has_no_flag_and_no_advice() {
    // CV ~8% in both arms, but +60%: improved. Power advice would be meaningless here, and
    // it is never a flag.
    let noisy = [1.08, 0.93, 1.02, 0.9, 1.09];
    let p = point("c=64", 64.0, arm(100.0, &noisy), arm(160.0, &noisy));
    let c = p.comparison.clone().expect("5 trials");
    assert_eq!(c.verdict, Verdict::Improved);
    assert_eq!(settle(&c), None);
    let a = assess(&[p], &ComparisonContext::interleaved_run());
    assert!(
        a.flags.iter().all(|f| f.level == FlagLevel::Look),
        "{:#?}",
        a.flags
    );
    // The same arms +3%: undecided, so advice, and still no flag.
    let p = point("c=64", 64.0, arm(100.0, &noisy), arm(103.0, &noisy));
    let c = p.comparison.clone().expect("5 trials");
    assert!(!c.verdict.is_decided());
    assert!(settle(&c).is_some());
    let a = assess(&[p], &ComparisonContext::interleaved_run());
    assert!(a.flags.is_empty(), "{:#?}", a.flags);
}

#[test]
fn implausible_against_earlier_runs() {
    let mut cand = arm(110.0, &NOISE_B);
    cand.history = vec![100.0, 101.0, 99.0, 100.5, 99.5];
    let p = point("c=1", 1.0, arm(100.0, &NOISE_A), cand);
    let a = assess(&[p], &ComparisonContext::interleaved_run());
    let f = find(&a, FlagId::Implausible);
    assert_eq!(f.level, FlagLevel::Look);
    assert!(
        f.evidence.contains("outside the 99% prediction interval"),
        "{}",
        f.evidence
    );
    assert!(f.evidence.contains("5 earlier runs"));
    // The same candidate within its history raises nothing.
    let mut ok = arm(100.2, &NOISE_B);
    ok.history = vec![100.0, 101.0, 99.0, 100.5, 99.5];
    let a = assess(
        &[point("c=1", 1.0, arm(100.0, &NOISE_A), ok)],
        &ComparisonContext::interleaved_run(),
    );
    assert!(
        !a.flags.iter().any(|f| f.id == FlagId::Implausible),
        "{:#?}",
        a.flags
    );
}

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

#[test]
fn a_one_wave_point_is_load_not_sustained() {
    let checks = |held: f64| -> Vec<TrialCheck> {
        (0..5)
            .map(|i| TrialCheck {
                trial: i,
                value_index: Some(i),
                requests: 256,
                max_concurrency: Some(256),
                limit_held_fraction: Some(held),
                ..TrialCheck::default()
            })
            .collect()
    };
    let rules = RuleSettings::default();
    // 256 requests at c=256: everything is sent at once, the limit is never held while
    // requests wait.
    let f = load_not_sustained("c=256", &checks(0.0), &checks(0.01), &rules).expect("fires");
    assert_eq!(
        (f.id, f.level),
        (FlagId::LoadNotSustained, FlagLevel::ReBaseline)
    );
    assert!(
        f.evidence
            .contains("c=256: the client held the limit 256 in flight for a median 0.5%"),
        "{}",
        f.evidence
    );
    assert!(f.action.contains("more requests"), "{}", f.action);
    // Four waves hold it for ~75% of each trial: sustained.
    assert_eq!(
        load_not_sustained("c=256", &checks(0.75), &checks(0.72), &rules),
        None
    );
    // No evidence (open loop, imported results): not checked.
    assert_eq!(
        load_not_sustained("c=256", &[TrialCheck::default()], &[], &rules),
        None
    );
}

#[test]
fn multiplicity_says_how_many_false_alarms() {
    let tests: Vec<NamedP> = [0.01, 0.04, 0.03, 0.2, 0.5, 0.6, 0.7, 0.8, 0.9, 0.45]
        .iter()
        .enumerate()
        .map(|(i, &p)| NamedP {
            metric: format!("m{i}"),
            point: "c=1".into(),
            verdict: Verdict::Inconclusive,
            p,
        })
        .collect();
    let f = multiplicity(&tests, 0.05).expect("valid").expect("fires");
    assert_eq!((f.id, f.level), (FlagId::Multiplicity, FlagLevel::Look));
    assert!(
        f.evidence
            .contains("10 tests at α = 0.05: 0.50 false alarm(s) expected"),
        "{}",
        f.evidence
    );
    assert!(
        f.evidence
            .contains("3 significant before Holm's correction, 0 after")
    );
    assert!(
        f.evidence.contains("m0 c=1 (p = 0.010 → 0.100)"),
        "{}",
        f.evidence
    );
    let strong: Vec<NamedP> = [1e-6, 0.3]
        .iter()
        .map(|&p| NamedP {
            metric: "x".into(),
            point: "c=1".into(),
            verdict: Verdict::Inconclusive,
            p,
        })
        .collect();
    assert_eq!(multiplicity(&strong, 0.05).expect("valid"), None);
}

#[test]
fn arithmetic_metric_with_zeros_goes_through_the_rules() {
    let error_rate = MetricSettings {
        name: "error_rate".into(),
        direction: Direction::LowerIsBetter,
        analysis: Analysis::Arithmetic {
            margin: Margin::Absolute(0.01),
        },
    };
    let p = PointComparison::new(
        "c=1",
        1.0,
        ArmEvidence::from_values(vec![0.0; 5]),
        ArmEvidence::from_values(vec![0.0; 5]),
        &error_rate,
        0.05,
    );
    assert!(p.comparison.is_some(), "{:?}", p.comparison_error);
    let a = assess_sweep(
        &error_rate,
        &[p],
        &ComparisonContext::interleaved_run(),
        &RuleSettings::default(),
    );
    assert!(a.flags.is_empty(), "{:#?}", a.flags);
}

#[test]
fn flags_serialize_with_kebab_case_ids_and_levels() {
    let ctx = ComparisonContext {
        same_run: false,
        ..ComparisonContext::interleaved_run()
    };
    let f = stale_baseline(&ctx, 7).expect("fires");
    let json = serde_json::to_value(&f).expect("serializes");
    assert_eq!(json["id"], "stale-baseline");
    assert_eq!(json["level"], "re-baseline");
    assert!(
        json["action"]
            .as_str()
            .unwrap_or("")
            .contains("with 7 trials per arm")
    );
    let back: Flag = serde_json::from_value(json).expect("deserializes");
    assert_eq!(back, f);
}
