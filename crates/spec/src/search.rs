//! The capacity search's procedure, pure and deterministic (docs/search.md): the grid each
//! server start bisects, the next load to measure from the outcomes so far, the bracket a
//! server start ends with and its capacity estimate, and the most trials one start can take.
//!
//! * **Grid.** Loads from `search.lower` to `search.upper` at steps of `search.precision`:
//!   geometric for a relative precision (step `ln(1 + p)` on the log scale), arithmetic for an
//!   absolute one, whole numbers on the `max_concurrency` axis. The interior points are shifted
//!   by an offset drawn per round from `workload.seed` (a *subtractive dither*: L. Schuchman,
//!   "Dither signals and their effect on quantization noise", IEEE Trans. Commun. Technol.
//!   12(4), 1964), so the error of reading a capacity off the grid is uniform over one step
//!   and has mean zero whatever the capacity: the midpoint of a server start's bracket is an
//!   unbiased estimate of its capacity (on the grid's scale), and the spread of these
//!   estimates over server starts carries the grid's rounding into the interval.
//! * **Steps** ([`next_step`]). The first round bisects the whole grid. Later rounds start at
//!   the grid point nearest the capacity estimated so far and gallop away from it (steps of
//!   1, 2, 4… grid points) until the outcome changes, then bisect the bracket. A step is a
//!   function of the outcomes so far, so `run --resume` replays a block's recorded trials and
//!   gets the same next load.
//! * **Outcome.** A start ends when a load that passed and one that failed are neighbours on
//!   the grid ([`Bracket::Between`]), when even `lower` fails ([`Bracket::BelowLower`]) or
//!   when `upper` passes ([`Bracket::AboveUpper`]).

use serde::Serialize;

use crate::types::{Precision, Search, SearchAxis, SpecFile};

/// Most grid points a search may have: a finer precision than this over its bounds is
/// refused at validation.
pub const MAX_GRID_POINTS: usize = 100_000;

/// How loads are spaced on the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GridScale {
    /// Geometric: equal steps of `ln(1 + precision)` (a relative precision).
    Log,
    /// Arithmetic: equal steps of the precision (an absolute one).
    Linear,
}

impl GridScale {
    /// A load on this scale (`ln x` or `x`).
    pub fn to_scale(self, x: f64) -> f64 {
        match self {
            GridScale::Log => x.ln(),
            GridScale::Linear => x,
        }
    }

    /// The load at `g` on this scale (`exp g` or `g`).
    pub fn from_scale(self, g: f64) -> f64 {
        match self {
            GridScale::Log => g.exp(),
            GridScale::Linear => g,
        }
    }
}

/// The scale and step (on that scale) of a search's grid and of its precision.
pub fn scale_and_step(search: &Search) -> (GridScale, f64) {
    match search.precision {
        Precision::Relative(p) => (GridScale::Log, p.ln_1p()),
        Precision::Absolute(p) => (GridScale::Linear, p),
    }
}

/// The decimals a load near `x` is printed with on `search`'s grid: enough to show half a
/// grid step (a step of 1 in flight: one decimal; a 5% step at 20 req/s, one req/s: one
/// decimal; at 2 req/s: two), and no more — a capacity is not known more finely than its
/// grid (issue 29: `capacity ≈ 7.0000`, `12.3333 [-18.0482, 42.7149]`).
pub fn load_decimals(search: &Search, x: f64) -> usize {
    let (scale, step) = scale_and_step(search);
    let step_load = match scale {
        GridScale::Log => x.abs() * step.exp_m1(),
        GridScale::Linear => step,
    };
    if !(step_load.is_finite() && step_load > 0.0) {
        return 2;
    }
    ((-(step_load / 2.0).log10()).ceil().max(0.0) as usize).min(6)
}

/// A load printed at [`load_decimals`].
pub fn load_text(search: &Search, x: f64) -> String {
    format!("{x:.*}", load_decimals(search, x))
}

/// The loads one server start of round `round` may measure, lowest first: `lower`, the
/// dithered interior points, `upper`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grid {
    /// The loads, increasing; the first is `lower`, the last `upper`.
    pub loads: Vec<f64>,
    /// The scale of the steps.
    pub scale: GridScale,
    /// The offset of the interior points, a share of one step in `[0, 1)`.
    pub offset: f64,
    /// Whole-number loads (the `max_concurrency` axis).
    pub integer: bool,
}

