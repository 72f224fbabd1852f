//! Reference values from `bench/levels-reference.py` (numpy 2 / scipy, run with
//! `/tmp/v/bin/python bench/levels-reference.py`; the design where every start measures all
//! of its arm's points is computed there from the starts' sums, independently of the
//! residual sandwich here).

use super::*;

const ARMS: usize = 2;
const POINTS: usize = 3;

fn places() -> Vec<CellPlace> {
    (0..ARMS)
        .flat_map(|arm| (0..POINTS).map(move |point| CellPlace { arm, point }))
        .collect()
}

/// The same values as the reference script's `value`.
fn data(
    shift: impl Fn(usize, usize) -> f64,
    drop: Option<(usize, usize, usize, usize)>,
) -> Vec<LevelObs> {
    let mut out = Vec::new();
    for r in 0..2usize {
        for a in 0..ARMS {
            for k in 0..[4, 5][r] {
                for p in 0..POINTS {
                    if drop == Some((r, a, k, p)) {
                        continue;
                    }
                    let (rf, af, kf, pf) = (r as f64, a as f64, k as f64, p as f64);
                    let base = 100.0 * (1.0 + af) * (1.0 + pf);
                    let start = (0.05 * (1.3 * kf + 0.7 * af + 2.1 * rf).sin()).exp();
                    let noise = (0.02 * (2.9 * kf + 1.7 * pf + 0.3 * af + rf).cos()).exp();
                    out.push(LevelObs {
                        new_run: r == 1,
                        start: a * 100 + k,
                        cell: a * POINTS + p,
                        value: base * shift(a, p).powi(r as i32) * start * noise,
                    });
                }
            }
        }
    }
    out
}

fn settings() -> LevelSettings {
    LevelSettings {
        alpha: 0.05,
        threshold: 0.05,
    }
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-12), "{a} vs {b}");
}

fn departure(l: &Levels, s: Scope) -> Departure {
    *l.departures.iter().find(|d| d.scope == s).expect("tested")
}

#[test]
fn a_uniform_shift_is_one_common_effect() {
    let l = levels(&data(|_, _| 0.8, None), &places(), &settings()).expect("levels");
    close(l.common.point, 0.795307221307);
    close(l.common.ci.lower, 0.763460954050);
    close(l.common.ci.upper, 0.828481892764);
    close(l.common.std_err, 0.018875993753);
    close(l.df, 12.732102627858);
    close(l.common_p, 2.289201859167e-08);
    let a0 = departure(&l, Scope::Arm(0));
    close(a0.departure.point, 0.997851373854);
    close(a0.departure.ci.lower, 0.957894687076);
    close(a0.p_value, 9.110539230744e-01);
    let c3 = departure(&l, Scope::Cell(3));
    close(c3.departure.ci.upper, 1.060962141678);
    close(c3.p_value, 8.629238874604e-01);
    assert_eq!(l.shape, Shape::Uniform);
    assert_eq!(l.departures.len(), 2 + 3 + 6);
    assert_eq!(l.starts, [8, 10]);
    // Each cell relative to the common level: within ±5% at every cell but its interval is
    // wider than ±5% (5–6% half-widths): inconclusive, not reproduced.
    assert!(
        l.cells
            .iter()
            .all(|c| c.outcome != Reproduction::NotReproduced)
    );
}

#[test]
fn one_arm_moved_apart_is_named() {
    let l = levels(
        &data(|a, _| if a == 1 { 0.7 } else { 0.8 }, None),
        &places(),
        &settings(),
    )
    .expect("levels");
    close(l.common.point, 0.743941784839);
    close(l.common_p, 1.068259061577e-09);
    let a1 = departure(&l, Scope::Arm(1));
    close(a1.departure.point, 0.937428530143);
    close(a1.departure.ci.lower, 0.899891338595);
    close(a1.departure.ci.upper, 0.976531511568);
    close(a1.p_value, 4.663217136552e-03);
    close(a1.holm_p, 2.797930281931e-02);
    assert!(a1.significant);
    let c0 = departure(&l, Scope::Cell(0));
    close(c0.holm_p, 1.375154316907e-01);
    assert!(!c0.significant);
    assert!(!departure(&l, Scope::Point(0)).significant);
    assert_eq!(l.shape, Shape::NotUniform);
    // arm 1's own change is the mean of its cells' changes
    assert!((a1.own / l.common.point - a1.departure.point).abs() < 1e-12);
}

#[test]
fn an_unbalanced_design_uses_the_sandwich() {
    let l = levels(
        &data(|_, _| 0.8, Some((1, 0, 2, 1))),
        &places(),
        &settings(),
    )
    .expect("levels");
    close(l.common.point, 0.797358689841);
    close(l.common.ci.lower, 0.766339083524);
    close(l.common.std_err, 0.018213978598);
    close(l.df, 12.013545988518);
    let p1 = departure(&l, Scope::Point(1));
    close(p1.departure.point, 1.005137228970);
    close(p1.departure.ci.upper, 1.018352091503);
    close(p1.p_value, 3.935297933488e-01);
    let c1 = departure(&l, Scope::Cell(1));
    close(c1.departure.ci.lower, 0.969546776164);
}

#[test]
fn no_shift_and_too_few_trials() {
    let l = levels(&data(|_, _| 1.0, None), &places(), &settings()).expect("levels");
    assert_eq!(l.shape, Shape::None, "{:?}", l.common);
    // one trial per cell in a run: nothing to compare
    let one: Vec<LevelObs> = data(|_, _| 1.0, None)
        .into_iter()
        .filter(|o| o.start % 100 == 0)
        .collect();
    assert!(matches!(
        levels(&one, &places(), &settings()),
        Err(StatsError::TooFewSamples { .. })
    ));
    let mut bad = data(|_, _| 1.0, None);
    bad[3].value = 0.0;
    assert!(matches!(
        levels(&bad, &places(), &settings()),
        Err(StatsError::InvalidValue { index: 3, .. })
    ));
}

#[test]
fn one_start_per_variant_says_starts_are_too_few_not_trials() {
    // every trial of an arm in one start, as `server_restart: once` runs them
    let once: Vec<LevelObs> = data(|_, _| 1.0, None)
        .into_iter()
        .map(|o| LevelObs {
            start: o.start / 100,
            ..o
        })
        .collect();
    match levels(&once, &places(), &settings()) {
        Err(StatsError::TooFewSamples { what, n, required }) => {
            assert!(what.contains("server starts"), "{what}");
            assert_eq!((n, required), (1, 2));
        }
        other => panic!("expected too few starts, got {other:?}"),
    }
}
