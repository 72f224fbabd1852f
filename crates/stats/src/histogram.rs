//! Summaries over HDR histograms (hdrhistogram 7): percentiles by the same Hyndman–Fan type 7
//! rule as exact values, means, merging, and the precision these carry.
//!
//! Method: an HDR histogram with `d` significant digits keeps values in buckets whose width is
//! at most `v / 2^⌈log₂(2·10^d)⌉−1` (≤ `v·10⁻ᵈ`). Each recorded value is replaced by its
//! bucket's midpoint (`lowest_equivalent + range/2`, HdrHistogram's "median equivalent"), and
//! the type-7 rule of `crate::percentile` is applied to that multiset by rank. Every order
//! statistic is then off by at most half a bucket, and the interpolated percentile by at most
//! [`relative_error_bound`]`(d)` times the exact one (≤ `0.5·10⁻ᵈ`; 1/2048 for d = 3).
//! Values below `2^⌈log₂(2·10^d)⌉` (2048 for d = 3) are stored exactly.
//! Reference: G. Tene, HdrHistogram (hdrhistogram.org); Hyndman & Fan (1996).

use hdrhistogram::Histogram;

use crate::error::StatsError;
use crate::order_stat::{REPORTABLE_CONFIDENCE, min_requests_for_quantile};
use crate::percentile::type7_by_rank;
use crate::summary::{QuantileValue, Summary};

/// Significant digits servebench records with unless told otherwise.
pub const DEFAULT_SIGFIG: u8 = 3;

/// An empty auto-resizing histogram of `u64` values (`1 ≤ sigfig ≤ 5`), lowest discernible
/// value 1. Record integer units (e.g. microseconds) with `Histogram::record`.
pub fn new_histogram(sigfig: u8) -> Result<Histogram<u64>, StatsError> {
    let mut h = Histogram::<u64>::new(sigfig).map_err(|e| StatsError::Histogram(e.to_string()))?;
    h.auto(true);
    Ok(h)
}

/// A histogram holding every value of `values` once.
pub fn histogram_from_values(values: &[u64], sigfig: u8) -> Result<Histogram<u64>, StatsError> {
    let mut h = new_histogram(sigfig)?;
    for &v in values {
        h.record(v)
            .map_err(|e| StatsError::Histogram(format!("cannot record {v}: {e:?}")))?;
    }
    Ok(h)
}

/// Worst relative error of [`histogram_percentile`] and [`histogram_mean`] against the same
/// statistic of the exact values, for a histogram with `sigfig` significant digits: half a
/// bucket relative to its lowest value, `1 / 2^⌈log₂(2·10^sigfig)⌉` (≤ `0.5·10^−sigfig`).
/// Holds for histograms whose lowest discernible value is 1 (as [`new_histogram`] makes them)
/// recording integers; a coarser lowest discernible value `L` adds up to `L/2` absolute error.
pub fn relative_error_bound(sigfig: u8) -> f64 {
    let largest_single_unit = 2.0 * 10f64.powi(i32::from(sigfig));
    let sub_bucket_count = largest_single_unit.log2().ceil().exp2();
    1.0 / sub_bucket_count
}

/// The value a histogram reports for everything recorded in `value`'s bucket: the bucket
/// midpoint `lowest_equivalent + ⌊range/2⌋` (exact for buckets of width 1).
pub fn representative(h: &Histogram<u64>, value: u64) -> u64 {
    h.lowest_equivalent(value)
        .saturating_add(h.equivalent_range(value) >> 1)
}

/// Order statistics by rank (0-based): a cumulative-count table searched by bisection.
struct RankReader {
    buckets: Vec<(u64, u64)>, // (representative value, cumulative count)
}

impl RankReader {
    fn new(h: &Histogram<u64>) -> Self {
        let mut cum = 0u64;
        let buckets = h
            .iter_recorded()
            .map(|v| {
                cum += v.count_at_value();
                (representative(h, v.value_iterated_to()), cum)
            })
            .collect();
        RankReader { buckets }
    }

    fn at(&self, rank: u64) -> f64 {
        // The first bucket whose cumulative count exceeds `rank`.
        let i = self.buckets.partition_point(|&(_, cum)| cum <= rank);
        let i = i.min(self.buckets.len().saturating_sub(1));
        self.buckets.get(i).map_or(f64::NAN, |&(v, _)| v as f64)
    }
}

/// The `q`-quantile of a histogram by Hyndman–Fan type 7 over bucket representatives (module
/// docs). Within [`relative_error_bound`] of `percentile_sorted` on the exact values.
/// `None` when the histogram is empty or `q` is outside `[0, 1]`.
pub fn histogram_percentile(h: &Histogram<u64>, q: f64) -> Option<f64> {
    if h.is_empty() {
        return None;
    }
    let reader = RankReader::new(h);
    type7_by_rank(h.len(), q, |k| reader.at(k))
}

/// Several quantiles of one histogram (one pass to build the rank table).
pub fn histogram_percentiles(h: &Histogram<u64>, qs: &[f64]) -> Option<Vec<f64>> {
    if h.is_empty() {
        return None;
    }
    let reader = RankReader::new(h);
    qs.iter()
        .map(|&q| type7_by_rank(h.len(), q, |k| reader.at(k)))
        .collect()
}

/// Mean over bucket representatives, `Σ rep·count / N`. `None` when empty.
pub fn histogram_mean(h: &Histogram<u64>) -> Option<f64> {
    if h.is_empty() {
        return None;
    }
    let n = h.len() as f64;
    Some(
        h.iter_recorded()
            .map(|v| representative(h, v.value_iterated_to()) as f64 * v.count_at_value() as f64)
            .sum::<f64>()
            / n,
    )
}

