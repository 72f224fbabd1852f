//! The sweep rule and the crossover finding, including the seed story: cutlass vs cutedsl
//! across concurrency, first against a recalled baseline, then re-measured in one
//! interleaved run.

use crate::common;

use common::*;
use servebench_stats::flags::{ComparisonContext, FlagId, FlagLevel, PointComparison, Side};

#[test]
fn seed_against_a_recalled_baseline_is_stale_and_inconsistent_not_a_crossover() {
    let ctx = ComparisonContext {
        same_run: false,
        interleaved: false,
        baseline_run: Some("recalled-2025-06".into()),
        candidate_run: Some("r2".into()),
        ..ComparisonContext::interleaved_run()
    };
    let a = assess(&seed_points(), &ctx);
    assert!(
        a.crossover.is_none(),
        "a stale comparison must not report a crossover"
    );
    let stale = find(&a, FlagId::StaleBaseline);
    assert_eq!(stale.level, FlagLevel::ReBaseline);
    assert!(
        stale
            .evidence
            .contains("(baseline run `recalled-2025-06`, candidate run `r2`)")
    );
    assert!(
        stale.action.contains("interleaved in one session with"),
        "{}",
        stale.action
    );
    let sweep = find(&a, FlagId::SweepInconsistent);
    assert_eq!(
        sweep.level,
        FlagLevel::ReBaseline,
        "stale pattern is a re-baseline flag"
    );
    assert!(sweep.evidence.contains("c=10"), "{}", sweep.evidence);
    assert!(
        sweep
            .evidence
            .contains("sign opposite to both neighbours (c=1 and c=256)")
    );
    assert!(sweep.evidence.contains("Cochran's Q"));
    // +67% at c=10 and −50.3% at c=1024 are implausible on their face (a look flag).
    let imp = find(&a, FlagId::Implausible);
    assert!(imp.evidence.contains("+67.2%"), "{}", imp.evidence);
}

#[test]
fn seed_from_one_interleaved_well_powered_run_is_a_crossover() {
    let points = seed_points();
    for p in &points {
        let c = p.comparison.as_ref().expect("5 trials per arm");
        assert!(c.significant, "{}: every level differs", p.label);
        assert!(c.cv_baseline.expect("cv") < 0.01 && c.cv_candidate.expect("cv") < 0.01);
    }
    let a = assess(&points, &ComparisonContext::interleaved_run());
    assert!(
        a.flags.iter().all(|f| f.level == FlagLevel::Look),
        "no re-baseline flags in the sound run: {:#?}",
        a.flags
    );
    assert!(!a.flags.iter().any(|f| f.id == FlagId::SweepInconsistent));
    let x = a.crossover.as_ref().expect("a crossover finding");
    let sides: Vec<(&str, &str, Side)> = x
        .regions
        .iter()
        .map(|r| (r.first_label.as_str(), r.last_label.as_str(), r.side))
        .collect();
    assert_eq!(
        sides,
        vec![
            ("c=1", "c=1", Side::Worse),
            ("c=10", "c=10", Side::Better),
            ("c=256", "c=1024", Side::Worse)
        ]
    );
    assert_eq!(
        x.description,
        "the candidate is worse at c=1, better at c=10, and worse from c=256 to c=1024 \
         (output_throughput, higher is better)"
    );
}

#[test]
fn seed_from_one_blocked_run_is_still_a_rebaseline() {
    let ctx = ComparisonContext {
        interleaved: false,
        ..ComparisonContext::interleaved_run()
    };
    let a = assess(&seed_points(), &ctx);
    assert!(a.crossover.is_none());
    assert!(
        find(&a, FlagId::StaleBaseline)
            .evidence
            .contains("not interleaved")
    );
    assert_eq!(
        find(&a, FlagId::SweepInconsistent).level,
        FlagLevel::ReBaseline
    );
}

#[test]
fn monotone_crossover_reads_below_and_above() {
    let pts: Vec<PointComparison> = [
        (1.0, 1.10),
        (10.0, 1.08),
        (64.0, 1.0),
        (256.0, 0.94),
        (1024.0, 0.88),
    ]
    .iter()
    .map(|&(c, r)| {
        point(
            &format!("c={c}"),
            c,
            arm(100.0, &NOISE_A),
            arm(100.0 * r, &NOISE_B),
        )
    })
    .collect();
    let a = assess(&pts, &ComparisonContext::interleaved_run());
    let x = a.crossover.expect("crossover");
    assert_eq!(
        x.description,
        "the candidate is better from c=1 to c=10, and worse from c=256 to c=1024 \
         (output_throughput, higher is better)"
    );
}

#[test]
fn a_clean_sweep_raises_nothing() {
    let pts: Vec<PointComparison> = [1.0, 10.0, 64.0]
        .iter()
        .map(|&c| {
            point(
                &format!("c={c}"),
                c,
                arm(100.0, &NOISE_A),
                arm(105.0, &NOISE_B),
            )
        })
        .collect();
    let a = assess(&pts, &ComparisonContext::interleaved_run());
    assert!(a.flags.is_empty(), "{:#?}", a.flags);
    assert!(a.crossover.is_none());
    assert_eq!(a.p_values.len(), 3);
}

#[test]
fn one_level_far_from_the_rest_is_a_look() {
    let pts: Vec<PointComparison> = [(1.0, 1.05), (10.0, 1.05), (64.0, 1.30), (256.0, 1.05)]
        .iter()
        .map(|&(c, r)| {
            point(
                &format!("c={c}"),
                c,
                arm(100.0, &NOISE_A),
                arm(100.0 * r, &NOISE_B),
            )
        })
        .collect();
    let a = assess(&pts, &ComparisonContext::interleaved_run());
    let f = find(&a, FlagId::SweepInconsistent);
    assert_eq!(f.level, FlagLevel::Look);
    assert!(
        f.evidence.contains("c=64: leave-one-out residual"),
        "{}",
        f.evidence
    );
    assert!(!f.evidence.contains("c=10:"), "{}", f.evidence);
    assert!(a.crossover.is_none());
}
