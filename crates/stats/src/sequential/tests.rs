//! Unit tests of the sequential module.

use super::boundaries::{boundaries_on_grid, grid};
use super::*;
use crate::verdict::Direction;

#[test]
fn a_comparison_read_at_a_look_matches_the_sequential_comparison() {
    let design = SequentialDesign::new(SpendingFunction::OBrienFleming, 0.05, 20).expect("valid");
    let look = design.look(&[(5, 5), (8, 8)]).expect("valid");
    let base = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1];
    let cand: Vec<f64> = base.iter().map(|v| v * 1.2).collect();
    let fixed = crate::verdict::compare_arms(&base, &cand, Direction::HigherIsBetter, 0.05, 0.05)
        .expect("valid");
    let read = at_look(&fixed, &look).expect("valid");
    let seq = compare_arms_sequential(&base, &cand, Direction::HigherIsBetter, 0.05, &look)
        .expect("valid");
    assert_eq!(read.effect, seq.effect);
    assert_eq!(read.verdict, seq.verdict);
    assert!(
        read.effect.ci.upper - read.effect.ci.lower > fixed.effect.ci.upper - fixed.effect.ci.lower
    );
    // Fewer values than the look counted are fine here (a flag's counterfactual).
    let fewer =
        crate::verdict::compare_arms(&base[..7], &cand, Direction::HigherIsBetter, 0.05, 0.05)
            .expect("valid");
    assert!(at_look(&fewer, &look).is_ok());
}

const BOTH: [SpendingFunction; 2] = [SpendingFunction::OBrienFleming, SpendingFunction::Pocock];

#[test]
fn spending_starts_at_0_ends_at_alpha_and_increases() {
    for s in BOTH {
        for alpha in [0.01, 0.05, 0.1] {
            assert_eq!(s.spent(alpha, 0.0), Ok(0.0));
            assert_eq!(s.spent(alpha, 1.0), Ok(alpha));
            let mut before = 0.0;
            // From t = 0.01: O'Brien–Fleming's α(t) underflows to 0 below t ≈ 0.002.
            for i in 10..=1000 {
                let a = s.spent(alpha, i as f64 / 1000.0).expect("valid");
                assert!(a > before && a <= alpha, "{s:?} α {alpha} at {i}: {a}");
                before = a;
            }
        }
        assert!(s.spent(0.05, -0.1).is_err());
        assert!(s.spent(0.05, 1.1).is_err());
        assert!(s.spent(0.05, f64::NAN).is_err());
        assert!(s.spent(0.0, 0.5).is_err());
        assert!(s.spent(1.0, 0.5).is_err());
    }
    // Pocock: α·ln(1 + (e − 1)/2) at t = 1/2. O'Brien–Fleming, per side at α/2:
    // 4(1 − Φ(z_{1−α/4}/√t)), z_{0.9875} = 2.241402727604945 (scipy norm.isf(0.0125)).
    let pocock = SpendingFunction::Pocock.spent(0.05, 0.5).expect("valid");
    assert!((pocock - 0.05 * (1.0 + (std::f64::consts::E - 1.0) / 2.0).ln()).abs() < 1e-16);
    let obf = SpendingFunction::OBrienFleming
        .spent(0.05, 0.5)
        .expect("valid");
    let expected = 4.0 * normal_sf(2.241_402_727_604_945 / 0.5f64.sqrt());
    assert!(
        (obf - expected).abs() < 1e-9 * expected,
        "{obf} vs {expected}"
    );
}

#[test]
fn upper_normal_quantile_matches_scipy() {
    // scipy.stats.norm.isf
    for (p, z) in [
        (0.025, 1.959_963_984_540_054_5),
        (0.0125, 2.241_402_727_604_945),
        (1e-10, 6.361_340_902_404_056),
    ] {
        // statrs' erfc is good to ~5e-11 relative (sf(1.959963984540054) =
        // 0.02499999999887707), and the quantile is polished on it.
        let got = normal_upper_quantile(p);
        assert!((got - z).abs() < 1e-10 * z, "z({p}) = {got}, scipy {z}");
    }
}

