//! Property tests of the invariants of the statistics layer: a CI contains its point estimate, merging
//! histograms equals recording all values, verdicts mirror when the arms are swapped. Fixed
//! seed, no failure files: every run draws the same cases.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use servebench_stats::histogram::{
    histogram_from_values, histogram_mean, histogram_percentile, merge_histograms,
    relative_error_bound,
};
use servebench_stats::histogram_codec::{decode_histogram, encode_histogram};
use servebench_stats::holm::holm_adjust;
use servebench_stats::interval::{geometric_mean_ci, mean_ci};
use servebench_stats::order_stat::quantile_ci_sorted;
use servebench_stats::percentile::{percentile_sorted, percentiles};
use servebench_stats::spearman::spearman;
use servebench_stats::verdict::{Direction, Margin, compare_arms, compare_arms_arithmetic};
use servebench_stats::welch::welch_log_ratio;

fn config(cases: u32) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(0x5e5e_be7c),
        failure_persistence: None,
        ..Config::default()
    }
}

/// 3–12 positive per-trial values around `center` with a CV up to ~20%.
fn trials(center: f64) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-0.2f64..0.2, 3..12)
        .prop_map(move |v| v.iter().map(|e| center * e.exp()).collect())
        .prop_filter("some spread", |v: &Vec<f64>| {
            v.iter().any(|x| (x - v[0]).abs() > 1e-9 * v[0])
        })
}

