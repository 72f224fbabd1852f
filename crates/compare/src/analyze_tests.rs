//! Tests of the per-metric analysis on synthetic trial values (deterministic: no outliers,
//! no trends), including the one path end-to-end tests cannot pin down: a *sound* crossover.

use super::*;
use crate::evidence::FailedTrial;

fn pair(c: u32) -> PointPair {
    PointPair {
        label: format!("c={c}"),
        point_label: format!("c={c} rate=inf in=16 out=8"),
        axis: "c".into(),
        axis_value: c.to_string(),
        level: f64::from(c),
        group: String::new(),
        max_concurrency: Some(c),
        output_tokens: Some(8),
        base_point: 0,
        cand_point: 0,
    }
}

/// Five values around `center` without trend or outlier (robust z ≤ 1.35).
fn arm(center: f64) -> ArmPoint {
    ArmPoint {
        evidence: ArmEvidence::from_values(
            [2.0, 0.0, 4.0, 1.0, 3.0]
                .iter()
                .map(|d| center - 2.0 + d)
                .collect(),
        ),
        failed: Vec::new(),
    }
}

fn throughput() -> MetricSpec {
    MetricSpec {
        name: "output_throughput".into(),
        unit: "tok/s".into(),
        direction: Direction::HigherIsBetter,
        can_be_zero: false,
        threshold: 0.05,
    }
}

fn crossing() -> Vec<PointInput> {
    [(1, 122.0), (4, 112.0), (32, 92.0)]
        .into_iter()
        .map(|(c, cand)| PointInput {
            pair: pair(c),
            base: arm(102.0),
            cand: arm(cand),
            look: None,
        })
        .collect()
}

#[test]
fn a_clean_interleaved_sign_change_is_a_crossover_in_words() {
    let (m, p) = analyze_metric(
        &throughput(),
        &crossing(),
        &ComparisonContext::interleaved_run(),
        &RuleSettings::default(),
        None,
    );
    assert_eq!(p.len(), 3);
    let verdicts: Vec<VerdictKind> = m.points.iter().map(|p| p.verdict).collect();
    assert_eq!(
        verdicts,
        [
            VerdictKind::Improved,
            VerdictKind::Improved,
            VerdictKind::Regressed
        ]
    );
    assert!(
        m.flags.iter().all(|f| f.level == FlagLevel::Look),
        "{:#?}",
        m.flags
    );
    assert_eq!(m.crossovers.len(), 1);
    let c = &m.crossovers[0];
    assert!(c.sound, "{c:?}");
    assert_eq!(
        c.description,
        "the candidate is faster at c ≤ 4 and slower at c=32 (output_throughput, higher \
         is better)"
    );
    assert_eq!(c.phrase, "faster at c ≤ 4 and slower at c=32");
    assert!(m.advice.is_empty(), "every cell is decided: {:?}", m.advice);
}

#[test]
fn the_same_pattern_across_runs_is_not_a_crossover() {
    let ctx = ComparisonContext {
        same_run: false,
        interleaved: false,
        fingerprint_differences: Vec::new(),
        baseline_run: Some("r1".into()),
        candidate_run: Some("r2".into()),
    };
    let (m, _) = analyze_metric(
        &throughput(),
        &crossing(),
        &ctx,
        &RuleSettings::default(),
        None,
    );
    let c = &m.crossovers[0];
    assert!(!c.sound);
    assert!(
        c.why_not
            .as_deref()
            .is_some_and(|w| w.contains("different runs"))
    );
    let ids: Vec<FlagId> = m.flags.iter().map(|f| f.id).collect();
    assert!(ids.contains(&FlagId::StaleBaseline), "{ids:?}");
    assert!(ids.contains(&FlagId::SweepInconsistent), "{ids:?}");
}

#[test]
fn a_failed_trial_is_flagged_and_spoils_the_crossover() {
    let mut inputs = crossing();
    inputs[2].cand.failed.push(FailedTrial {
        position: 5,
        trial: 6,
        reason: "server exited".into(),
    });
    let (m, _) = analyze_metric(
        &throughput(),
        &inputs,
        &ComparisonContext::interleaved_run(),
        &RuleSettings::default(),
        None,
    );
    assert!(!m.crossovers[0].sound);
    let f = m
        .flags
        .iter()
        .find(|f| f.id == FlagId::InvalidTrial)
        .expect("an invalid-trial flag");
    assert!(f.evidence.contains("server exited"), "{}", f.evidence);
    assert_eq!(m.points[2].failed_trials_candidate, 1);
    assert!(m.points[2].flags.contains(&FlagId::InvalidTrial));
}

#[test]
fn zero_error_rates_are_equivalent() {
    let spec = MetricSpec {
        name: "error_rate".into(),
        unit: "fraction".into(),
        direction: Direction::LowerIsBetter,
        can_be_zero: true,
        threshold: 0.02,
    };
    let zero = ArmPoint {
        evidence: ArmEvidence::from_values(vec![0.0; 5]),
        failed: Vec::new(),
    };
    let inputs = vec![PointInput {
        pair: pair(1),
        base: zero.clone(),
        cand: zero,
        look: None,
    }];
    let (m, _) = analyze_metric(
        &spec,
        &inputs,
        &ComparisonContext::interleaved_run(),
        &RuleSettings::default(),
        None,
    );
    assert_eq!(m.scale, Scale::Arithmetic);
    assert_eq!(m.points[0].verdict, VerdictKind::Equivalent);
    assert_eq!(m.points[0].margin, Some(0.02));
}
