//! Every per-point and per-comparison flag of docs/statistics-method.md fires on a hand-built
//! case where it could change the verdict, and stays quiet on a clean one — and on a case
//! that looks odd but cannot change the answer (a decided comparison with noisy arms). The
//! flags about single trials (drift, outliers, invalid trials) are in `flags_trials.rs`.

use crate::common;

use common::*;
use servebench_stats::advice::settle;
use servebench_stats::flags::rules::{
    load_not_sustained, multiplicity, multiplicity_applied, stale_baseline,
};
use servebench_stats::flags::{
    Analysis, ArmEvidence, ComparisonContext, FingerprintDifference, Flag, FlagId, FlagLevel,
    MetricSettings, NamedP, PointComparison, RuleSettings, TrialCheck, assess_sweep,
};
use servebench_stats::verdict::{Direction, Margin, Verdict};

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
            .contains("c=256: the client held the limit 256 in flight for a mean 0.5% [0%, 10.5%]"),
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

/// The issue-29 case: two runs of one spec held the limit for 0.502 and 0.498 of their
/// trials (two waves: 64 requests at c=32) and got opposite answers from a median against
/// one half. With the interval and its grey zone both are the same look; a clear one-wave
/// point stays re-baseline and a clear four-wave point stays quiet.
#[test]
fn a_point_at_the_edge_gets_one_answer_from_either_run() {
    let checks = |held: &[f64]| -> Vec<TrialCheck> {
        held.iter()
            .enumerate()
            .map(|(i, &h)| TrialCheck {
                trial: i,
                value_index: Some(i),
                requests: 64,
                max_concurrency: Some(32),
                limit_held_fraction: Some(h),
                ..TrialCheck::default()
            })
            .collect()
    };
    let rules = RuleSettings::default();
    for held in [0.502, 0.498] {
        let arm = checks(&[held, held + 0.001, held - 0.001]);
        let f = load_not_sustained("c=32", &arm, &arm, &rules).expect("at the edge");
        assert_eq!(
            (f.id, f.level),
            (FlagId::LoadNotSustained, FlagLevel::Look),
            "{held}: {}",
            f.evidence
        );
        assert!(f.evidence.contains("2.0 wave(s)"), "{}", f.evidence);
    }
    let one_wave = checks(&[0.02, 0.05, 0.01]);
    assert_eq!(
        load_not_sustained("c=32", &one_wave, &one_wave, &rules).map(|f| f.level),
        Some(FlagLevel::ReBaseline)
    );
    let four_waves = checks(&[0.74, 0.76, 0.75]);
    assert_eq!(
        load_not_sustained("c=32", &four_waves, &four_waves, &rules),
        None
    );
    // Widely spread trials whose mean is above one half still reach it: look.
    let spread = checks(&[0.2, 0.9, 0.6]);
    assert_eq!(
        load_not_sustained("c=32", &spread, &spread, &rules).map(|f| f.level),
        Some(FlagLevel::Look)
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
            .contains("10 tests, each read at its own α = 0.05 (compare.multiplicity: none): 0.50 false alarm(s) expected"),
        "{}",
        f.evidence
    );
    assert!(
        f.evidence
            .contains("3 significant at its own α, 0 would be under Holm's correction")
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

/// With the correction applied the flag names the verdicts it changed, as the table shows
/// them (`verdict`) and as they would be at their own α (`otherwise`): the issue-29 case,
/// output_throughput at c=32 regressed at p = 0.012 among 16 tests, 11 of them far
/// stronger: Holm reads it at α/5, and 5 × 0.012 = 0.06.
#[test]
fn the_applied_correction_explains_the_table() {
    let named = |metric: &str, point: &str, verdict, p| NamedP {
        metric: metric.into(),
        point: point.into(),
        verdict,
        p,
    };
    let mut tests: Vec<NamedP> = (0..11)
        .map(|i| named(&format!("m{i}"), "c=1", Verdict::Improved, 1e-6))
        .collect();
    tests.push(named(
        "output_throughput",
        "c=32",
        Verdict::Regressed,
        0.012,
    ));
    tests.extend((0..4).map(|i| named(&format!("q{i}"), "c=8", Verdict::Inconclusive, 0.4)));
    let same: Vec<Verdict> = tests.iter().map(|t| t.verdict).collect();
    assert_eq!(
        multiplicity_applied(&tests, &same, 0.05).expect("valid"),
        None,
        "nothing changed, nothing to say"
    );
    let mut corrected = same.clone();
    corrected[11] = Verdict::Inconclusive;
    let f = multiplicity_applied(&tests, &corrected, 0.05)
        .expect("valid")
        .expect("fires");
    assert_eq!((f.id, f.level), (FlagId::Multiplicity, FlagLevel::Look));
    assert!(
        f.evidence.contains(
            "output_throughput c=32 (p = 0.012 → 0.060: inconclusive, regressed at its own α)"
        ),
        "{}",
        f.evidence
    );
    assert!(
        f.evidence.contains("12 significant at its own α, 11 after"),
        "{}",
        f.evidence
    );
    let servebench_stats::flags::Threatens::Cells(cells) = &f.threatens else {
        panic!("the flag names cells")
    };
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].verdict, Some(Verdict::Inconclusive));
    assert_eq!(cells[0].otherwise, Some(Verdict::Regressed));
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
