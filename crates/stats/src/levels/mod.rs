//! Levels apart from effects: did a re-run move every cell alike (a change of the machine or
//! its load), or did some arm or point move apart (a change of the variants)?
//!
//! Method (docs/statistics-method.md, "Levels apart from effects"), per metric on the log
//! scale, with server starts as the unit ([`contrast`]):
//! * the **common effect** `δ = (1/C)·Σ_c d_c`, the mean over the C cells of each cell's
//!   change new/published, with its Student-t interval at `1 − α`;
//! * each **departure** — of an arm (the mean change of its cells minus δ), of a point (when
//!   there are two arms or more) and of a cell (`d_c − δ`) — is itself a contrast of the
//!   trial values, so its interval carries δ's uncertainty and its covariance with `d_c`
//!   (the same starts enter both), rather than dividing δ out and testing again as if it
//!   were known. The departures' p-values are corrected by Holm within each family (arms,
//!   points, cells) and Bonferroni over the families, so the chance of naming any departure
//!   when every cell moved alike stays at α;
//! * the **shape**: `uniform` when δ's interval excludes 0 and no departure is significant
//!   ("levels moved alike"), `none` when neither is, `not-uniform` when some departure is;
//! * each cell's value **judged with the common effect**: its departure `d_c − δ` read by the
//!   value rule (inside ±θ: reproduced relative to the common level; beyond: not; else
//!   inconclusive), beside the plain judgement compare makes.
//!
//! The A/B effects within a run (ratios of variants at a point) do not contain δ: a common
//! shift cancels in them, so they are judged as before.

mod contrast;
#[cfg(test)]
mod tests;

pub use contrast::{Contrast, LevelObs};

use serde::{Deserialize, Serialize};

use crate::StatsError;
use crate::error::check_probability;
use crate::estimate::{ConfidenceInterval, Estimate};
use crate::holm::holm_adjust;
use crate::reproduce::Reproduction;

/// Where a cell sits: its arm (variant) and its sweep point, as indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellPlace {
    /// Variant index.
    pub arm: usize,
    /// Sweep point index.
    pub point: usize,
}

/// What departed from the common effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "index")]
pub enum Scope {
    /// One arm (variant), over its points.
    Arm(usize),
    /// One sweep point, over the arms.
    Point(usize),
    /// One cell.
    Cell(usize),
}

/// One departure from the common effect.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Departure {
    /// What departed.
    pub scope: Scope,
    /// Its own change new/published (the mean over its cells), as a ratio.
    pub own: f64,
    /// Its departure from the common effect as a ratio (own / common), with the interval.
    pub departure: Estimate,
    /// Unadjusted two-sided p.
    pub p_value: f64,
    /// Its p adjusted for every departure of the metric: Holm within its family (arms,
    /// points or cells), times the number of families tested.
    pub holm_p: f64,
    /// `holm_p < α`.
    pub significant: bool,
}

/// The shape of the level change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// The common effect is significant and no arm, point or cell departs from it.
    Uniform,
    /// Neither a common effect nor a departure.
    None,
    /// Some arm, point or cell moved apart from the others.
    NotUniform,
}

/// A cell judged with the common effect taken out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CellLevel {
    /// The cell's index.
    pub cell: usize,
    /// Its change relative to the common level (ratio), with the departure's interval.
    pub relative: Estimate,
    /// The value rule on that interval.
    pub outcome: Reproduction,
}

/// The level analysis of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Levels {
    /// The common effect new/published as a ratio, with its interval (std_err of the log).
    pub common: Estimate,
    /// Its two-sided p.
    pub common_p: f64,
    /// Degrees of freedom of its interval.
    pub df: f64,
    /// Every departure tested (arms, then points, then cells).
    pub departures: Vec<Departure>,
    /// Each cell judged relative to the common level.
    pub cells: Vec<CellLevel>,
    /// The shape.
    pub shape: Shape,
    /// Starts in the published run and in the re-run.
    pub starts: [usize; 2],
}

/// The settings of the analysis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelSettings {
    /// Significance level; intervals at `1 − α`.
    pub alpha: f64,
    /// The value rule's θ: a relative value is reproduced when its interval lies inside
    /// `±ln(1 + θ)`.
    pub threshold: f64,
}

fn ratio(c: &Contrast, level: f64) -> Estimate {
    let (lo, hi) = c.log_interval();
    Estimate {
        point: c.log_estimate.exp(),
        ci: ConfidenceInterval {
            level,
            lower: lo.exp(),
            upper: hi.exp(),
        },
        std_err: c.std_err,
    }
}

fn value_rule(c: &Contrast, threshold: f64) -> Reproduction {
    let m = threshold.ln_1p();
    let (lo, hi) = c.log_interval();
    if -m < lo && hi < m {
        Reproduction::Reproduced
    } else if lo > m || hi < -m {
        Reproduction::NotReproduced
    } else {
        Reproduction::Inconclusive
    }
}