/// The dither of round `round`: a share of one step in `[0, 1)`, from `workload.seed` (the
/// same for every variant of the round, so their starts measure the same loads).
pub fn round_offset(workload_seed: u64, round: u32) -> f64 {
    // The prompt-seed chain of `plan::prompt_seed` (repeated here, so that the search's
    // procedure does not depend on the plan) with a point index no sweep reaches.
    let mut x = splitmix(workload_seed ^ 0x6361_7061_6369_7479 ^ 0x5345_5256_4542_4e43);
    x = splitmix(x ^ u64::from(round));
    x = splitmix(x ^ usize::MAX as u64);
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// SplitMix64's finaliser (Steele, Lea & Flood 2014), as `plan::prompt_seed` uses it.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Four significant digits: loads are printed and recorded so, and the rounding (at most
/// 0.05%) is far below any precision a search may ask.
fn round4(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let digits = 3 - x.abs().log10().floor() as i32;
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

impl Grid {
    /// The grid of a search whose interior points are shifted by `offset` (a share of one step
    /// in `[0, 1)`).
    pub fn new(search: &Search, offset: f64) -> Grid {
        let (lower, upper) = (search.lower, search.upper);
        let mut loads = vec![lower];
        let integer = search.axis == SearchAxis::MaxConcurrency;
        let (scale, step) = scale_and_step(search);
        if integer {
            let m = step.round().max(1.0) as u64;
            let o = ((offset * m as f64).floor() as u64).min(m - 1);
            let (lo, hi) = (lower.round() as u64, upper.round() as u64);
            let mut x = lo + m - o;
            while x < hi {
                if x > lo {
                    loads.push(x as f64);
                }
                x += m;
            }
        } else if step > 0.0 {
            let (g_lo, g_hi) = (scale.to_scale(lower), scale.to_scale(upper));
            let mut k = 1u64;
            loop {
                let g = g_lo + (k as f64 - offset) * step;
                if g >= g_hi - step * 1e-6 || loads.len() > MAX_GRID_POINTS {
                    break;
                }
                let x = round4(scale.from_scale(g));
                if x > *loads.last().unwrap_or(&lower) && x < upper {
                    loads.push(x);
                }
                k += 1;
            }
        }
        if upper > lower {
            loads.push(upper);
        }
        Grid {
            loads,
            scale,
            offset,
            integer,
        }
    }

    /// The grid of round `round` of `spec`'s search.
    pub fn for_round(spec: &SpecFile, search: &Search, round: u32) -> Grid {
        Grid::new(search, round_offset(spec.spec.workload.seed, round))
    }

    /// The index of the load nearest `x` on the grid's scale.
    pub fn nearest(&self, x: f64) -> usize {
        let g = self.scale.to_scale(x);
        self.loads
            .iter()
            .enumerate()
            .min_by(|a, b| {
                let da = (self.scale.to_scale(*a.1) - g).abs();
                let db = (self.scale.to_scale(*b.1) - g).abs();
                da.total_cmp(&db)
            })
            .map_or(0, |(i, _)| i)
    }

    /// A server start's capacity estimate from its bracket, on the grid's scale: the
    /// midpoint of the two neighbouring loads (on the `max_concurrency` axis, of the whole
    /// numbers the capacity may be: from the load that passed to one below the load that
    /// failed). `None` for a bracket at a bound.
    pub fn estimate_on_scale(&self, bracket: Bracket) -> Option<f64> {
        let Bracket::Between { pass, fail } = bracket else {
            return None;
        };
        let (a, b) = (*self.loads.get(pass)?, *self.loads.get(fail)?);
        Some(if self.integer {
            (a + (b - 1.0).max(a)) / 2.0
        } else {
            (self.scale.to_scale(a) + self.scale.to_scale(b)) / 2.0
        })
    }

    /// [`Grid::estimate_on_scale`] as a load.
    pub fn estimate(&self, bracket: Bracket) -> Option<f64> {
        self.estimate_on_scale(bracket).map(|g| {
            if self.integer {
                g
            } else {
                self.scale.from_scale(g)
            }
        })
    }
}

/// The most points a grid of `search` can have, whatever its offset.
pub fn max_grid_len(search: &Search) -> usize {
    let (scale, step) = scale_and_step(search);
    let ordered = step > 0.0 && search.upper > search.lower && search.lower > 0.0;
    if !ordered {
        return 2;
    }
    let span = if search.axis == SearchAxis::MaxConcurrency {
        (search.upper.round() - search.lower.round()) / step.round().max(1.0)
    } else {
        (scale.to_scale(search.upper) - scale.to_scale(search.lower)) / step
    };
    let n = (span.ceil() as usize).saturating_add(2);
    n.min(MAX_GRID_POINTS + 2)
}

/// Why a load was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Why {
    /// Halving the bracket (the first round halves the whole grid).
    Bisect,
    /// The grid point nearest the capacity estimated by the earlier rounds.
    Start,
    /// The loads so far passed: a step up, twice the last.
    GallopUp,
    /// The loads so far failed: a step down, twice the last.
    GallopDown,
}

impl Why {
    /// In words, for the search log.
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Bisect => "bisect",
            Why::Start => "start at the estimate so far",
            Why::GallopUp => "step up",
            Why::GallopDown => "step down",
        }
    }
}

