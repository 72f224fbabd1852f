//! Boundaries of a group-sequential design: the recursive numerical integration over the
//! looks (module docs of `sequential`, "Boundaries").

use serde::{Deserialize, Serialize};

use crate::distributions::normal_sf;
use crate::error::{StatsError, check_probability};

use super::{
    GRID_R, MAX_Z_BOUNDARY, SpendingFunction, check_boundary, check_fractions,
    normal_upper_quantile, phi,
};

/// Quadrature nodes and Simpson weights on one look's continuation region.
#[derive(Debug, Default)]
pub(super) struct Grid {
    pub(super) z: Vec<f64>,
    pub(super) w: Vec<f64>,
}

/// J&T's grid around `mean` (ch. 19): `mean + x_i`, `i = 1 … 6r − 1`, with
/// `x_i = −3 − 4 ln(r/i)` (`i < r`), `−3 + 3(i − r)/(2r)` (`r ≤ i ≤ 5r`),
/// `3 + 4 ln(r/(6r − i))` (`i > 5r`); trimmed to `(lo, hi)` with the ends as nodes, then each
/// interval's midpoint added and Simpson's weights `h/6, 4h/6, h/6` summed per node. Empty
/// when the region lies outside the grid (its probability is then below `Φ(−3 − 4 ln r)`).
pub(super) fn grid(mean: f64, lo: f64, hi: f64, r: usize) -> Grid {
    let rf = r as f64;
    let x = |i: usize| -> f64 {
        let fi = i as f64;
        mean + if i < r {
            -3.0 - 4.0 * (rf / fi).ln()
        } else if i <= 5 * r {
            -3.0 + 3.0 * (fi - rf) / (2.0 * rf)
        } else {
            3.0 + 4.0 * (rf / (6.0 * rf - fi)).ln()
        }
    };
    let (first, last) = (x(1), x(6 * r - 1));
    let (lo, hi) = (lo.max(first), hi.min(last));
    if lo >= hi {
        return Grid::default();
    }
    let mut nodes = Vec::with_capacity(6 * r + 1);
    nodes.push(lo);
    nodes.extend((1..6 * r).map(x).filter(|&v| v > lo && v < hi));
    nodes.push(hi);
    let mut g = Grid {
        z: Vec::with_capacity(2 * nodes.len()),
        w: Vec::with_capacity(2 * nodes.len()),
    };
    g.z.push(nodes[0]);
    g.w.push(0.0);
    for pair in nodes.windows(2) {
        let h = pair[1] - pair[0];
        let last_w = g.w.len() - 1;
        g.w[last_w] += h / 6.0;
        g.z.push(0.5 * (pair[0] + pair[1]));
        g.w.push(4.0 * h / 6.0);
        g.z.push(pair[1]);
        g.w.push(h / 6.0);
    }
    g
}

/// The sub-density of `Z_k` on look `k`'s continuation region (no earlier exit), stored as
/// `h(z_i)·w_i` on the grid.
#[derive(Debug)]
struct Stage {
    t: f64,
    z: Vec<f64>,
    hw: Vec<f64>,
}

impl Stage {
    /// Look 1: `Z_1 ~ N(θ√t_1, 1)` on `(−c_1, c_1)`.
    fn first(t: f64, c: f64, drift: f64, r: usize) -> Stage {
        let mean = drift * t.sqrt();
        let g = grid(mean, -c, c, r);
        let hw =
            g.z.iter()
                .zip(&g.w)
                .map(|(z, w)| phi(z - mean) * w)
                .collect();
        Stage { t, z: g.z, hw }
    }

    /// The increment from this look to a look at `t`: `S = Z√t` has independent increments
    /// `N(θΔ, Δ)`, so `Z_k = (y√t_{k−1} + θΔ + √Δ·ε)/√t_k`. Returns, per node, the offset
    /// `y√t_{k−1} + θΔ` and the scale `√Δ` (in `S` units) and `√t`.
    fn step(&self, t: f64, drift: f64) -> (Vec<f64>, f64, f64) {
        let delta = t - self.t;
        let prev = self.t.sqrt();
        let offsets = self.z.iter().map(|y| y * prev + drift * delta).collect();
        (offsets, delta.sqrt(), t.sqrt())
    }

