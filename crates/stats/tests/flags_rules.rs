//! Every per-point and per-comparison flag of STATISTICS.md fires on a hand-built case, and
//! stays quiet on a clean one.

mod common;

use common::*;
use servebench_stats::flags::rules::{multiplicity, stale_baseline};
use servebench_stats::flags::{
    Analysis, ArmEvidence, ComparisonContext, FingerprintDifference, Flag, FlagId, FlagLevel,
    MetricSettings, NamedP, PointComparison, RuleSettings, TrialCheck, assess_sweep,
};
use servebench_stats::spearman::Correlation;
use servebench_stats::verdict::{Direction, Margin};

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
fn too_few_trials_two_levels() {
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

    let four = point(
        "c=1",
        1.0,
        arm(100.0, &NOISE_A[..4]),
        arm(100.0, &NOISE_B[..4]),
    );
    let a = assess(&[four], &ComparisonContext::interleaved_run());
    let f = find(&a, FlagId::TooFewTrials);
    assert_eq!(f.level, FlagLevel::Look);
    assert!(
        f.evidence.contains("can reach here is 0.029"),
        "{}",
        f.evidence
    );
}

#[test]
fn underpowered_names_cv_and_mde() {
    let noisy = [1.08, 0.93, 1.02, 0.9, 1.09];
    let p = point("c=64", 64.0, arm(100.0, &noisy), arm(101.0, &NOISE_B));
    let a = assess(&[p], &ComparisonContext::interleaved_run());
    let f = find(&a, FlagId::Underpowered);
    assert_eq!(f.level, FlagLevel::ReBaseline);
    assert!(f.evidence.contains("baseline CV is"), "{}", f.evidence);
    assert!(
        f.evidence
            .contains("minimum detectable effect at 5 vs 5 trials"),
        "{}",
        f.evidence
    );
    assert!(f.action.contains("trials per arm"), "{}", f.action);
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
fn drift_across_within_and_first_trial() {
    // Eight trials in perfect order: exact p = 2/8! — a trend. (Five cannot reach p < 0.01:
    // they fall in perfect order by chance 2 times in 120.)
    let trending =
        ArmEvidence::from_values(vec![100.0, 100.5, 101.2, 101.4, 102.0, 102.3, 102.9, 103.4]);
    let a = assess(
        &[point("c=1", 1.0, trending, arm(100.0, &NOISE_B))],
        &ComparisonContext::interleaved_run(),
    );
    let f = find(&a, FlagId::Drift);
    assert_eq!(f.level, FlagLevel::ReBaseline);
    assert!(
        f.evidence
            .contains("baseline: the values trend with run order"),
        "{}",
        f.evidence
    );

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

    let cold_start = ArmEvidence::from_values(vec![80.0, 100.4, 99.7, 100.1, 99.5]);
    let a = assess(
        &[point("c=1", 1.0, arm(100.0, &NOISE_A), cold_start)],
        &ComparisonContext::interleaved_run(),
    );
    let f = find(&a, FlagId::Drift);
    assert!(
        f.evidence.contains("candidate: the first trial"),
        "{}",
        f.evidence
    );
    assert!(f.evidence.contains("warm-up too short"));
    assert!(!a.flags.iter().any(|f| f.id == FlagId::OutlierTrial));
}

#[test]
fn outlier_trial_is_flagged_not_dropped() {
    let odd = ArmEvidence::from_values(vec![100.0, 101.0, 99.0, 130.0, 100.5]);
    let p = point("c=10", 10.0, odd, arm(100.0, &NOISE_B));
    assert_eq!(
        p.comparison.as_ref().map(|c| c.n_baseline),
        Some(5),
        "kept in the analysis"
    );
    let a = assess(&[p], &ComparisonContext::interleaved_run());
    let f = find(&a, FlagId::OutlierTrial);
    assert_eq!(f.level, FlagLevel::ReBaseline);
    assert!(
        f.evidence
            .contains("baseline trial 3: 130.0000 has robust z"),
        "{}",
        f.evidence
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
            errors: 3,
            peak_concurrency: Some(2),
            max_concurrency: Some(1),
            achieved_rate: Some(9.5),
            target_rate: Some(10.0),
            output_token_ratio: Some(0.8),
            requests: 20,
            reported_quantile: Some(0.99),
            within_trial_trend: None,
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
}

#[test]
fn multiplicity_says_how_many_false_alarms() {
    let tests: Vec<NamedP> = [0.01, 0.04, 0.03, 0.2, 0.5, 0.6, 0.7, 0.8, 0.9, 0.45]
        .iter()
        .enumerate()
        .map(|(i, &p)| NamedP {
            label: format!("m{i}"),
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
        f.evidence.contains("m0 (p = 0.010 → 0.100)"),
        "{}",
        f.evidence
    );
    let strong: Vec<NamedP> = [1e-6, 0.3]
        .iter()
        .map(|&p| NamedP {
            label: "x".into(),
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
        cv_limit: 10.0,
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
