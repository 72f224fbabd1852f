//! Sequential verdicts (`src/sequential.rs`): the information fraction and the looks a cell
//! has had, the repeated confidence interval at a look, and the verdict rule read on it —
//! improved late, much wider early, the fixed-sample verdict at a single final look,
//! arithmetic metrics, and the arms' counts checked.

use servebench_stats::error::StatsError;
use servebench_stats::sequential::{
    SequentialDesign, SpendingFunction, boundaries, compare_arms_arithmetic_sequential,
    compare_arms_sequential, nominal_alpha, repeated_ci, t_boundary,
};
use servebench_stats::verdict::{
    Direction, Margin, Verdict, compare_arms, compare_arms_arithmetic,
};

const OBF: SpendingFunction = SpendingFunction::OBrienFleming;
const POCOCK: SpendingFunction = SpendingFunction::Pocock;

// --- design, looks, intervals -------------------------------------------------------------

#[test]
fn information_is_the_harmonic_mean_of_the_counts_over_the_budget() {
    let d = SequentialDesign::new(OBF, 0.05, 30).expect("valid");
    assert_eq!(d.fraction(15, 15), Ok(0.5));
    // 1/(1/10 + 1/30) = 7.5 = 15/2: as much information as 15 per arm.
    assert!((d.fraction(10, 30).expect("valid") - 0.5).abs() < 1e-15);
    assert_eq!(d.fraction(30, 30), Ok(1.0));
    assert_eq!(d.fraction(40, 35), Ok(1.0));
    assert!(d.fraction(0, 5).is_err());
}

#[test]
fn looks_follow_the_history() {
    let d = SequentialDesign::new(POCOCK, 0.05, 30).expect("valid");
    let history: Vec<(u64, u64)> = (5..=30).map(|n| (n, n)).collect();
    let looks = d.looks(&history).expect("valid");
    let fractions: Vec<f64> = history.iter().map(|&(n, _)| n as f64 / 30.0).collect();
    let c = boundaries(POCOCK, 0.05, &fractions).expect("valid");
    for (k, look) in looks.iter().enumerate() {
        assert_eq!(look.index, k + 1);
        assert_eq!(look.z_boundary, c[k]);
        assert_eq!(look.nominal_alpha, nominal_alpha(c[k]));
        assert_eq!(look.last, k + 1 == looks.len());
        assert_eq!(d.look(&history[..=k]).expect("valid"), *look);
    }
    assert!((looks[25].spent - 0.05).abs() < 1e-15);
    // A look after the budget is spent, or with no new trials, is an error.
    let mut after = history.clone();
    after.push((31, 31));
    assert!(d.looks(&after).is_err());
    assert!(d.looks(&[(5, 5), (5, 5)]).is_err());
    assert!(d.look(&[]).is_err());
}

#[test]
fn repeated_ci_uses_the_t_quantile_at_the_nominal_level() {
    // c = 1.959964 (nominal 0.05) with ν = 4: t(0.975, 4) = 2.7764451051977987 (scipy).
    let ci = repeated_ci(1.0, 0.5, 4.0, 1.959_963_984_540_054, 0.95).expect("valid");
    assert!(
        (ci.upper - (1.0 + 0.5 * 2.776_445_105_197_798_7)).abs() < 1e-8,
        "{ci:?}"
    );
    assert!(
        (ci.lower - (1.0 - 0.5 * 2.776_445_105_197_798_7)).abs() < 1e-8,
        "{ci:?}"
    );
    assert_eq!(ci.level, 0.95);
    // c = 4.877 (the first O'Brien–Fleming look of five): scipy gives the nominal level
    // 2·norm.sf(4.877) = 1.077114354702968e-06 and t.isf(that/2, 8) = 13.129578146438545,
    // far beyond 4.877.
    let p = nominal_alpha(4.877);
    assert!((p - 1.077_114_354_702_968e-6).abs() < 1e-9 * p, "{p}");
    let t = t_boundary(4.877, 8.0).expect("valid");
    assert!((t - 13.129_578_146_438_545).abs() < 1e-7, "{t}");
    // A capped boundary keeps a finite interval even with few degrees of freedom.
    let wide = repeated_ci(0.0, 1.0, 2.0, 8.0, 0.95).expect("valid");
    assert!(wide.upper.is_finite() && wide.upper > 1e6, "{wide:?}");
    // No spread, no width.
    let point = repeated_ci(0.3, 0.0, 6.0, 2.5, 0.95).expect("valid");
    assert_eq!((point.lower, point.upper), (0.3, 0.3));
}