/// Where a server start's search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bracket {
    /// Grid point `pass` passed and its neighbour `fail` (= pass + 1) failed.
    Between {
        /// Index of the highest load that passed.
        pass: usize,
        /// Index of the lowest load that failed.
        fail: usize,
    },
    /// Even the lowest load (`lower`) failed.
    BelowLower,
    /// Even the highest load (`upper`) passed.
    AboveUpper,
}

/// What a server start measures next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Next {
    /// The load at this grid index, and why.
    Measure {
        /// Grid index.
        index: usize,
        /// Why this load.
        why: Why,
    },
    /// The search of this start is over.
    Done(Bracket),
}

/// The next step of a server start's search on a grid of `len` loads (≥ 2), from the
/// outcomes so far (`(grid index, passed)` in the order measured), starting at grid index
/// `start` (the estimate of earlier rounds) or, with `None`, bisecting the whole grid.
/// Every load measured lies strictly between the highest that passed and the lowest that
/// failed, so the outcomes stay ordered (module docs).
pub fn next_step(len: usize, start: Option<usize>, outcomes: &[(usize, bool)]) -> Next {
    let k = len.saturating_sub(1);
    let lo = outcomes.iter().filter(|o| o.1).map(|o| o.0).max();
    let hi = outcomes.iter().filter(|o| !o.1).map(|o| o.0).min();
    if hi == Some(0) {
        return Next::Done(Bracket::BelowLower);
    }
    if lo == Some(k) {
        return Next::Done(Bracket::AboveUpper);
    }
    if let (Some(l), Some(h)) = (lo, hi)
        && h <= l + 1
    {
        return Next::Done(Bracket::Between { pass: l, fail: h });
    }
    let bisect = |l: Option<usize>, h: Option<usize>| {
        let l = l.map_or(-1, |l| l as i64);
        let h = h.map_or(k as i64 + 1, |h| h as i64);
        Next::Measure {
            index: ((l + h).div_euclid(2)).clamp(0, k as i64) as usize,
            why: Why::Bisect,
        }
    };
    let Some(s) = start.map(|s| s.min(k)) else {
        return bisect(lo, hi);
    };
    if outcomes.is_empty() {
        return Next::Measure {
            index: s,
            why: Why::Start,
        };
    }
    let gallop = |n: usize| (1u64 << n.min(62)) - 1;
    match (lo, hi) {
        (Some(_), None) => {
            let passes = outcomes.iter().filter(|o| o.1).count();
            let up = (s as u64).saturating_add(gallop(passes)).min(k as u64) as usize;
            Next::Measure {
                index: up,
                why: Why::GallopUp,
            }
        }
        (None, Some(_)) => {
            let fails = outcomes.iter().filter(|o| !o.1).count();
            let down = (s as u64).saturating_sub(gallop(fails)) as usize;
            Next::Measure {
                index: down,
                why: Why::GallopDown,
            }
        }
        _ => bisect(lo, hi),
    }
}

