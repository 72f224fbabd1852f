//! Group-sequential boundaries, repeated confidence intervals and sequential verdicts
//! (`src/sequential.rs`): reference vectors from scipy and a Monte Carlo
//! (`tests/reference/sequential_boundaries.py` → `sequential_boundaries.json`), published
//! boundaries, crossing probabilities re-derived here by a plain uniform-grid quadrature (no
//! J&T grid, no recursion code shared with the crate). The verdict at a look is in
//! `sequential_verdicts.rs`.

use serde_json::Value;
use servebench_stats::distributions::normal_sf;
use servebench_stats::error::StatsError;
use servebench_stats::sequential::{
    MAX_Z_BOUNDARY, SequentialDesign, SpendingFunction, boundaries, exit_probabilities,
    repeated_ci, t_boundary,
};

const OBF: SpendingFunction = SpendingFunction::OBrienFleming;
const POCOCK: SpendingFunction = SpendingFunction::Pocock;

fn reference() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/sequential_boundaries.json"
    );
    let text = std::fs::read_to_string(path).expect("the json is committed beside the script");
    serde_json::from_str(&text).expect("valid JSON")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn spending(name: &str) -> SpendingFunction {
    serde_json::from_value(Value::String(name.into())).expect("a spending function name")
}

fn equal(k: usize) -> Vec<f64> {
    (1..=k).map(|i| i as f64 / k as f64).collect()
}

// --- reference vectors -----------------------------------------------------------------

#[test]
fn boundaries_match_two_independent_computations() {
    // "boundaries_quadrature": the recursion on a uniform 4001-point grid per look (numpy,
    // scipy's normal functions; accurate to ~1e-9). "boundaries": brentq on Genz's
    // randomized-QMC rectangle probabilities (scipy multivariate_normal.cdf) — no recursion
    // at all, but only good to ~1e-7 in probability, which is ~2e-5 in c for close looks.
    // Observed worst differences: 1.6e-7 (quadrature) and 2.2e-5 (Genz).
    let r = reference();
    let (mut worst_quadrature, mut worst_genz): (f64, f64) = (0.0, 0.0);
    for d in r["designs"].as_array().expect("designs") {
        let name = d["name"].as_str().expect("name");
        let s = spending(d["spending"].as_str().expect("spending"));
        let alpha = d["alpha"].as_f64().expect("alpha");
        let fractions = floats(&d["fractions"]);
        let got = boundaries(s, alpha, &fractions).expect("valid design");
        let quadrature = floats(&d["boundaries_quadrature"]);
        let genz = floats(&d["boundaries"]);
        for (k, g) in got.iter().enumerate() {
            worst_quadrature = worst_quadrature.max((g - quadrature[k]).abs());
            worst_genz = worst_genz.max((g - genz[k]).abs());
            assert!(
                (g - quadrature[k]).abs() < 1e-6,
                "{name} look {}: {g} vs quadrature {}",
                k + 1,
                quadrature[k]
            );
            assert!(
                (g - genz[k]).abs() < 5e-5,
                "{name} look {}: {g} vs Genz {}",
                k + 1,
                genz[k]
            );
        }
        for (k, (&t, e)) in fractions.iter().zip(floats(&d["spent"])).enumerate() {
            let got = s.spent(alpha, t).expect("valid");
            assert!(
                (got - e).abs() <= 1e-9 * e,
                "{name} α(t_{}) = {got} vs {e}",
                k + 1
            );
        }
    }
    assert!(
        worst_quadrature > 0.0 && worst_genz > 0.0,
        "independent computations"
    );
}

#[test]
fn published_lan_demets_boundaries() {
    // Lan–DeMets, 5 equally spaced looks, two-sided α = 0.05 (ld98 / R ldbounds, three
    // decimals): O'Brien–Fleming type 4.877, 3.357, 2.680, 2.290, 2.031; Pocock type 2.438,
    // 2.427, 2.410, 2.397, 2.386.
    for (s, published) in [
        (OBF, [4.877, 3.357, 2.680, 2.290, 2.031]),
        (POCOCK, [2.438, 2.427, 2.410, 2.397, 2.386]),
    ] {
        let got = boundaries(s, 0.05, &equal(5)).expect("valid");
        for (g, p) in got.iter().zip(published) {
            assert!((g - p).abs() <= 5e-4, "{s:?}: {got:?} vs {published:?}");
        }
    }
}

