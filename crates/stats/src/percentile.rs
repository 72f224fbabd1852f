//! Percentiles by linear interpolation between order statistics.
//!
//! Method: Hyndman & Fan (1996) definition 7, the default of numpy's `percentile`
//! (`method="linear"`) and R's `quantile(type = 7)`. For sorted values `x[0..n]` and a
//! quantile `q` in `[0, 1]`, let `h = (n − 1)·q`; the result is
//! `x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])`. This is the one percentile implementation of
//! servebench: every crate calls it.

/// The `q`-quantile (`0 ≤ q ≤ 1`) of values already sorted ascending, by linear
/// interpolation (Hyndman–Fan type 7, numpy's default). `None` when `values` is empty or `q`
/// is outside `[0, 1]` or not finite.
pub fn percentile_sorted(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() || !q.is_finite() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (values.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(values.len() - 1);
    let frac = h - lo as f64;
    Some(values[lo] + frac * (values[hi] - values[lo]))
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
}
