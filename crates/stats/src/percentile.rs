//! Percentiles by linear interpolation between order statistics.
//!
//! Method: Hyndman & Fan (1996) definition 7, the default of numpy's `percentile`
//! (`method="linear"`) and R's `quantile(type = 7)`. For sorted values `x[0..n]` and a
//! quantile `q` in `[0, 1]`, let `h = (n − 1)·q`; the result is
//! `x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])` (evaluated from the nearer neighbour, as numpy
//! does, so results agree with numpy to the last bit). This is the one percentile implementation of
//! servebench: every crate calls it. Exact values go through [`percentile_sorted`] /
//! [`percentiles`]; HDR histograms go through the same rule ([`type7_by_rank`]) with each
//! recorded value replaced by its bucket's representative (see `crate::histogram`).
//!
//! Reference: R. J. Hyndman and Y. Fan, "Sample quantiles in statistical packages",
//! *The American Statistician* 50(4), 1996.

/// The rule itself, over any ascending sequence of `n` order statistics read by rank
/// (`order_stat(k)` is the `k`-th smallest value, 0-based). Hyndman–Fan type 7.
/// `None` when `n == 0` or `q` is outside `[0, 1]` or not finite.
///
/// Both [`percentile_sorted`] (a slice) and `histogram::histogram_percentile` (counts per
/// bucket) call this, so the interpolation is written once.
pub fn type7_by_rank(n: u64, q: f64, mut order_stat: impl FnMut(u64) -> f64) -> Option<f64> {
    if n == 0 || !q.is_finite() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (n - 1) as f64 * q;
    let lo = (h.floor() as u64).min(n - 1);
    let hi = (lo + 1).min(n - 1);
    let frac = h - lo as f64;
    let x_lo = order_stat(lo);
    if frac == 0.0 || hi == lo {
        return Some(x_lo);
    }
    let x_hi = order_stat(hi);
    // numpy's `_lerp`: interpolate from the nearer end, so the result is exact at both ends
    // and bit-identical to numpy.
    let diff = x_hi - x_lo;
    Some(if frac >= 0.5 {
        x_hi - diff * (1.0 - frac)
    } else {
        x_lo + diff * frac
    })
}

/// The `q`-quantile (`0 ≤ q ≤ 1`) of values already sorted ascending, by linear
/// interpolation (Hyndman–Fan type 7, numpy's default). `None` when `values` is empty or `q`
/// is outside `[0, 1]` or not finite.
pub fn percentile_sorted(values: &[f64], q: f64) -> Option<f64> {
    type7_by_rank(values.len() as u64, q, |k| values[k as usize])
}

/// Several quantiles of unsorted values (Hyndman–Fan type 7, as [`percentile_sorted`]).
/// Sorts a copy with `f64::total_cmp`. `None` when `values` is empty, holds a NaN, or a `q` is
/// outside `[0, 1]`.
pub fn percentiles(values: &[f64], qs: &[f64]) -> Option<Vec<f64>> {
    if values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    qs.iter().map(|q| percentile_sorted(&sorted, *q)).collect()
}

/// The median (type 7 at q = 0.5) of unsorted values; `None` when empty or a NaN is present.
pub fn median(values: &[f64]) -> Option<f64> {
    percentiles(values, &[0.5]).and_then(|v| v.first().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_linear() {
        // numpy.percentile([1, 2, 3, 4, 10], [0, 25, 50, 90, 100]) = [1, 2, 3, 7.6, 10]
        let v = [1.0, 2.0, 3.0, 4.0, 10.0];
        let got: Vec<f64> = [0.0, 0.25, 0.5, 0.9, 1.0]
            .iter()
            .map(|q| percentile_sorted(&v, *q).expect("non-empty"))
            .collect();
        let want = [1.0, 2.0, 3.0, 7.6, 10.0];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{g} vs {w}");
        }
        assert_eq!(percentile_sorted(&[], 0.5), None);
        assert_eq!(percentile_sorted(&v, 1.5), None);
    }

    #[test]
    fn unsorted_and_median() {
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN, 1.0]), None);
        // numpy.quantile([10, 1, 4, 3, 2], 0.9) == 7.6000000000000005 (bit for bit)
        assert_eq!(
            percentiles(&[10.0, 1.0, 4.0, 3.0, 2.0], &[0.9]),
            Some(vec![7.600_000_000_000_000_5])
        );
        assert_eq!(percentile_sorted(&[5.0], 0.99), Some(5.0));
    }
}