#[test]
fn crossing_probabilities_match_a_monte_carlo_of_brownian_paths() {
    // 10^7 paths per design; each look's first-crossing share has a binomial SE (≤ 5e-5).
    let r = reference();
    let mut checked = 0;
    for d in r["designs"].as_array().expect("designs") {
        let name = d["name"].as_str().expect("name");
        let fractions = floats(&d["fractions"]);
        let mut runs = vec![(floats(&d["boundaries"]), &d["monte_carlo"])];
        if d.get("published").is_some() {
            runs.push((floats(&d["published"]), &d["monte_carlo_published"]));
        }
        for (bounds, mc) in runs {
            let exits = exit_probabilities(&fractions, &bounds, 0.0).expect("valid");
            let shares = floats(&mc["first_crossing"]);
            let ses = floats(&mc["std_err"]);
            for (k, e) in exits.iter().enumerate() {
                let z = (e.total() - shares[k]) / ses[k].max(1e-7);
                assert!(
                    z.abs() < 4.5,
                    "{name} look {}: {} vs Monte Carlo {} ({z:.1} SE)",
                    k + 1,
                    e.total(),
                    shares[k]
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "{checked} looks checked");
}

// --- properties --------------------------------------------------------------------------

#[test]
fn a_single_look_at_the_end_is_the_fixed_sample_test() {
    for s in [OBF, POCOCK] {
        let c = boundaries(s, 0.05, &[1.0]).expect("valid");
        // scipy.stats.norm.isf(0.025); statrs' erfc is good to ~5e-11 relative.
        assert!((c[0] - 1.959_963_984_540_054).abs() < 1e-9, "{c:?}");
        let c = boundaries(s, 0.01, &[1.0]).expect("valid");
        assert!((c[0] - 2.575_829_303_548_901).abs() < 1e-9, "{c:?}");
    }
}

/// Composite Simpson on `[a, b]` with `n` (even) intervals.
fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
    let h = (b - a) / n as f64;
    let mut sum = f(a) + f(b);
    for i in 1..n {
        sum += f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    sum * h / 3.0
}

fn phi(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// P(stop at look 1) and P(stop at look 2) for `Z_k ~ N(θ√t_k, 1)`, by direct quadrature
/// over `z_1 ∈ (−c_1, c_1)`.
fn two_looks(t: [f64; 2], c: [f64; 2], drift: f64) -> [f64; 2] {
    let mean1 = drift * t[0].sqrt();
    let delta = t[1] - t[0];
    let sd = delta.sqrt();
    let first = normal_sf(c[0] - mean1) + normal_sf(c[0] + mean1);
    let second = simpson(
        |z| {
            let o = z * t[0].sqrt() + drift * delta;
            phi(z - mean1)
                * (normal_sf((c[1] * t[1].sqrt() - o) / sd)
                    + normal_sf((c[1] * t[1].sqrt() + o) / sd))
        },
        -c[0],
        c[0],
        4000,
    );
    [first, second]
}

/// P(stop at look 3) under H0 by nested quadrature: the density of `Z_2` on `(−c_2, c_2)`
/// with no stop at look 1, then the crossing at look 3.
fn third_look(t: [f64; 3], c: [f64; 3]) -> f64 {
    let n = 1000;
    let (d2, d3) = (t[1] - t[0], t[2] - t[1]);
    let h2 = |z2: f64| {
        simpson(
            |z1| {
                phi(z1)
                    * (t[1] / d2).sqrt()
                    * phi((z2 * t[1].sqrt() - z1 * t[0].sqrt()) / d2.sqrt())
            },
            -c[0],
            c[0],
            n,
        )
    };
    simpson(
        |z2| {
            let o = z2 * t[1].sqrt();
            let up = c[2] * t[2].sqrt();
            h2(z2) * (normal_sf((up - o) / d3.sqrt()) + normal_sf((up + o) / d3.sqrt()))
        },
        -c[1],
        c[1],
        n,
    )
}

#[test]
fn total_crossing_probability_is_alpha_by_independent_quadrature() {
    for s in [OBF, POCOCK] {
        for alpha in [0.05, 0.1] {
            for t in [[0.5, 1.0], [0.13, 0.8], [0.9, 1.0]] {
                let c = boundaries(s, alpha, &t).expect("valid");
                let [p1, p2] = two_looks(t, [c[0], c[1]], 0.0);
                let spent1 = s.spent(alpha, t[0]).expect("valid");
                let spent2 = s.spent(alpha, t[1]).expect("valid");
                assert!((p1 - spent1).abs() < 1e-12, "{s:?} {t:?}: {p1} vs {spent1}");
                assert!(
                    (p1 + p2 - spent2).abs() < 1e-8,
                    "{s:?} α {alpha} {t:?}: {} vs {spent2}",
                    p1 + p2
                );
            }
        }
        let t = [0.3, 0.45, 1.0];
        let c = boundaries(s, 0.05, &t).expect("valid");
        let [p1, p2] = two_looks([t[0], t[1]], [c[0], c[1]], 0.0);
        let p3 = third_look(t, [c[0], c[1], c[2]]);
        assert!(
            (p1 + p2 + p3 - 0.05).abs() < 1e-8,
            "{s:?} three looks: {p1} + {p2} + {p3} = {}",
            p1 + p2 + p3
        );
    }
}

#[test]
fn exit_probabilities_with_a_drift_match_quadrature() {
    let t = [0.4, 1.0];
    let c = boundaries(OBF, 0.05, &t).expect("valid");
    for drift in [0.0, 1.0, -2.5, 3.0] {
        let got = exit_probabilities(&t, &c, drift).expect("valid");
        let want = two_looks(t, [c[0], c[1]], drift);
        for k in 0..2 {
            assert!(
                (got[k].total() - want[k]).abs() < 1e-8,
                "drift {drift} look {}: {} vs {}",
                k + 1,
                got[k].total(),
                want[k]
            );
        }
        // The side the drift points to takes most of it.
        if drift > 0.0 {
            assert!(got[1].upper > got[1].lower);
        }
    }
    // One look: Φ(−c + θ) + Φ(−c − θ).
    let one = exit_probabilities(&[1.0], &[1.96], 2.8).expect("valid");
    assert!((one[0].upper - normal_sf(1.96 - 2.8)).abs() < 1e-15);
    assert!((one[0].lower - normal_sf(1.96 + 2.8)).abs() < 1e-15);
}

#[test]
fn obrien_fleming_boundaries_fall_and_pocock_stays_flat() {
    for fractions in [
        equal(5),
        equal(12),
        equal(40),
        vec![0.1, 0.25, 0.5, 0.7, 1.0],
    ] {
        let obf = boundaries(OBF, 0.05, &fractions).expect("valid");
        // (Strictly, except for early looks capped at MAX_Z_BOUNDARY.)
        assert!(
            obf.windows(2)
                .all(|w| w[1] < w[0] || w[1] == MAX_Z_BOUNDARY),
            "{obf:?}"
        );
        // The last O'Brien–Fleming boundary is close to the fixed-sample 1.96.
        assert!(obf[obf.len() - 1] < 2.2, "{obf:?}");
    }
    // Not for every spacing: a look right after another spends almost nothing, and its
    // statistic is almost the previous one, so its boundary is higher.
    let close = boundaries(OBF, 0.05, &[0.1, 0.25, 0.3, 0.7, 0.71, 1.0]).expect("valid");
    assert!(close[4] > close[3], "{close:?}");
    // Pocock-type spending keeps the boundaries nearly flat: for 12 equal looks their range
    // is under a tenth of O'Brien–Fleming's (measured: 0.22 against 5.7).
    let range = |c: &[f64]| {
        let (lo, hi) = c
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &c| (lo.min(c), hi.max(c)));
        hi - lo
    };
    let pocock = boundaries(POCOCK, 0.05, &equal(12)).expect("valid");
    let obf = boundaries(OBF, 0.05, &equal(12)).expect("valid");
    assert!(range(&pocock) < 0.1 * range(&obf), "{pocock:?} vs {obf:?}");
    assert!(pocock[0] < 2.8 && obf[0] > 7.0, "{pocock:?} vs {obf:?}");
}

#[test]
fn unequal_spacing_and_an_early_end_spend_exactly_alpha() {
    // Looks not planned in advance: any spacing, and a look at t = 1 after fewer looks than
    // planned spends what is left.
    for s in [OBF, POCOCK] {
        for fractions in [
            vec![0.05, 0.06, 0.5, 1.0],
            vec![0.33, 1.0],
            vec![0.2, 0.21, 0.22, 0.9, 0.95, 1.0],
            equal(40),
        ] {
            let c = boundaries(s, 0.05, &fractions).expect("valid");
            let exits = exit_probabilities(&fractions, &c, 0.0).expect("valid");
            let total: f64 = exits.iter().map(|e| e.total()).sum();
            assert!((total - 0.05).abs() < 1e-9, "{s:?} {fractions:?}: {total}");
            for (k, e) in exits.iter().enumerate() {
                let before = if k == 0 {
                    0.0
                } else {
                    s.spent(0.05, fractions[k - 1]).expect("valid")
                };
                let increment = s.spent(0.05, fractions[k]).expect("valid") - before;
                // Looks whose boundary is capped at 8 spend at most 2(1 − Φ(8)) more.
                assert!(
                    (e.total() - increment).abs() < 1e-9 + 1.3e-15,
                    "{s:?} {fractions:?} look {}",
                    k + 1
                );
                assert!((e.upper - e.lower).abs() < 1e-12, "symmetric under H0");
            }
        }
    }
}

#[test]
fn earlier_boundaries_do_not_depend_on_later_looks() {
    let fractions = [0.15, 0.3, 0.42, 0.77, 1.0];
    for s in [OBF, POCOCK] {
        let all = boundaries(s, 0.05, &fractions).expect("valid");
        for k in 1..fractions.len() {
            let prefix = boundaries(s, 0.05, &fractions[..k]).expect("valid");
            assert_eq!(prefix[..], all[..k], "{s:?}, {k} looks");
        }
    }
}

#[test]
fn sixty_looks_work() {
    for s in [OBF, POCOCK] {
        let fractions = equal(60);
        let c = boundaries(s, 0.05, &fractions).expect("valid");
        assert_eq!(c.len(), 60);
        assert!(
            c.iter()
                .all(|c| c.is_finite() && *c > 1.9 && *c <= MAX_Z_BOUNDARY),
            "{c:?}"
        );
    }
    // The first O'Brien–Fleming look at t = 1/60 would need c > 8: reported as 8.
    let c = boundaries(OBF, 0.05, &equal(60)).expect("valid");
    assert_eq!(c[0], MAX_Z_BOUNDARY);
}

#[test]
fn bad_input_is_an_error() {
    let invalid = |r: Result<Vec<f64>, StatsError>| {
        matches!(
            r,
            Err(StatsError::InvalidParameter { .. } | StatsError::TooFewSamples { .. })
        )
    };
    assert!(invalid(boundaries(OBF, 0.05, &[])));
    assert!(invalid(boundaries(OBF, 0.05, &[0.0, 1.0])));
    assert!(invalid(boundaries(OBF, 0.05, &[-0.2, 1.0])));
    assert!(invalid(boundaries(OBF, 0.05, &[0.5, 1.2])));
    assert!(invalid(boundaries(OBF, 0.05, &[0.5, f64::NAN])));
    assert!(invalid(boundaries(OBF, 0.05, &[0.5, 0.4])));
    assert!(invalid(boundaries(OBF, 0.05, &[0.5, 0.5])));
    assert!(invalid(boundaries(POCOCK, 0.0, &[0.5, 1.0])));
    assert!(invalid(boundaries(POCOCK, 1.0, &[0.5, 1.0])));
    assert!(invalid(boundaries(POCOCK, -0.05, &[0.5, 1.0])));
    assert!(invalid(boundaries(POCOCK, f64::NAN, &[0.5, 1.0])));
    assert!(exit_probabilities(&[0.5, 1.0], &[2.0], 0.0).is_err());
    assert!(exit_probabilities(&[0.5, 1.0], &[2.0, -1.0], 0.0).is_err());
    assert!(exit_probabilities(&[0.5, 1.0], &[2.0, 2.0], f64::INFINITY).is_err());
    assert!(SequentialDesign::new(OBF, 0.05, 2).is_err());
    assert!(SequentialDesign::new(OBF, 1.5, 30).is_err());
    assert!(repeated_ci(0.0, -1.0, 5.0, 2.0, 0.95).is_err());
    assert!(repeated_ci(0.0, 1.0, 5.0, 0.0, 0.95).is_err());
    assert!(t_boundary(2.0, 0.0).is_err());
}
