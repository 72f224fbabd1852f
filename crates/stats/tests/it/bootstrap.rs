//! The cluster bootstrap against an exact enumeration of its resampling distribution.
//!
//! Five trials, each holding 100 copies of one value, so the merged median of any resample is
//! the median of the five resampled trial values (type-7 rank 249.5 of 500 falls inside the
//! third cluster). The bootstrap distribution of that median can then be enumerated exactly
//! over all 5⁵ = 3125 equally likely resamples; the seeded Monte Carlo bootstrap must match
//! it: exact 10%/90% quantiles (the enumeration puts them at v₂ and v₄ with wide margins:
//! P(median ≤ v₁) = 0.058, P(median ≤ v₂) = 0.317) and the SE within 5% (the Monte Carlo
//! error at B = 20000 is ≈ 0.5%). Resampling requests instead of trials, or drawing the wrong
//! number of trials, fails both.

use servebench_stats::bootstrap::{BootstrapSettings, cluster_bootstrap_percentile};
use servebench_stats::histogram::histogram_from_values;
use servebench_stats::percentile::median;

const VALUES: [u64; 5] = [100, 200, 300, 400, 500];

fn exact_bootstrap_medians() -> Vec<f64> {
    let mut out = Vec::with_capacity(3125);
    for code in 0..5usize.pow(5) {
        let mut c = code;
        let mut draw = Vec::with_capacity(5);
        for _ in 0..5 {
            draw.push(VALUES[c % 5] as f64);
            c /= 5;
        }
        out.push(median(&draw).expect("five values"));
    }
    out
}

#[test]
fn cluster_bootstrap_matches_exact_enumeration() {
    let trials: Vec<_> = VALUES
        .iter()
        .map(|&v| histogram_from_values(&vec![v; 100], 3).expect("valid"))
        .collect();
    let settings = BootstrapSettings {
        resamples: 20_000,
        level: 0.8,
        seed: 42,
    };
    let est = cluster_bootstrap_percentile(&trials, 0.5, &settings).expect("valid");
    assert_eq!(est.point, 300.0);
    assert_eq!((est.ci.lower, est.ci.upper), (200.0, 400.0));

    let exact = exact_bootstrap_medians();
    let m = exact.iter().sum::<f64>() / exact.len() as f64;
    let sd = (exact.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / exact.len() as f64).sqrt();
    assert!(
        (est.std_err - sd).abs() <= 0.05 * sd,
        "bootstrap SE {} vs exact {sd}",
        est.std_err
    );
}

#[test]
fn identical_trials_give_a_degenerate_interval() {
    let trials: Vec<_> = (0..4)
        .map(|_| histogram_from_values(&[10, 20, 30, 40, 5000], 3).expect("valid"))
        .collect();
    let est =
        cluster_bootstrap_percentile(&trials, 0.9, &BootstrapSettings::default()).expect("valid");
    assert_eq!(est.ci.lower, est.point);
    assert_eq!(est.ci.upper, est.point);
    assert_eq!(est.std_err, 0.0);
}