/// The scopes tested and each one's weights over the cells: arms (two or more), points
/// (two or more arms and points), cells (two or more).
fn scopes(places: &[CellPlace]) -> Vec<(Scope, Vec<f64>)> {
    let cells = places.len() as f64;
    let arms = places.iter().map(|p| p.arm).max().map_or(0, |m| m + 1);
    let points = places.iter().map(|p| p.point).max().map_or(0, |m| m + 1);
    let group = |member: &dyn Fn(usize) -> bool| -> Option<Vec<f64>> {
        let k = (0..places.len()).filter(|&i| member(i)).count() as f64;
        (k > 0.0).then(|| {
            (0..places.len())
                .map(|i| f64::from(u8::from(member(i))) / k - 1.0 / cells)
                .collect()
        })
    };
    let mut out = Vec::new();
    if arms >= 2 {
        for a in 0..arms {
            if let Some(w) = group(&|i| places[i].arm == a) {
                out.push((Scope::Arm(a), w));
            }
        }
        if points >= 2 {
            for q in 0..points {
                if let Some(w) = group(&|i| places[i].point == q) {
                    out.push((Scope::Point(q), w));
                }
            }
        }
    }
    if places.len() >= 2 {
        for c in 0..places.len() {
            if let Some(w) = group(&|i| i == c) {
                out.push((Scope::Cell(c), w));
            }
        }
    }
    out
}

/// Holm within each family of departures (arms, points, cells), Bonferroni over the
/// families tested: the family-wise error over all of them stays at α.
fn family_holm(tested: &[(Scope, Contrast, f64)]) -> Result<Vec<f64>, StatsError> {
    let family = |s: &Scope| match s {
        Scope::Arm(_) => 0,
        Scope::Point(_) => 1,
        Scope::Cell(_) => 2,
    };
    let present: Vec<usize> = (0..3)
        .filter(|f| tested.iter().any(|t| family(&t.0) == *f))
        .collect();
    let mut out = vec![1.0; tested.len()];
    for f in &present {
        let idx: Vec<usize> = (0..tested.len())
            .filter(|&i| family(&tested[i].0) == *f)
            .collect();
        let adjusted = holm_adjust(&idx.iter().map(|&i| tested[i].1.p_value).collect::<Vec<_>>())?;
        for (k, &i) in idx.iter().enumerate() {
            out[i] = (adjusted[k] * present.len() as f64).min(1.0);
        }
    }
    Ok(out)
}

/// The level analysis of one metric over `places.len()` cells. Cells without values in
/// both runs are left out of every contrast (their weight is 0). Errors when fewer than one
/// cell can be compared, on a value that is not finite and > 0, or on a bad setting.
pub fn levels(
    obs: &[LevelObs],
    places: &[CellPlace],
    settings: &LevelSettings,
) -> Result<Levels, StatsError> {
    check_probability("alpha", settings.alpha)?;
    let level = 1.0 - settings.alpha;
    let arms = places.iter().map(|p| p.arm).max().map_or(0, |m| m + 1);
    let data = contrast::Arranged::new(obs, places.len(), |r, c| r * arms + places[c].arm)?;
    let usable: Vec<usize> = (0..places.len())
        .filter(|&c| data.n[0][c] >= 2 && data.n[1][c] >= 2)
        .collect();
    let kept: Vec<CellPlace> = usable.iter().map(|&c| places[c]).collect();
    let spread = |w: &[f64]| -> Vec<f64> {
        let mut full = vec![0.0; places.len()];
        for (i, &c) in usable.iter().enumerate() {
            full[c] = w[i];
        }
        full
    };
    let too_few = || StatsError::TooFewSamples {
        what: "levels: cells with 2 or more trials in both runs",
        n: usable.len(),
        required: 1,
    };
    // Server starts are the unit: a variant with one start in a run (`server_restart: once`)
    // has trials enough but no spread between starts to measure.
    if !kept.is_empty() && data.fewest_starts() < 2 {
        return Err(StatsError::TooFewSamples {
            what: "levels: server starts of one variant in one run (starts are the unit; `server_restart: once` gives one)",
            n: data.fewest_starts(),
            required: 2,
        });
    }
    let common_w = spread(&vec![1.0 / kept.len().max(1) as f64; kept.len()]);
    let common = data
        .contrast(&common_w, level)
        .filter(|_| !kept.is_empty())
        .ok_or_else(too_few)?;
    let tested: Vec<(Scope, Contrast, f64)> = scopes(&kept)
        .into_iter()
        .filter_map(|(scope, w)| {
            let own_w: Vec<f64> = w.iter().map(|x| x + 1.0 / kept.len() as f64).collect();
            let own = data.contrast(&spread(&own_w), level)?.log_estimate.exp();
            let scope = match scope {
                Scope::Cell(i) => Scope::Cell(usable[i]),
                other => other,
            };
            Some((scope, data.contrast(&spread(&w), level)?, own))
        })
        .collect();
    let holm = family_holm(&tested)?;
    let departures: Vec<Departure> = tested
        .iter()
        .zip(&holm)
        .map(|((scope, c, own), &hp)| Departure {
            scope: *scope,
            own: *own,
            departure: ratio(c, level),
            p_value: c.p_value,
            holm_p: hp,
            significant: hp < settings.alpha,
        })
        .collect();
    let cells = tested
        .iter()
        .filter_map(|(scope, c, _)| match scope {
            Scope::Cell(i) => Some(CellLevel {
                cell: *i,
                relative: ratio(c, level),
                outcome: value_rule(c, settings.threshold),
            }),
            _ => None,
        })
        .collect();
    let shape = if departures.iter().any(|d| d.significant) {
        Shape::NotUniform
    } else if common.p_value < settings.alpha {
        Shape::Uniform
    } else {
        Shape::None
    };
    let starts = [0, 1].map(|r| {
        let mut s: Vec<usize> = obs
            .iter()
            .filter(|o| usize::from(o.new_run) == r)
            .map(|o| o.start)
            .collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    });
    Ok(Levels {
        common: ratio(&common, level),
        common_p: common.p_value,
        df: common.df,
        departures,
        cells,
        shape,
        starts,
    })
}