// --- sequential verdicts ------------------------------------------------------------------

/// Deterministic arms around `center` with a spread of about 3%.
fn arm(center: f64, n: usize) -> Vec<f64> {
    const NOISE: [f64; 10] = [
        1.021, 0.974, 1.035, 0.988, 0.962, 1.012, 1.003, 0.979, 1.044, 0.983,
    ];
    (0..n).map(|i| center * NOISE[i % NOISE.len()]).collect()
}

fn servebench_design(s: SpendingFunction) -> (SequentialDesign, Vec<(u64, u64)>) {
    let d = SequentialDesign::new(s, 0.05, 30).expect("valid");
    (d, (5..=30).map(|n| (n, n)).collect())
}

#[test]
fn a_large_effect_at_a_late_look_is_improved() {
    for s in [OBF, POCOCK] {
        let (d, history) = servebench_design(s);
        let look = d.look(&history[..16]).expect("valid"); // 20 trials per arm
        let c = compare_arms_sequential(
            &arm(100.0, 20),
            &arm(112.0, 20),
            Direction::HigherIsBetter,
            0.05,
            &look,
        )
        .expect("valid");
        assert_eq!(c.verdict, Verdict::Improved, "{s:?}: {c:?}");
        assert!(c.stop && c.significant && c.ci_beyond_margin);
        assert!(c.rci.lower > 0.05f64.ln_1p());
        assert!((c.effect.point - 1.12).abs() < 1e-9);
        assert!((c.effect.ci.lower - c.rci.lower.exp()).abs() < 1e-15);
        // The same data, lower is better: regressed.
        let c = compare_arms_sequential(
            &arm(100.0, 20),
            &arm(112.0, 20),
            Direction::LowerIsBetter,
            0.05,
            &look,
        )
        .expect("valid");
        assert_eq!(c.verdict, Verdict::Regressed);
    }
}

#[test]
fn the_first_obrien_fleming_look_is_much_wider_than_the_fixed_sample_ci() {
    let (d, history) = servebench_design(OBF);
    let look = d.look(&history[..1]).expect("valid"); // 5 per arm, t = 1/6
    let (base, cand) = (arm(100.0, 5), arm(110.0, 5));
    let seq = compare_arms_sequential(&base, &cand, Direction::HigherIsBetter, 0.05, &look)
        .expect("valid");
    let fixed = compare_arms(&base, &cand, Direction::HigherIsBetter, 0.05, 0.05).expect("valid");
    assert_eq!(seq.test, fixed.test, "the same Welch test underneath");
    let ratio = seq.rci.width() / fixed.test.ci.width();
    assert!(ratio > 3.0, "RCI {:?} vs CI {:?}", seq.rci, fixed.test.ci);
    // The fixed-sample reading would already call it; the sequential one waits.
    assert!(fixed.verdict.is_decided(), "{:?}", fixed.verdict);
    assert!(!seq.verdict.is_decided() && !seq.stop, "{:?}", seq.verdict);
    // Pocock spends more early: narrower than O'Brien–Fleming at the same look.
    let (p, ph) = servebench_design(POCOCK);
    let pocock = compare_arms_sequential(
        &base,
        &cand,
        Direction::HigherIsBetter,
        0.05,
        &p.look(&ph[..1]).expect("valid"),
    )
    .expect("valid");
    assert!(pocock.rci.width() < seq.rci.width());
}

