//! Cluster (trial-level) bootstrap interval for a percentile across trials.
//!
//! Method: requests within a trial are correlated, so the resampling unit is the whole trial.
//! Each of `B` replicates draws `n` trials with replacement, merges their histograms, and reads
//! the `q`-quantile (Hyndman–Fan type 7 over bucket representatives,
//! `histogram::histogram_percentile`). The point estimate is the quantile of all trials
//! merged; the interval is the percentile interval of the replicates (type 7 at α/2 and
//! 1 − α/2); `std_err` is the replicates' standard deviation. The generator is ChaCha8
//! seeded with `seed` (`rand_chacha`, portable across platforms), so a seed reproduces the
//! interval; trial indices come from `rand`'s uniform integer sampler.
//! Reference: Davison & Hinkley, *Bootstrap Methods and their Application* (1997) §3.8
//! ("two-stage"/cluster resampling, resampling clusters only); Field & Welsh, "Bootstrapping
//! clustered data", JRSS B 69(3), 2007; Efron & Tibshirani (1993) ch. 13 (percentile interval).

use hdrhistogram::Histogram;
use rand::{Rng as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;

use crate::error::{StatsError, check_len, check_probability};
use crate::estimate::{ConfidenceInterval, Estimate};
use crate::histogram::{add_into, histogram_percentile, merge_histograms, new_histogram};
use crate::percentile::percentile_sorted;
use crate::summary::mean_var;

/// docs/statistics-method.md: "B ≥ 2000".
pub const MIN_RESAMPLES: usize = 2000;

/// Settings of a cluster bootstrap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootstrapSettings {
    /// Number of replicates `B` (at least [`MIN_RESAMPLES`]).
    pub resamples: usize,
    /// Confidence level `1 − α`.
    pub level: f64,
    /// Seed of the ChaCha8 generator.
    pub seed: u64,
}

impl Default for BootstrapSettings {
    fn default() -> Self {
        BootstrapSettings {
            resamples: MIN_RESAMPLES,
            level: 0.95,
            seed: 0,
        }
    }
}

/// Cluster bootstrap of the `q`-quantile across trials (module docs). `trials` holds one
/// histogram per trial, all with the same significant digits; at least 3 trials (no interval
/// below 3, as for t intervals), none empty. Errors when `resamples < 2000`.
pub fn cluster_bootstrap_percentile(
    trials: &[Histogram<u64>],
    q: f64,
    settings: &BootstrapSettings,
) -> Result<Estimate, StatsError> {
    check_len("cluster bootstrap", trials.len(), 3)?;
    check_probability("level", settings.level)?;
    if !(q.is_finite() && (0.0..=1.0).contains(&q)) {
        return Err(StatsError::InvalidParameter {
            name: "q",
            value: q,
            why: "a quantile must lie in [0, 1]",
        });
    }
    if settings.resamples < MIN_RESAMPLES {
        return Err(StatsError::InvalidParameter {
            name: "resamples",
            value: settings.resamples as f64,
            why: "docs/statistics-method.md asks for B ≥ 2000",
        });
    }
    if let Some(i) = trials.iter().position(|h| h.is_empty()) {
        return Err(StatsError::Histogram(format!(
            "trial {i} has an empty histogram"
        )));
    }
    let all = merge_histograms(trials)?;
    let point = histogram_percentile(&all, q)
        .ok_or_else(|| StatsError::Histogram("merged histogram is empty".into()))?;

    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    let mut scratch = new_histogram(all.sigfig())?;
    let mut replicates = Vec::with_capacity(settings.resamples);
    for _ in 0..settings.resamples {
        scratch.reset();
        for _ in 0..trials.len() {
            let i = rng.random_range(0..trials.len());
            add_into(&mut scratch, &trials[i])?;
        }
        let value = histogram_percentile(&scratch, q)
            .ok_or_else(|| StatsError::Histogram("empty replicate".into()))?;
        replicates.push(value);
    }
    replicates.sort_by(f64::total_cmp);
    let alpha = 1.0 - settings.level;
    let lower = percentile_sorted(&replicates, alpha / 2.0);
    let upper = percentile_sorted(&replicates, 1.0 - alpha / 2.0);
    let std_err = mean_var(&replicates).map(|(_, v)| v.sqrt());
    match (lower, upper, std_err) {
        (Some(lower), Some(upper), Some(std_err)) => Ok(Estimate {
            point,
            ci: ConfidenceInterval {
                level: settings.level,
                lower,
                upper,
            },
            std_err,
        }),
        _ => Err(StatsError::TooFewSamples {
            what: "cluster bootstrap replicates",
            n: replicates.len(),
            required: MIN_RESAMPLES,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::histogram_from_values;

    fn trials() -> Vec<Histogram<u64>> {
        (0..5u64)
            .map(|t| {
                let v: Vec<u64> = (1..=200u64).map(|i| i * (10 + t)).collect();
                histogram_from_values(&v, 3).expect("valid")
            })
            .collect()
    }

    #[test]
    fn seeded_and_reproducible() {
        let s = BootstrapSettings::default();
        let a = cluster_bootstrap_percentile(&trials(), 0.99, &s).expect("valid");
        let b = cluster_bootstrap_percentile(&trials(), 0.99, &s).expect("valid");
        assert_eq!(a, b);
        let c = cluster_bootstrap_percentile(&trials(), 0.99, &BootstrapSettings { seed: 7, ..s })
            .expect("valid");
        // Another seed draws other replicates (the bounds may coincide: few trials).
        assert_ne!(a.std_err, c.std_err);
        assert!(a.ci.lower < a.ci.upper);
        assert!(a.std_err > 0.0);
    }

    #[test]
    fn refuses_small_b_and_few_trials() {
        let s = BootstrapSettings {
            resamples: 100,
            ..BootstrapSettings::default()
        };
        assert!(cluster_bootstrap_percentile(&trials(), 0.5, &s).is_err());
        let two = &trials()[..2];
        assert!(cluster_bootstrap_percentile(two, 0.5, &BootstrapSettings::default()).is_err());
    }
}