#[test]
fn simpson_grid_integrates_cubics_exactly() {
    for (mean, lo, hi) in [(0.0, -2.3, 2.3), (0.7, -8.0, 1.9), (0.0, -30.0, 30.0)] {
        let g = grid(mean, lo, hi, GRID_R);
        let (a, b) = (g.z[0], g.z[g.z.len() - 1]);
        assert!(a >= lo && b <= hi && g.z.windows(2).all(|p| p[0] < p[1]));
        let integral =
            |f: &dyn Fn(f64) -> f64| -> f64 { g.z.iter().zip(&g.w).map(|(z, w)| w * f(*z)).sum() };
        let cubic = |z: f64| 1.0 - 2.0 * z + 0.5 * z * z * z;
        let exact = |z: f64| z - z * z + z.powi(4) / 8.0;
        let got = integral(&cubic);
        let want = exact(b) - exact(a);
        assert!(
            (got - want).abs() < 1e-9 * want.abs().max(1.0),
            "{got} vs {want}"
        );
        // The standard normal density integrates to the normal probability of [a, b].
        let got = integral(&|z| phi(z - mean));
        let want = normal_sf(a - mean) - normal_sf(b - mean);
        // J&T's grid is coarse in the tails (log-spaced beyond ±3): ~1e-8 at r = 32.
        assert!((got - want).abs() < 3e-8, "{got} vs {want}");
    }
    // Wider than J&T's grid: the ends stop at mean ± (3 + 4 ln r).
    let g = grid(0.0, -30.0, 30.0, GRID_R);
    assert!((g.z[g.z.len() - 1] - (3.0 + 4.0 * (GRID_R as f64).ln())).abs() < 1e-12);
    assert!(grid(0.0, 20.0, 30.0, GRID_R).z.is_empty());
}

#[test]
fn grid_is_converged() {
    // r = 32 against r = 128 (16× the work per look). Measured: ≤ 7e-8 for five
    // looks, 5.1e-6 for servebench's 26 looks at steps of 1/30 after a first look capped
    // at 8 (narrow increments over a wide region are the hard case).
    let cases: [(SpendingFunction, Vec<f64>); 3] = [
        (
            SpendingFunction::OBrienFleming,
            vec![0.2, 0.4, 0.6, 0.8, 1.0],
        ),
        (
            SpendingFunction::Pocock,
            vec![0.1, 0.15, 0.5, 0.51, 0.9, 1.0],
        ),
        (
            SpendingFunction::OBrienFleming,
            (5..=30).map(|n| n as f64 / 30.0).collect(),
        ),
    ];
    let mut worst: f64 = 0.0;
    for (s, fractions) in cases {
        let a = boundaries_on_grid(s, 0.05, &fractions, GRID_R).expect("valid");
        let b = boundaries_on_grid(s, 0.05, &fractions, 128).expect("valid");
        for (x, y) in a.iter().zip(&b) {
            worst = worst.max((x - y).abs());
        }
    }
    assert!(worst < 1e-5, "r = 32 vs 128: {worst:e}");
}

#[test]
fn spending_functions_serialize_in_kebab_case() {
    assert_eq!(
        serde_json::to_string(&SpendingFunction::OBrienFleming).expect("serializes"),
        r#""obrien-fleming""#
    );
    assert_eq!(
        serde_json::from_str::<SpendingFunction>(r#""pocock""#).expect("parses"),
        SpendingFunction::Pocock
    );
    let design = SequentialDesign::new(SpendingFunction::OBrienFleming, 0.05, 30).expect("valid");
    let json = serde_json::to_string(&design).expect("serializes");
    assert_eq!(
        json,
        r#"{"spending":"obrien-fleming","alpha":0.05,"max_trials_per_arm":30}"#
    );
}
