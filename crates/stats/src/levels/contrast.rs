//! Linear contrasts of the cell changes between two runs, with server starts as the unit.
//!
//! Each cell `c` (one variant at one sweep point) has trial values in both runs; on the log
//! scale its change is `d_c = ȳ_new,c − ȳ_pub,c`. A contrast `L = Σ_c λ_c·d_c` is linear in
//! the trial values: `L = Σ_k Σ_p w_kp·y_kp` over starts `k` and the points `p` a start
//! measured, with `w_kp = ±λ_c / n_r,c` (+ for the new run, − for the published one). The
//! values measured in one start are correlated (the start's own speed moves them together),
//! the starts are independent, and the starts of one variant in one run are alike: the
//! variance of `L` is estimated per such group `g` of starts as
//! `V_g = n_g/(n_g − 1) · Σ_{k∈g} (Σ_p w_kp·e_kp)²` with `e_kp = y_kp − ȳ_r,c` (the cluster
//! sandwich with its small-sample factor; for a balanced design it equals the sample
//! variance of the starts' weighted sums over `n_g`), and `V = Σ_g V_g` is read on Student's
//! t with Satterthwaite's degrees of freedom `V² / Σ_g V_g²/(n_g − 1)`.
//! Reference: Liang & Zeger 1986 (cluster-robust variance); Satterthwaite 1946; the values
//! in `super::tests` are computed by `bench/levels-reference.py` with numpy/scipy.

use crate::StatsError;
use crate::distributions::{t_quantile, t_two_sided_p};

/// One trial's value, on its original (positive) scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelObs {
    /// From the re-run (`true`) or the published run (`false`).
    pub new_run: bool,
    /// The server start it was measured in (any id unique within its run).
    pub start: usize,
    /// Its cell, an index into the cells given with the observations.
    pub cell: usize,
    /// The value (> 0).
    pub value: f64,
}

/// A contrast's estimate on the log scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contrast {
    /// `Σ λ_c·d_c` (log scale).
    pub log_estimate: f64,
    /// Its standard error.
    pub std_err: f64,
    /// Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p of "the contrast is 0".
    pub p_value: f64,
    /// The interval's half-width at the level asked (log scale).
    pub half_width: f64,
}

impl Contrast {
    /// The interval on the log scale.
    pub fn log_interval(&self) -> (f64, f64) {
        (
            self.log_estimate - self.half_width,
            self.log_estimate + self.half_width,
        )
    }
}

/// One start: its run (0 published, 1 new), its group of alike starts, and its values as
/// (cell, residual from the cell's log mean).
type Start = (usize, usize, Vec<(usize, f64)>);

/// The trial values arranged by run, cell and start.
#[derive(Debug, Clone)]
pub(crate) struct Arranged {
    /// Per run (0 published, 1 new) and cell: the number of values and their log mean.
    pub(crate) n: [Vec<usize>; 2],
    pub(crate) mean: [Vec<f64>; 2],
    /// Per start: its run, its group and its (cell, residual) values.
    starts: Vec<Start>,
    /// Starts per group.
    group_size: Vec<usize>,
}

impl Arranged {
    /// Arrange `obs` over `cells` cells; `group_of(run, cell)` names the group of starts a
    /// start of that run measuring that cell belongs to (the variant's starts in one run).
    pub(crate) fn new(
        obs: &[LevelObs],
        cells: usize,
        group_of: impl Fn(usize, usize) -> usize,
    ) -> Result<Self, StatsError> {
        let mut n = [vec![0usize; cells], vec![0usize; cells]];
        let mut sum = [vec![0.0; cells], vec![0.0; cells]];
        for (i, o) in obs.iter().enumerate() {
            if !(o.value.is_finite() && o.value > 0.0) || o.cell >= cells {
                return Err(StatsError::InvalidValue {
                    what: "levels",
                    index: i,
                    value: o.value,
                    why: "must be finite and > 0, in a known cell",
                });
            }
            let r = usize::from(o.new_run);
            n[r][o.cell] += 1;
            sum[r][o.cell] += o.value.ln();
        }
        let mean: [Vec<f64>; 2] = [0, 1].map(|r| {
            (0..cells)
                .map(|c| sum[r][c] / n[r][c].max(1) as f64)
                .collect()
        });
        let mut by_start: std::collections::BTreeMap<(usize, usize), Vec<(usize, f64)>> =
            std::collections::BTreeMap::new();
        for o in obs {
            let r = usize::from(o.new_run);
            by_start
                .entry((r, o.start))
                .or_default()
                .push((o.cell, o.value.ln() - mean[r][o.cell]));
        }
        let mut starts = Vec::new();
        let mut group_size: Vec<usize> = Vec::new();
        for ((r, _), values) in by_start {
            let g = group_of(r, values[0].0);
            if group_size.len() <= g {
                group_size.resize(g + 1, 0);
            }
            group_size[g] += 1;
            starts.push((r, g, values));
        }
        Ok(Arranged {
            n,
            mean,
            starts,
            group_size,
        })
    }

    /// The fewest server starts of any group (a variant's starts in one run): the unit of
    /// every contrast, so one start in a group leaves no spread to measure.
    pub(crate) fn fewest_starts(&self) -> usize {
        self.group_size
            .iter()
            .copied()
            .filter(|&k| k > 0)
            .min()
            .unwrap_or(0)
    }

    /// The contrast `Σ λ_c·d_c` with its interval at `level`. `None` when a cell with
    /// `λ_c ≠ 0` lacks values in a run, or a group that carries weight has one start.
    pub(crate) fn contrast(&self, lambda: &[f64], level: f64) -> Option<Contrast> {
        let used = |c: usize| lambda[c] != 0.0;
        if (0..lambda.len()).any(|c| used(c) && (self.n[0][c] == 0 || self.n[1][c] == 0)) {
            return None;
        }
        let estimate: f64 = (0..lambda.len())
            .filter(|&c| used(c))
            .map(|c| lambda[c] * (self.mean[1][c] - self.mean[0][c]))
            .sum();
        let mut v_group = vec![0.0; self.group_size.len()];
        for (r, g, values) in &self.starts {
            let sign = if *r == 1 { 1.0 } else { -1.0 };
            let z: f64 = values
                .iter()
                .map(|&(c, e)| sign * lambda[c] / self.n[*r][c] as f64 * e)
                .sum();
            v_group[*g] += z * z;
        }
        let mut v = 0.0;
        let mut denom = 0.0;
        for (g, &vg) in v_group.iter().enumerate() {
            let k = self.group_size[g];
            if vg == 0.0 {
                continue;
            }
            if k < 2 {
                return None;
            }
            let vg = vg * k as f64 / (k - 1) as f64;
            v += vg;
            denom += vg * vg / (k - 1) as f64;
        }
        if v.is_nan() || v <= 0.0 {
            return None;
        }
        let se = v.sqrt();
        let df = v * v / denom;
        let q = t_quantile(1.0 - (1.0 - level) / 2.0, df).ok()?;
        Some(Contrast {
            log_estimate: estimate,
            std_err: se,
            df,
            p_value: t_two_sided_p(estimate / se, df).ok()?,
            half_width: q * se,
        })
    }
}
