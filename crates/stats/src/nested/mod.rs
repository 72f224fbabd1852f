//! Nested designs: k trials of a cell in each server start (`trials.per_start`), the start
//! the unit of analysis.
//!
//! Model (docs/statistics-method.md, "Nested designs"): on the log scale the j-th trial of
//! start i is `y_ij = μ + b_i + e_ij`, `b_i ~ N(0, σ²_between)` (what a server start draws:
//! its speed, its placement, its caches), `e_ij ~ N(0, σ²_within)` (what differs between two
//! trials of one start). One-way random effects, estimated by the ANOVA (method of moments)
//! estimators, balanced or not (Searle, Casella & McCulloch, *Variance Components*, 1992,
//! §3.5–3.6):
//!
//! * `MSB = Σ k_i (ȳ_i − ȳ)² / (n − 1)` with ȳ the mean of all N trials, `MSW = ΣΣ (y_ij −
//!   ȳ_i)² / (N − n)`;
//! * `σ̂²_within = MSW`, `σ̂²_between = (MSB − MSW)/k₀`, `k₀ = (N − Σ k_i²/N)/(n − 1)` (= k
//!   when balanced). `σ̂²_between` can be negative (sampling error); it is reported as is and
//!   [`Components::between_clamped`] floors it at 0.
//!
//! An arm's estimate is the unweighted mean of its start means `m = Σ ȳ_i / n`, whose
//! variance is `(σ²_between + σ²_within·h)/n`, `h = mean(1/k_i)`. Balanced, that is
//! `MSB/(k·n)` = the sample variance of the start means over n, with n − 1 degrees of freedom:
//! exactly the analysis of the start means as if each were one trial, and at k = 1 exactly
//! today's analysis of trials. Unbalanced, the estimate `(MSB/k₀ + MSW·(h − 1/k₀))/n` gets
//! Satterthwaite's degrees of freedom (Satterthwaite, Biometrics Bull. 2(6), 1946).

use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_finite};
use crate::summary::mean_var;

pub mod allocation;
pub mod simulate;

/// The one-way random-effects ANOVA of one arm: starts as groups, trials within.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Components {
    /// Starts (groups) n.
    pub starts: usize,
    /// Trials N in all.
    pub trials: usize,
    /// Every start has the same number of trials.
    pub balanced: bool,
    /// Mean of all N values ȳ.
    pub grand_mean: f64,
    /// Unweighted mean of the start means (the arm's estimate).
    pub mean_of_starts: f64,
    /// Mean square between starts, n − 1 degrees of freedom.
    pub ms_between: f64,
    /// Mean square within starts (`None` when every start has one trial: N − n = 0).
    pub ms_within: Option<f64>,
    /// `k₀ = (N − Σ k_i²/N)/(n − 1)`.
    pub k0: f64,
    /// `h = mean(1/k_i)`.
    pub mean_inverse_k: f64,
    /// `σ̂²_between = (MSB − MSW)/k₀` (may be negative; `None` without MSW).
    pub var_between: Option<f64>,
    /// `σ̂²_within = MSW`.
    pub var_within: Option<f64>,
}

impl Components {
    /// `σ̂²_between` floored at 0.
    pub fn between_clamped(&self) -> Option<f64> {
        self.var_between.map(|v| v.max(0.0))
    }
}