/// The most trials one server start's search can take on a grid of `len` loads: the first
/// round's bisection, `⌈log₂(len + 1)⌉`, or a later round's gallop and bisection,
/// `2⌈log₂ len⌉ + 1` (an upper bound, checked exhaustively for small grids by the unit
/// tests).
pub fn worst_case_trials(len: usize, warm: bool) -> u32 {
    let log2_ceil = |n: usize| usize::BITS - n.saturating_sub(1).leading_zeros();
    if warm {
        2 * log2_ceil(len.max(1)) + 1
    } else {
        log2_ceil(len + 1)
    }
}

/// The most trials one variant can take over `max_rounds` rounds: one cold bisection and
/// `max_rounds − 1` warm ones.
pub fn worst_case_total(len: usize, rounds: u32) -> u64 {
    if rounds == 0 {
        return 0;
    }
    u64::from(worst_case_trials(len, false))
        + u64::from(rounds - 1) * u64::from(worst_case_trials(len, true))
}

/// The trial budget of one variant: `search.max_trials`, or what `max_rounds` rounds may take.
pub fn trial_budget(search: &Search) -> u64 {
    search.max_trials.map_or_else(
        || worst_case_total(max_grid_len(search), search.max_rounds),
        u64::from,
    )
}

/// What `servebench plan` says about a search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchPlan {
    /// The axis.
    pub axis: SearchAxis,
    /// Lowest and highest load.
    pub lower: f64,
    /// Highest load.
    pub upper: f64,
    /// The attainment target.
    pub attainment: f64,
    /// Grid scale and step on that scale.
    pub scale: GridScale,
    /// The step on the grid's scale (`ln(1 + p)` or `p`).
    pub step: f64,
    /// Most loads on one start's grid.
    pub grid_points: usize,
    /// Most trials of the first round's start.
    pub first_round_trials: u32,
    /// Most trials of a later round's start.
    pub later_round_trials: u32,
    /// Fewest and most rounds.
    pub min_rounds: u32,
    /// Most rounds.
    pub max_rounds: u32,
    /// The trial budget of one variant.
    pub max_trials_per_variant: u64,
    /// The grid of round 1.
    pub first_grid: Vec<f64>,
}

/// The plan of `spec`'s search, if it has one.
pub fn search_plan(spec: &SpecFile) -> Option<SearchPlan> {
    let q = spec.spec.search.as_ref()?;
    let (scale, step) = scale_and_step(q);
    let len = max_grid_len(q);
    Some(SearchPlan {
        axis: q.axis,
        lower: q.lower,
        upper: q.upper,
        attainment: q.attainment,
        scale,
        step,
        grid_points: len,
        first_round_trials: worst_case_trials(len, false),
        later_round_trials: worst_case_trials(len, true),
        min_rounds: q.min_rounds,
        max_rounds: q.max_rounds,
        max_trials_per_variant: trial_budget(q),
        first_grid: Grid::for_round(spec, q, 1).loads,
    })
}

/// `servebench plan`'s text for a search (after the name and hash lines).
pub(crate) fn fmt_plan(q: &SearchPlan, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    let unit = q.axis.unit();
    writeln!(
        f,
        "capacity search on {} from {} to {} {unit}: the highest load at which at least {}% \
         of a trial's requests meet every SLO",
        q.axis.key(),
        q.lower,
        q.upper,
        q.attainment * 100.0
    )?;
    let step = match q.scale {
        GridScale::Log => format!("×{:.4} (geometric)", q.step.exp()),
        GridScale::Linear => format!("+{} {unit}", q.step),
    };
    writeln!(
        f,
        "grid: up to {} loads, step {step}, shifted by a seeded offset each round",
        q.grid_points
    )?;
    writeln!(
        f,
        "rounds: {} to {}; each round starts one server per variant (interleaved) and \
         bisects its grid: at most {} trials in round 1, {} in a later round (which starts at \
         the estimate so far)",
        q.min_rounds, q.max_rounds, q.first_round_trials, q.later_round_trials
    )?;
    writeln!(
        f,
        "budget: at most {} trials per variant; rounds stop once every variant's capacity \
         interval is as narrow as the precision asks",
        q.max_trials_per_variant
    )?;
    let shown: Vec<String> = q.first_grid.iter().map(|x| format!("{x}")).collect();
    writeln!(f, "round 1 grid: {}", shown.join(" "))
}

#[cfg(test)]
mod tests;
