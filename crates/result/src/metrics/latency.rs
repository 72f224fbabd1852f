//! Summary statistics of one latency metric over a trial's requests.
//!
//! Percentiles use `servebench_stats::percentile_sorted` (linear interpolation, numpy's
//! default), the one percentile implementation of servebench, over the exact values.

use serde::{Deserialize, Serialize};
use servebench_stats::percentile_sorted;

/// Count, mean and order statistics of one metric, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyStats {
    /// Values summarised.
    pub count: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

/// The statistics a metric name may end in (`ttft_p50`, `e2e_mean`, …).
pub const STAT_NAMES: [&str; 6] = ["mean", "p50", "p90", "p99", "min", "max"];

impl LatencyStats {
    /// `None` when there is no finite value.
    pub fn from_values(mut values: Vec<f64>) -> Option<Self> {
        values.retain(|v| v.is_finite());
        if values.is_empty() {
            return None;
        }
        values.sort_unstable_by(f64::total_cmp);
        let q = |p: f64| percentile_sorted(&values, p);
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        Some(LatencyStats {
            count: values.len(),
            mean,
            p50: q(0.5)?,
            p90: q(0.9)?,
            p99: q(0.99)?,
            min: values[0],
            max: values[values.len() - 1],
        })
    }

    /// One statistic by name (one of [`STAT_NAMES`]).
    pub fn get(&self, stat: &str) -> Option<f64> {
        Some(match stat {
            "mean" => self.mean,
            "p50" => self.p50,
            "p90" => self.p90,
            "p99" => self.p99,
            "min" => self.min,
            "max" => self.max,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy() {
        // numpy: np.percentile([5, 1, 4, 2, 3, 10], [50, 90, 99]) = [3.5, 7.5, 9.75]
        let s = LatencyStats::from_values(vec![5.0, 1.0, 4.0, 2.0, 3.0, 10.0]).expect("values");
        assert_eq!((s.count, s.min, s.max), (6, 1.0, 10.0));
        assert!((s.mean - 25.0 / 6.0).abs() < 1e-12);
        assert!((s.p50 - 3.5).abs() < 1e-12);
        assert!((s.p90 - 7.5).abs() < 1e-12);
        assert!((s.p99 - 9.75).abs() < 1e-12);
        assert_eq!(s.get("p90"), Some(s.p90));
        assert_eq!(s.get("p95"), None);
        assert!(LatencyStats::from_values(vec![f64::NAN]).is_none());
    }
}