    /// `P(no exit before, Z_k ≥ b)` and `P(no exit before, Z_k ≤ a)` at a look at `t`.
    fn exits(&self, t: f64, drift: f64, a: f64, b: f64) -> Crossing {
        let (offsets, sd, sqrt_t) = self.step(t, drift);
        let (mut upper, mut lower) = (0.0, 0.0);
        for (o, hw) in offsets.iter().zip(&self.hw) {
            upper += hw * normal_sf((b * sqrt_t - o) / sd);
            lower += hw * normal_sf((o - a * sqrt_t) / sd);
        }
        Crossing { upper, lower }
    }

    /// `P(no exit before, |Z_k| ≥ c)` under H0 and its derivative in `c`.
    fn exit_both(&self, offsets: &[f64], sd: f64, sqrt_t: f64, c: f64) -> (f64, f64) {
        let (mut p, mut dp) = (0.0, 0.0);
        let cs = c * sqrt_t;
        for (o, hw) in offsets.iter().zip(&self.hw) {
            let (u, l) = ((cs - o) / sd, (cs + o) / sd);
            p += hw * (normal_sf(u) + normal_sf(l));
            dp -= hw * (phi(u) + phi(l));
        }
        (p, dp * sqrt_t / sd)
    }

    /// The sub-density at look `t` on `(−c, c)`:
    /// `h_k(z) = Σ_j h_{k−1}(y_j) w_j · (√t_k/√Δ) φ((z√t_k − y_j√t_{k−1} − θΔ)/√Δ)`.
    /// Under H0 (`drift = 0`) the grid and the density are symmetric about 0, so only the
    /// lower half is summed and mirrored (half the work; the same values up to rounding).
    fn next(&self, t: f64, c: f64, drift: f64, r: usize) -> Stage {
        let (offsets, sd, sqrt_t) = self.step(t, drift);
        let g = grid(drift * sqrt_t, -c, c, r);
        let scale = sqrt_t / sd;
        let inv_sd = 1.0 / sd;
        let density = |z: f64| -> f64 {
            let s = z * sqrt_t;
            let h: f64 = offsets
                .iter()
                .zip(&self.hw)
                .map(|(o, hw)| hw * phi((s - o) * inv_sd))
                .sum();
            h * scale
        };
        let m = g.z.len();
        let computed = if drift == 0.0 { m.div_ceil(2) } else { m };
        let mut h: Vec<f64> = g.z[..computed].iter().map(|&z| density(z)).collect();
        for i in computed..m {
            h.push(h[m - 1 - i]);
        }
        let hw = h.iter().zip(&g.w).map(|(h, w)| h * w).collect();
        Stage { t, z: g.z, hw }
    }

    /// Solve `P(no exit before, |Z_k| ≥ c) = target` for `c` (H0), by Newton steps kept
    /// inside a bisection bracket. The exit probability falls from `P(no exit before) ≥
    /// 1 − α(t_{k−1}) ≥ target` at `c = 0`; a root above [`MAX_Z_BOUNDARY`] is reported as it.
    fn solve(&self, t: f64, target: f64) -> Result<f64, StatsError> {
        if target <= 0.0 {
            return Ok(MAX_Z_BOUNDARY);
        }
        let (offsets, sd, sqrt_t) = self.step(t, 0.0);
        let f = |c: f64| {
            let (p, dp) = self.exit_both(&offsets, sd, sqrt_t, c);
            (p - target, dp)
        };
        if f(MAX_Z_BOUNDARY).0 >= 0.0 {
            return Ok(MAX_Z_BOUNDARY);
        }
        let (mut lo, mut hi) = (0.0, MAX_Z_BOUNDARY);
        // P(|Z_k| ≥ c) ≥ the exit probability, so the root lies below z_{1−target/2}.
        let mut c = normal_upper_quantile(target / 2.0).clamp(lo, hi);
        for _ in 0..200 {
            let (v, dv) = f(c);
            if v == 0.0 {
                return Ok(c);
            }
            if v > 0.0 {
                lo = c;
            } else {
                hi = c;
            }
            let newton = c - v / dv;
            let next = if dv < 0.0 && newton > lo && newton < hi {
                newton
            } else {
                0.5 * (lo + hi)
            };
            if (next - c).abs() <= 1e-14 * c.max(1.0) || hi - lo <= 1e-14 * hi {
                return Ok(next);
            }
            c = next;
        }
        Err(StatsError::NoSolution {
            what: "group-sequential boundary",
            limit: 200,
        })
    }
}