#[test]
fn one_look_at_the_budget_is_the_fixed_sample_verdict() {
    // A single look at t = 1 has c = z_{1−α/2}: the RCI is the Welch CI and the verdict is
    // compare_arms' verdict, on both scales.
    let (base, cand) = (arm(100.0, 8), arm(103.0, 8));
    for s in [OBF, POCOCK] {
        let d = SequentialDesign::new(s, 0.05, 8).expect("valid");
        let look = d.look(&[(8, 8)]).expect("valid");
        assert!(look.last);
        for threshold in [0.01, 0.02, 0.05, 0.2] {
            let seq =
                compare_arms_sequential(&base, &cand, Direction::HigherIsBetter, threshold, &look)
                    .expect("valid");
            let fixed = compare_arms(&base, &cand, Direction::HigherIsBetter, threshold, 0.05)
                .expect("valid");
            assert!((seq.rci.lower - fixed.test.ci.lower).abs() < 1e-9);
            assert!((seq.rci.upper - fixed.test.ci.upper).abs() < 1e-9);
            assert_eq!(seq.verdict, fixed.verdict, "θ {threshold}");
            assert!(seq.stop);
        }
        for margin in [Margin::Absolute(1.0), Margin::Relative(0.05)] {
            let seq = compare_arms_arithmetic_sequential(
                &base,
                &cand,
                Direction::HigherIsBetter,
                margin,
                &look,
            )
            .expect("valid");
            let fixed =
                compare_arms_arithmetic(&base, &cand, Direction::HigherIsBetter, margin, 0.05)
                    .expect("valid");
            assert!((seq.rci.lower - fixed.test.ci.lower).abs() < 1e-9);
            assert!((seq.rci.upper - fixed.test.ci.upper).abs() < 1e-9);
            assert_eq!(seq.margin, fixed.margin);
            assert_eq!(seq.verdict, fixed.verdict, "{margin:?}");
        }
    }
}

#[test]
fn arithmetic_sequential_verdicts() {
    let (d, history) = servebench_design(OBF);
    let look = d.look(&history[..3]).expect("valid"); // 7 per arm
    // No errors anywhere: equivalent with a zero-width interval, at any look.
    let c = compare_arms_arithmetic_sequential(
        &[0.0; 7],
        &[0.0; 7],
        Direction::LowerIsBetter,
        Margin::Absolute(0.01),
        &look,
    )
    .expect("constant equal arms are fine");
    assert_eq!(c.verdict, Verdict::Equivalent);
    assert!(c.stop && c.rci.width() == 0.0);
    // Goodput up by 40 against a margin of 5 with a spread of ~3: improved even this early.
    let c = compare_arms_arithmetic_sequential(
        &arm(100.0, 7),
        &arm(140.0, 7),
        Direction::HigherIsBetter,
        Margin::Absolute(5.0),
        &look,
    )
    .expect("valid");
    assert_eq!(c.verdict, Verdict::Improved, "{c:?}");
}

#[test]
fn the_arms_must_hold_the_looks_counts() {
    let (d, history) = servebench_design(OBF);
    let look = d.look(&history[..2]).expect("valid"); // 6 per arm
    let r = compare_arms_sequential(
        &arm(100.0, 5),
        &arm(100.0, 6),
        Direction::HigherIsBetter,
        0.05,
        &look,
    );
    assert!(
        matches!(r, Err(StatsError::InvalidParameter { name: "look", .. })),
        "{r:?}"
    );
    assert!(
        compare_arms_sequential(
            &arm(100.0, 6),
            &arm(100.0, 6),
            Direction::HigherIsBetter,
            0.0,
            &look
        )
        .is_err()
    );
}

#[test]
fn the_last_look_stops_even_when_undecided() {
    let (d, history) = servebench_design(OBF);
    let look = d.look(&history).expect("valid");
    // +4% against θ = 5% with a 3% spread: neither beyond nor inside.
    let c = compare_arms_sequential(
        &arm(100.0, 30),
        &arm(104.5, 30).iter().rev().copied().collect::<Vec<_>>(),
        Direction::HigherIsBetter,
        0.05,
        &look,
    )
    .expect("valid");
    assert!(!c.verdict.is_decided(), "{:?}", c.verdict);
    assert!(c.stop && c.look.last);
}