/// The ANOVA of `starts` (each the values of one start, any order): module docs. Needs ≥ 2
/// starts and one value in each; values finite.
pub fn components(starts: &[Vec<f64>]) -> Result<Components, StatsError> {
    let n = starts.len();
    if n < 2 {
        return Err(StatsError::TooFewSamples {
            what: "variance components (starts)",
            n,
            required: 2,
        });
    }
    for s in starts {
        if s.is_empty() {
            return Err(StatsError::TooFewSamples {
                what: "variance components (trials of a start)",
                n: 0,
                required: 1,
            });
        }
        check_finite("variance components", s)?;
    }
    let big_n: usize = starts.iter().map(Vec::len).sum();
    let nf = n as f64;
    let total = big_n as f64;
    let means: Vec<f64> = starts
        .iter()
        .map(|s| s.iter().sum::<f64>() / s.len() as f64)
        .collect();
    let grand_mean = starts.iter().flatten().sum::<f64>() / total;
    let ss_between: f64 = starts
        .iter()
        .zip(&means)
        .map(|(s, m)| s.len() as f64 * (m - grand_mean) * (m - grand_mean))
        .sum();
    let ss_within: f64 = starts
        .iter()
        .zip(&means)
        .map(|(s, m)| s.iter().map(|y| (y - m) * (y - m)).sum::<f64>())
        .sum();
    let ms_between = ss_between / (nf - 1.0);
    let ms_within = (big_n > n).then(|| ss_within / (total - nf));
    let sum_k2: f64 = starts.iter().map(|s| (s.len() * s.len()) as f64).sum();
    let k0 = (total - sum_k2 / total) / (nf - 1.0);
    let balanced = starts.iter().all(|s| s.len() == starts[0].len());
    Ok(Components {
        starts: n,
        trials: big_n,
        balanced,
        grand_mean,
        mean_of_starts: means.iter().sum::<f64>() / nf,
        ms_between,
        ms_within,
        k0,
        mean_inverse_k: starts.iter().map(|s| 1.0 / s.len() as f64).sum::<f64>() / nf,
        var_between: ms_within.map(|w| (ms_between - w) / k0),
        var_within: ms_within,
    })
}

/// An arm's estimate from its starts: the mean of the start means, its standard error and
/// degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StartMean {
    /// Unweighted mean of the start means.
    pub mean: f64,
    /// Its standard error.
    pub std_err: f64,
    /// Degrees of freedom: n − 1 balanced, Satterthwaite's otherwise.
    pub df: f64,
    /// How the standard error was found.
    pub method: StartMeanMethod,
}

/// Which estimate of [`StartMean::std_err`] was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StartMeanMethod {
    /// The sample variance of the start means over n (balanced, or unbalanced where the
    /// components' estimate is not positive), n − 1 degrees of freedom.
    StartMeans,
    /// `(MSB/k₀ + MSW·(h − 1/k₀))/n` with Satterthwaite's degrees of freedom (unbalanced).
    Satterthwaite,
}

/// The arm's [`StartMean`] (module docs). Needs ≥ 2 starts.
pub fn start_mean(starts: &[Vec<f64>]) -> Result<StartMean, StatsError> {
    let c = components(starts)?;
    let means: Vec<f64> = starts
        .iter()
        .map(|s| s.iter().sum::<f64>() / s.len() as f64)
        .collect();
    let nf = c.starts as f64;
    let (mean, var) = mean_var(&means).ok_or(StatsError::TooFewSamples {
        what: "start means",
        n: means.len(),
        required: 2,
    })?;
    let plain = StartMean {
        mean,
        std_err: (var / nf).sqrt(),
        df: nf - 1.0,
        method: StartMeanMethod::StartMeans,
    };
    let Some(msw) = c.ms_within.filter(|_| !c.balanced) else {
        return Ok(plain);
    };
    let a = c.ms_between / (c.k0 * nf);
    let b = msw * (c.mean_inverse_k - 1.0 / c.k0) / nf;
    let v = a + b;
    let df_within = (c.trials - c.starts) as f64;
    if v <= 0.0 || !v.is_finite() {
        return Ok(plain);
    }
    Ok(StartMean {
        mean,
        std_err: v.sqrt(),
        df: v * v / (a * a / (nf - 1.0) + b * b / df_within),
        method: StartMeanMethod::Satterthwaite,
    })
}

/// Values grouped by start into one value per start, in the order the starts first appear:
/// `keys[i]` names the start of `values[i]`. Log scale: the geometric mean of the start's
/// values (values must be > 0 for that to mean anything); arithmetic: the mean. A start of
/// one value keeps that value bit for bit, so one trial per start is exactly the analysis of
/// trials.
pub fn start_values<K: PartialEq + Copy>(values: &[f64], keys: &[K], log: bool) -> Vec<f64> {
    let mut order: Vec<K> = Vec::new();
    for k in keys {
        if !order.contains(k) {
            order.push(*k);
        }
    }
    order
        .iter()
        .map(|k| {
            let vs: Vec<f64> = values
                .iter()
                .zip(keys)
                .filter(|(_, kk)| *kk == k)
                .map(|(v, _)| *v)
                .collect();
            if vs.len() == 1 {
                vs[0]
            } else if log {
                (vs.iter().map(|v| v.ln()).sum::<f64>() / vs.len() as f64).exp()
            } else {
                vs.iter().sum::<f64>() / vs.len() as f64
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
