//! Unit tests of change-point detection: a step, a flat series, an outlier set aside, the
//! newest run unconfirmed, bad input.

use super::*;

/// Deterministic noise of about 1% SD.
const NOISE: [f64; 12] = [
    0.004, -0.012, 0.009, -0.003, 0.011, -0.008, 0.002, -0.010, 0.007, -0.001, 0.013, -0.006,
];

fn series(n: usize, step_at: usize, step: f64) -> Vec<f64> {
    (0..n)
        .map(|i| NOISE[i % NOISE.len()] + if i >= step_at { step } else { 0.0 })
        .collect()
}

#[test]
fn max_t_finds_the_step() {
    let v = series(20, 12, 0.1);
    let (k, t) = max_t_split(&v, 3, 3).expect("fits");
    assert_eq!(k, 12);
    assert!(t > 10.0);
    assert!(max_t_split(&v[..5], 3, 3).is_none());
}

#[test]
fn a_flat_series_has_no_change_point() {
    let d = detect(&series(24, 99, 0.0), &Settings::default()).expect("valid");
    assert!(d.change_points.is_empty(), "{d:?}");
    assert!(d.outliers.is_empty(), "{d:?}");
}

#[test]
fn a_step_is_confirmed_and_an_outlier_set_aside() {
    let mut v = series(24, 12, 0.1);
    v[5] -= 0.3;
    let d = detect(&v, &Settings::default()).expect("valid");
    assert_eq!(d.outliers.len(), 1, "{d:?}");
    assert_eq!(d.outliers[0].index, 5);
    assert_eq!(d.change_points.len(), 1, "{d:?}");
    let c = &d.change_points[0];
    assert_eq!(
        (c.index, c.status, c.rule),
        (12, Status::Confirmed, Rule::Segmentation)
    );
    assert!(
        !c.before.contains(&5),
        "the outlier is left out of the level"
    );
    assert!(c.shift.ci.contains(0.1));
}

#[test]
fn the_newest_run_alone_is_unconfirmed_two_are_confirmed() {
    let mut v = series(15, 99, 0.0);
    v.push(0.2);
    let d = detect(&v, &Settings::default()).expect("valid");
    assert_eq!(d.change_points.len(), 1, "{d:?}");
    assert_eq!(d.change_points[0].index, 15, "{d:?}");
    assert_eq!(d.change_points[0].status, Status::Unconfirmed);
    assert!(d.outliers.is_empty(), "the newest run is never an outlier");
    v.push(0.21);
    let d = detect(&v, &Settings::default()).expect("valid");
    let c = d.change_points.last().expect("one");
    assert_eq!((c.index, c.status), (15, Status::Confirmed), "{d:?}");
    // Back to the level: run 15 was an outlier.
    v.pop();
    v.push(0.0);
    let d = detect(&v, &Settings::default()).expect("valid");
    assert!(d.change_points.is_empty(), "{d:?}");
    assert_eq!(d.outliers.len(), 1);
    assert_eq!(d.outliers[0].index, 15);
}

#[test]
fn bad_input_is_an_error() {
    assert!(detect(&[1.0, f64::NAN], &Settings::default()).is_err());
    let bad = Settings {
        alpha: 0.0,
        ..Settings::default()
    };
    assert!(detect(&[1.0, 2.0], &bad).is_err());
    assert_eq!(
        detect(&[], &Settings::default()).expect("empty is fine"),
        Detection::default()
    );
}