/// The two-sided critical values `c_1, …, c_K` of a Lan–DeMets design with spending
/// function `spending` and overall two-sided `alpha`, for looks at information `fractions`
/// (strictly increasing, in `(0, 1]`; any spacing; a look at 1 spends all that is left).
/// Look `k` rejects when `|Z_k| ≥ c_k`; the crossing probability under H0 at look `k` is
/// `α(t_k) − α(t_{k−1})` (module docs). `c_k` depends only on `t_1 … t_k`, so boundaries of
/// earlier looks do not change when later ones are added.
pub fn boundaries(
    spending: SpendingFunction,
    alpha: f64,
    fractions: &[f64],
) -> Result<Vec<f64>, StatsError> {
    boundaries_on_grid(spending, alpha, fractions, GRID_R)
}

pub(super) fn boundaries_on_grid(
    spending: SpendingFunction,
    alpha: f64,
    fractions: &[f64],
    r: usize,
) -> Result<Vec<f64>, StatsError> {
    check_probability("alpha", alpha)?;
    check_fractions(fractions)?;
    let mut out = Vec::with_capacity(fractions.len());
    let mut spent_before = 0.0;
    let mut stage: Option<Stage> = None;
    for (k, &t) in fractions.iter().enumerate() {
        let spent = spending.spent(alpha, t)?;
        let target = spent - spent_before;
        let c = match &stage {
            None if target > 0.0 => normal_upper_quantile(target / 2.0).min(MAX_Z_BOUNDARY),
            None => MAX_Z_BOUNDARY,
            Some(s) => s.solve(t, target)?,
        };
        out.push(c);
        spent_before = spent;
        if k + 1 < fractions.len() {
            stage = Some(match &stage {
                None => Stage::first(t, c, 0.0, r),
                Some(s) => s.next(t, c, 0.0, r),
            });
        }
    }
    Ok(out)
}

/// Probability of stopping at one look, by side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Crossing {
    /// `P(no exit before, Z_k ≥ c_k)`.
    pub upper: f64,
    /// `P(no exit before, Z_k ≤ −c_k)`.
    pub lower: f64,
}

impl Crossing {
    /// `upper + lower`.
    pub fn total(&self) -> f64 {
        self.upper + self.lower
    }
}

/// The probability of stopping at each look of a design with symmetric `boundaries` at
/// `fractions`, when `Z_k ~ N(θ√t_k, 1)` with `θ = drift` (the expected z statistic at
/// `t = 1`; 0 under H0), by the same recursive integration as [`boundaries`]. Under H0 with
/// the boundaries of a spending function the totals are the spent increments; with a drift
/// they give the design's power look by look.
pub fn exit_probabilities(
    fractions: &[f64],
    boundaries: &[f64],
    drift: f64,
) -> Result<Vec<Crossing>, StatsError> {
    check_fractions(fractions)?;
    if boundaries.len() != fractions.len() {
        return Err(StatsError::InvalidParameter {
            name: "boundaries",
            value: boundaries.len() as f64,
            why: "need one boundary per information fraction",
        });
    }
    for &c in boundaries {
        check_boundary(c)?;
    }
    if !drift.is_finite() {
        return Err(StatsError::InvalidParameter {
            name: "drift",
            value: drift,
            why: "must be finite",
        });
    }
    let mut out = Vec::with_capacity(fractions.len());
    let mut stage: Option<Stage> = None;
    for (k, (&t, &c)) in fractions.iter().zip(boundaries).enumerate() {
        out.push(match &stage {
            None => {
                let mean = drift * t.sqrt();
                Crossing {
                    upper: normal_sf(c - mean),
                    lower: normal_sf(c + mean),
                }
            }
            Some(s) => s.exits(t, drift, -c, c),
        });
        if k + 1 < fractions.len() {
            stage = Some(match &stage {
                None => Stage::first(t, c, drift, GRID_R),
                Some(s) => s.next(t, c, drift, GRID_R),
            });
        }
    }
    Ok(out)
}