fn direction() -> impl Strategy<Value = Direction> {
    prop_oneof![
        Just(Direction::HigherIsBetter),
        Just(Direction::LowerIsBetter)
    ]
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn t_intervals_contain_their_point(v in trials(100.0), level in 0.5f64..0.999) {
        let m = mean_ci(&v, level).expect("n ≥ 3");
        prop_assert!(m.ci.contains(m.point), "{m:?}");
        let g = geometric_mean_ci(&v, level).expect("n ≥ 3, positive");
        prop_assert!(g.ci.contains(g.point), "{g:?}");
        prop_assert!(g.ci.lower > 0.0);
    }

    #[test]
    fn ratio_ci_contains_ratio(a in trials(100.0), b in trials(120.0), level in 0.5f64..0.999) {
        let r = welch_log_ratio(&a, &b, level).expect("valid");
        prop_assert!(r.ratio.ci.contains(r.ratio.point), "{r:?}");
        prop_assert!(r.log.ci.contains(r.log.diff));
        prop_assert!((0.0..=1.0).contains(&r.log.p));
    }

    #[test]
    fn verdicts_mirror_when_arms_swap(
        a in trials(100.0),
        b in trials(100.0),
        shift in -0.3f64..0.3,
        theta in 0.005f64..0.2,
        dir in direction(),
    ) {
        let b: Vec<f64> = b.iter().map(|x| x * shift.exp()).collect();
        let ab = compare_arms(&a, &b, dir, theta, 0.05).expect("valid");
        let ba = compare_arms(&b, &a, dir, theta, 0.05).expect("valid");
        prop_assert_eq!(ba.verdict, ab.verdict.mirrored());
        prop_assert_eq!(ba.test.p, ab.test.p);
        // Swapping the arms *and* reading the opposite direction gives the same verdict.
        let ba_flipped = compare_arms(&b, &a, dir.flipped(), theta, 0.05).expect("valid");
        prop_assert_eq!(ba_flipped.verdict, ab.verdict);
        prop_assert!(ab.effect.ci.contains(ab.effect.point));
    }

    #[test]
    fn arithmetic_verdicts_mirror_with_an_absolute_margin(
        a in trials(10.0),
        b in trials(10.0),
        shift in -3.0f64..3.0,
        margin in 0.05f64..2.0,
        dir in direction(),
    ) {
        let b: Vec<f64> = b.iter().map(|x| x + shift).collect();
        let m = Margin::Absolute(margin);
        let ab = compare_arms_arithmetic(&a, &b, dir, m, 0.05).expect("valid");
        let ba = compare_arms_arithmetic(&b, &a, dir, m, 0.05).expect("valid");
        prop_assert_eq!(ba.verdict, ab.verdict.mirrored());
        let ba_flipped = compare_arms_arithmetic(&b, &a, dir.flipped(), m, 0.05).expect("valid");
        prop_assert_eq!(ba_flipped.verdict, ab.verdict);
    }

    #[test]
    fn merging_histograms_equals_recording_all_values(
        parts in prop::collection::vec(
            prop::collection::vec(1u64..50_000_000, 1..200), 1..6),
        q in 0.0f64..=1.0,
    ) {
        let hs: Vec<_> = parts
            .iter()
            .map(|p| histogram_from_values(p, 3).expect("valid"))
            .collect();
        let merged = merge_histograms(&hs).expect("same precision");
        let all: Vec<u64> = parts.concat();
        let direct = histogram_from_values(&all, 3).expect("valid");
        prop_assert_eq!(&merged, &direct);
        prop_assert_eq!(histogram_percentile(&merged, q), histogram_percentile(&direct, q));
        prop_assert_eq!(histogram_mean(&merged), histogram_mean(&direct));
    }

    #[test]
    fn histogram_percentiles_are_within_stated_precision(
        values in prop::collection::vec(0u64..10_000_000_000, 1..400),
        q in 0.0f64..=1.0,
        sigfig in 1u8..=4,
    ) {
        let h = histogram_from_values(&values, sigfig).expect("valid");
        let mut exact: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        exact.sort_by(f64::total_cmp);
        let e = percentile_sorted(&exact, q).expect("non-empty");
        let a = histogram_percentile(&h, q).expect("non-empty");
        prop_assert!((a - e).abs() <= relative_error_bound(sigfig) * e + 1e-9,
            "sigfig {}: {} vs {}", sigfig, a, e);
        let em = exact.iter().sum::<f64>() / exact.len() as f64;
        let am = histogram_mean(&h).expect("non-empty");
        prop_assert!((am - em).abs() <= relative_error_bound(sigfig) * em + 1e-6);
    }

    #[test]
    fn histogram_base64_round_trip(values in prop::collection::vec(0u64..u64::MAX / 4, 0..100)) {
        let h = histogram_from_values(&values, 3).expect("valid");
        let back = decode_histogram(&encode_histogram(&h).expect("encodes")).expect("decodes");
        prop_assert_eq!(back, h);
    }

    #[test]
    fn percentiles_are_monotone_and_bounded(
        v in prop::collection::vec(-1e6f64..1e6, 1..60),
        mut qs in prop::collection::vec(0.0f64..=1.0, 1..10),
    ) {
        qs.sort_by(f64::total_cmp);
        let p = percentiles(&v, &qs).expect("valid");
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        for w in p.windows(2) {
            prop_assert!(w[0] <= w[1]);
        }
        prop_assert!(p.iter().all(|x| lo <= *x && *x <= hi));
    }

    #[test]
    fn order_statistic_interval_covers_at_least_its_level(
        n in 50usize..3000,
        q in prop_oneof![Just(0.5), Just(0.9), Just(0.95)],
        level in prop_oneof![Just(0.9), Just(0.95), Just(0.99)],
    ) {
        let v: Vec<f64> = (0..n).map(|k| k as f64).collect();
        if let Ok(ci) = quantile_ci_sorted(&v, q, level) {
            prop_assert!(ci.coverage >= level - 1e-12, "{ci:?}");
            prop_assert!(ci.lower_rank < ci.upper_rank);
            prop_assert!(ci.lower <= ci.upper);
        }
    }

    #[test]
    fn holm_is_at_least_raw_and_at_most_one(p in prop::collection::vec(0.0f64..=1.0, 0..30)) {
        let adj = holm_adjust(&p).expect("valid");
        for (a, r) in adj.iter().zip(&p) {
            prop_assert!(*a >= *r && *a <= 1.0);
        }
    }

    #[test]
    fn spearman_ignores_monotone_transforms(
        x in prop::collection::vec(-100.0f64..100.0, 4..30),
        y in prop::collection::vec(-100.0f64..100.0, 4..30),
    ) {
        let n = x.len().min(y.len());
        let (x, y) = (&x[..n], &y[..n]);
        if let Ok(c) = spearman(x, y) {
            let y3: Vec<f64> = y.iter().map(|v| v * v * v + 5.0 * v).collect();
            let c3 = spearman(x, &y3).expect("same ranks");
            prop_assert!((c.rho - c3.rho).abs() < 1e-12);
            prop_assert!((-1.0..=1.0).contains(&c.rho));
        }
    }
}