/// Summarise one trial recorded in a histogram, like `summary::summarize` for exact values:
/// count, mean and sample SD over bucket midpoints, min and max (bucket midpoints of the
/// extremes), and the quantiles `qs` by type 7, each marked `reportable` by the same
/// minimum-count rule. Statistics are within [`relative_error_bound`] of the exact ones.
pub fn summarize_histogram(h: &Histogram<u64>, qs: &[f64]) -> Result<Summary, StatsError> {
    if h.is_empty() {
        return Err(StatsError::TooFewSamples {
            what: "histogram summary",
            n: 0,
            required: 1,
        });
    }
    let reader = RankReader::new(h);
    let n = h.len();
    let mean = histogram_mean(h).unwrap_or(f64::NAN);
    let ss: f64 = h
        .iter_recorded()
        .map(|v| {
            let d = representative(h, v.value_iterated_to()) as f64 - mean;
            d * d * v.count_at_value() as f64
        })
        .sum();
    let std_dev = if n > 1 {
        (ss / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let mut quantiles = Vec::with_capacity(qs.len());
    for &q in qs {
        let value = type7_by_rank(n, q, |k| reader.at(k)).ok_or(StatsError::InvalidParameter {
            name: "q",
            value: q,
            why: "a quantile must lie in [0, 1]",
        })?;
        let reportable = min_requests_for_quantile(q, REPORTABLE_CONFIDENCE)
            .map(|need| n >= need)
            .unwrap_or(true);
        quantiles.push(QuantileValue {
            q,
            value,
            reportable,
        });
    }
    Ok(Summary {
        count: n,
        mean,
        std_dev,
        min: reader.at(0),
        max: reader.at(n - 1),
        quantiles,
    })
}

/// Merge histograms into one (the union of their recorded values). All must share the same
/// significant digits, otherwise merging would claim a precision one of them lacks.
/// Method: HdrHistogram `add` (bucket-wise count sums).
pub fn merge_histograms<'a, I>(histograms: I) -> Result<Histogram<u64>, StatsError>
where
    I: IntoIterator<Item = &'a Histogram<u64>>,
{
    let mut iter = histograms.into_iter();
    let first = iter
        .next()
        .ok_or_else(|| StatsError::Histogram("nothing to merge".into()))?;
    let mut merged = new_histogram(first.sigfig())?;
    add_into(&mut merged, first)?;
    for h in iter {
        add_into(&mut merged, h)?;
    }
    Ok(merged)
}

/// `target += source`, checking precision. Used by merging and the cluster bootstrap.
pub(crate) fn add_into(
    target: &mut Histogram<u64>,
    source: &Histogram<u64>,
) -> Result<(), StatsError> {
    if target.sigfig() != source.sigfig() {
        return Err(StatsError::Histogram(format!(
            "cannot merge histograms of {} and {} significant digits",
            target.sigfig(),
            source.sigfig()
        )));
    }
    target
        .add(source)
        .map_err(|e| StatsError::Histogram(format!("merge failed: {e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::percentile::percentile_sorted;

    #[test]
    fn small_values_are_exact() {
        let values: Vec<u64> = vec![1, 2, 3, 4, 10];
        let h = histogram_from_values(&values, 3).expect("valid");
        let exact: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        for q in [0.0, 0.25, 0.5, 0.9, 1.0] {
            assert_eq!(histogram_percentile(&h, q), percentile_sorted(&exact, q));
        }
        assert_eq!(histogram_mean(&h), Some(4.0));
    }

    #[test]
    fn large_values_within_stated_bound() {
        let values: Vec<u64> = (0..1000u64).map(|i| 1_000_000 + i * 7919).collect();
        let h = histogram_from_values(&values, 3).expect("valid");
        let exact: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        let bound = relative_error_bound(3);
        assert!((bound - 1.0 / 2048.0).abs() < 1e-18);
        for q in [0.01, 0.5, 0.9, 0.99] {
            let e = percentile_sorted(&exact, q).expect("non-empty");
            let a = histogram_percentile(&h, q).expect("non-empty");
            assert!((a - e).abs() <= bound * e, "q={q}: {a} vs {e}");
        }
    }

    #[test]
    fn summary_matches_exact_summary_for_small_integers() {
        let values: Vec<u64> = (1..=500).map(|i| (i * 37) % 1000 + 1).collect();
        let h = histogram_from_values(&values, 3).expect("valid");
        let exact: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        let qs = [0.5, 0.9, 0.99];
        let a = summarize_histogram(&h, &qs).expect("valid");
        let b = crate::summary::summarize(&exact, &qs).expect("valid");
        assert_eq!(a.count, b.count);
        assert_eq!((a.min, a.max), (b.min, b.max));
        assert!((a.mean - b.mean).abs() < 1e-9);
        assert!((a.std_dev - b.std_dev).abs() < 1e-9);
        assert_eq!(a.quantiles, b.quantiles);
        assert!(
            a.quantiles[2].reportable,
            "500 requests support a p99 (459 needed)"
        );
        assert!(summarize_histogram(&new_histogram(3).expect("valid"), &qs).is_err());
    }

    #[test]
    fn merge_refuses_mixed_precision() {
        let a = histogram_from_values(&[1, 2], 2).expect("valid");
        let b = histogram_from_values(&[1, 2], 3).expect("valid");
        assert!(merge_histograms([&a, &b]).is_err());
        assert!(merge_histograms(std::iter::empty()).is_err());
    }
}
