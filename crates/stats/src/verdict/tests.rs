//! Unit tests of the verdict rule: each branch, mirrored directions, trials to settle, zero
//! error rates, the serialised names.

use super::*;

fn ci(lower: f64, upper: f64) -> ConfidenceInterval {
    ConfidenceInterval {
        level: 0.95,
        lower,
        upper,
    }
}

#[test]
fn classify_each_branch() {
    let up = Direction::HigherIsBetter;
    let down = Direction::LowerIsBetter;
    let m = 0.02f64.ln_1p();
    assert_eq!(
        classify(0.1, &ci(0.05, 0.15), true, m, up),
        Verdict::Improved
    );
    assert_eq!(
        classify(-0.1, &ci(-0.15, -0.05), true, m, up),
        Verdict::Regressed
    );
    assert_eq!(
        classify(0.1, &ci(0.05, 0.15), true, m, down),
        Verdict::Regressed
    );
    assert_eq!(
        classify(0.0, &ci(-0.01, 0.01), false, m, up),
        Verdict::Equivalent
    );
    assert_eq!(
        classify(0.005, &ci(0.001, 0.009), true, m, up),
        Verdict::Equivalent
    );
    assert_eq!(
        classify(0.03, &ci(0.01, 0.05), true, m, up),
        Verdict::LikelyImproved
    );
    // −12.6% [−22.6%, −1.4%] on a latency: the direction is known (worse is lower
    // throughput, better is lower latency), its size is not: likely, never "small".
    let (lo, hi) = ((1.0f64 - 0.226).ln(), (1.0f64 - 0.014).ln());
    assert_eq!(
        classify(
            (1.0f64 - 0.126).ln(),
            &ci(lo, hi),
            true,
            0.05f64.ln_1p(),
            down
        ),
        Verdict::LikelyImproved
    );
    assert_eq!(
        classify(
            (1.0f64 - 0.126).ln(),
            &ci(lo, hi),
            true,
            0.05f64.ln_1p(),
            up
        ),
        Verdict::LikelyRegressed
    );
    assert_eq!(
        classify(0.03, &ci(-0.01, 0.07), false, m, up),
        Verdict::Inconclusive
    );
}

#[test]
fn decided_and_mirrored() {
    for v in [Verdict::Improved, Verdict::Regressed, Verdict::Equivalent] {
        assert!(v.is_decided());
    }
    for v in [
        Verdict::LikelyImproved,
        Verdict::LikelyRegressed,
        Verdict::Inconclusive,
    ] {
        assert!(!v.is_decided());
    }
    assert_eq!(Verdict::LikelyImproved.mirrored(), Verdict::LikelyRegressed);
    assert_eq!(Verdict::Equivalent.mirrored(), Verdict::Equivalent);
}

#[test]
fn only_undecided_verdicts_carry_trials_to_settle() {
    // Decided (improved by far): no advice.
    let c = compare_arms(
        &[100.0, 101.0, 99.0, 100.5, 99.5],
        &[130.0, 131.0, 129.0, 130.5, 129.5],
        Direction::HigherIsBetter,
        0.05,
        0.05,
    )
    .expect("valid");
    assert_eq!(c.verdict, Verdict::Improved);
    assert_eq!(c.trials_to_settle, None);
    // Undecided (noisy, +8% against θ = 5%): advice, more than now.
    let c = compare_arms(
        &[100.0, 120.0, 90.0, 110.0, 95.0],
        &[108.0, 125.0, 100.0, 118.0, 103.0],
        Direction::HigherIsBetter,
        0.05,
        0.05,
    )
    .expect("valid");
    assert!(!c.verdict.is_decided(), "{:?}", c.verdict);
    assert!(c.trials_to_settle.is_some_and(|n| n > 5), "{c:?}");
}

#[test]
fn zero_error_rates_are_equivalent() {
    let c = compare_arms_arithmetic(
        &[0.0; 4],
        &[0.0; 4],
        Direction::LowerIsBetter,
        Margin::Absolute(0.01),
        0.05,
    )
    .expect("constant equal arms are fine");
    assert_eq!(c.verdict, Verdict::Equivalent);
    assert!(
        compare_arms_arithmetic(
            &[0.0; 4],
            &[0.0; 4],
            Direction::LowerIsBetter,
            Margin::Relative(0.05),
            0.05
        )
        .is_err()
    );
}

#[test]
fn verdict_serializes_in_kebab_case() {
    for v in [
        Verdict::Improved,
        Verdict::Regressed,
        Verdict::Equivalent,
        Verdict::LikelyImproved,
        Verdict::LikelyRegressed,
        Verdict::Inconclusive,
    ] {
        let json = serde_json::to_string(&v).expect("serializes");
        assert_eq!(json, format!("\"{}\"", v.as_str()));
    }
}
