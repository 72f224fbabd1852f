//! Unit tests of the capacity search procedure: the dithered grid, brackets, trial counts.

use super::*;

fn search(axis: SearchAxis, lower: f64, upper: f64, precision: Precision) -> Search {
    Search {
        axis,
        lower,
        upper,
        attainment: 0.99,
        precision,
        min_rounds: 3,
        max_rounds: 10,
        max_trials: None,
    }
}

/// Runs a start's search against a monotone truth: loads at index ≤ `boundary` pass.
fn run(len: usize, start: Option<usize>, boundary: i64) -> (Bracket, usize) {
    let mut outcomes = Vec::new();
    loop {
        match next_step(len, start, &outcomes) {
            Next::Done(b) => return (b, outcomes.len()),
            Next::Measure { index, .. } => {
                assert!(
                    !outcomes.iter().any(|o: &(usize, bool)| o.0 == index),
                    "measured {index} twice"
                );
                outcomes.push((index, index as i64 <= boundary));
            }
        }
    }
}

#[test]
fn every_start_brackets_the_truth_within_the_worst_case() {
    for len in 2..=70 {
        let cold = worst_case_trials(len, false) as usize;
        let warm = worst_case_trials(len, true) as usize;
        for boundary in -1..len as i64 {
            let expect = if boundary < 0 {
                Bracket::BelowLower
            } else if boundary as usize == len - 1 {
                Bracket::AboveUpper
            } else {
                Bracket::Between {
                    pass: boundary as usize,
                    fail: boundary as usize + 1,
                }
            };
            let (b, n) = run(len, None, boundary);
            assert_eq!(b, expect, "cold len {len} boundary {boundary}");
            assert!(
                n <= cold,
                "cold len {len} boundary {boundary}: {n} > {cold}"
            );
            for s in 0..len {
                let (b, n) = run(len, Some(s), boundary);
                assert_eq!(b, expect, "warm len {len} start {s} boundary {boundary}");
                assert!(n <= warm, "warm len {len} s {s} b {boundary}: {n} > {warm}");
            }
        }
    }
}

#[test]
fn a_start_next_to_the_truth_takes_two_trials() {
    let len = 60;
    assert_eq!(run(len, Some(30), 30).1, 2);
    assert_eq!(run(len, Some(31), 30).1, 2);
    assert_eq!(worst_case_trials(60, false), 6);
}

#[test]
fn the_grid_is_geometric_dithered_and_bounded() {
    let q = search(
        SearchAxis::RequestRate,
        2.0,
        64.0,
        Precision::Relative(0.05),
    );
    for offset in [0.0, 0.3, 0.9] {
        let g = Grid::new(&q, offset);
        assert_eq!(g.loads.first(), Some(&2.0));
        assert_eq!(g.loads.last(), Some(&64.0));
        assert!(g.loads.windows(2).all(|w| w[1] > w[0]));
        assert!(
            g.loads.len() <= max_grid_len(&q),
            "{} > {}",
            g.loads.len(),
            max_grid_len(&q)
        );
        // interior steps are 5% (to the 4 digits loads are rounded to)
        for w in g.loads[1..g.loads.len() - 1].windows(2) {
            assert!((w[1] / w[0] - 1.05).abs() < 2e-3, "{w:?}");
        }
        let first = g.loads[1];
        assert!((first / 2.0 - 1.05f64.powf(1.0 - offset)).abs() < 2e-3);
    }
}

#[test]
fn the_concurrency_grid_is_whole_numbers() {
    let q = search(
        SearchAxis::MaxConcurrency,
        1.0,
        10.0,
        Precision::Absolute(1.0),
    );
    assert_eq!(
        Grid::new(&q, 0.7).loads,
        (1..=10).map(f64::from).collect::<Vec<_>>()
    );
    let q = search(
        SearchAxis::MaxConcurrency,
        1.0,
        10.0,
        Precision::Absolute(3.0),
    );
    assert_eq!(Grid::new(&q, 0.0).loads, vec![1.0, 4.0, 7.0, 10.0]);
    assert_eq!(Grid::new(&q, 0.5).loads, vec![1.0, 3.0, 6.0, 9.0, 10.0]);
    let g = Grid::new(&q, 0.5);
    // capacity in 3..=5 when 3 passes and 6 fails: the estimate is 4
    assert_eq!(g.estimate(Bracket::Between { pass: 1, fail: 2 }), Some(4.0));
}

#[test]
fn the_dithered_midpoint_is_unbiased() {
    // For a fixed capacity, the midpoint of the bracket averaged over offsets is the
    // capacity (on the log scale): subtractive dither.
    let q = search(
        SearchAxis::RequestRate,
        1.0,
        100.0,
        Precision::Relative(0.10),
    );
    for c in [7.3f64, 12.0, 41.7] {
        let n = 4000;
        let mut sum = 0.0;
        for i in 0..n {
            let g = Grid::new(&q, (i as f64 + 0.5) / n as f64);
            let pass = g.loads.iter().rposition(|x| *x <= c).expect("some pass");
            let est = g
                .estimate_on_scale(Bracket::Between {
                    pass,
                    fail: pass + 1,
                })
                .expect("between");
            sum += est;
        }
        let mean = sum / n as f64;
        assert!(
            (mean - c.ln()).abs() < 2e-3,
            "c {c}: {} vs {}",
            mean.exp(),
            c
        );
    }
}

#[test]
fn offsets_differ_by_round_and_lie_in_the_unit_interval() {
    let a = round_offset(1, 1);
    let b = round_offset(1, 2);
    assert_ne!(a, b);
    for r in 1..100 {
        let o = round_offset(7, r);
        assert!((0.0..1.0).contains(&o));
    }
}

#[test]
fn loads_are_printed_at_the_grid_s_precision() {
    let c = search(
        SearchAxis::MaxConcurrency,
        1.0,
        64.0,
        Precision::Absolute(1.0),
    );
    assert_eq!(load_text(&c, 12.333_333), "12.3");
    assert_eq!(load_text(&c, 7.0), "7.0");
    let r = search(
        SearchAxis::RequestRate,
        1.0,
        64.0,
        Precision::Relative(0.05),
    );
    assert_eq!(load_text(&r, 20.03), "20.0");
    assert_eq!(load_text(&r, 2.003), "2.00");
    let coarse = search(
        SearchAxis::RequestRate,
        0.0,
        400.0,
        Precision::Absolute(20.0),
    );
    assert_eq!(load_text(&coarse, 123.456), "123");
}
