//! `implausible` where servebench already checked what it would ask: a large change whose
//! every server start passed its verify rules and whose trials agree is not a look flag (the
//! H200 case of docs/gpu.md: a verified 2.0× grouped_mm vs eager drew nine of them).

use servebench_stats::flags::{ComparisonContext, FlagId};

use crate::common::{NOISE_A, NOISE_B, arm, assess, find, point};

fn implausible_raised(a: &servebench_stats::flags::SweepAssessment) -> bool {
    a.flags.iter().any(|f| f.id == FlagId::Implausible)
}

#[test]
fn a_verified_large_change_whose_trials_agree_is_no_flag() {
    let mut base = arm(100.0, &NOISE_A);
    let mut cand = arm(200.0, &NOISE_B);
    base.verified = true;
    cand.verified = true;
    let a = assess(
        &[point("c=16", 16.0, base, cand)],
        &ComparisonContext::interleaved_run(),
    );
    assert!(!implausible_raised(&a), "{:#?}", a.flags);
}

#[test]
fn an_unverified_large_change_is_flagged_with_what_would_prove_it() {
    let a = assess(
        &[point(
            "c=16",
            16.0,
            arm(100.0, &NOISE_A),
            arm(200.0, &NOISE_B),
        )],
        &ComparisonContext::interleaved_run(),
    );
    let f = find(&a, FlagId::Implausible);
    assert!(
        f.evidence.contains("the trials agree, but no verify rule"),
        "{}",
        f.evidence
    );
    assert!(f.action.contains("a verify rule proves"), "{}", f.action);
    // Only one arm verified is not verified.
    let mut base = arm(100.0, &NOISE_A);
    base.verified = true;
    let a = assess(
        &[point("c=16", 16.0, base, arm(200.0, &NOISE_B))],
        &ComparisonContext::interleaved_run(),
    );
    assert!(implausible_raised(&a));
}

#[test]
fn a_verified_large_change_carried_by_some_trials_is_still_flagged() {
    // The candidate's trials straddle the baseline's: one of them is no faster at all.
    let mut base = arm(100.0, &NOISE_A);
    base.verified = true;
    let mut cand =
        servebench_stats::flags::ArmEvidence::from_values(vec![300.0, 290.0, 310.0, 305.0, 99.0]);
    cand.verified = true;
    let a = assess(
        &[point("c=16", 16.0, base, cand)],
        &ComparisonContext::interleaved_run(),
    );
    let f = find(&a, FlagId::Implausible);
    assert!(f.evidence.contains("trials overlap"), "{}", f.evidence);
    assert!(
        f.action.starts_with("the variant was in effect"),
        "{}",
        f.action
    );
}
