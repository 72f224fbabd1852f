//! Change points in a series of runs: where the level of a metric moved for good (a step),
//! which single runs are off while the series stays at its level (outlier runs), and whether
//! a change at the newest runs is confirmed yet.
//!
//! The input is one value per run, in run order (the caller passes the mean of the log of
//! each run's trial values, so differences are log ratios). The run, not the trial, is the
//! unit: two runs differ by more than their trials' spread says (another session, another
//! server start), so a test on pooled trial values would take session-to-session noise for
//! steps (Kalibera & Jones, "Rigorous benchmarking in reasonable time", ISMM 2013: a level of
//! the experiment is judged by the variance between its own repetitions).
//!
//! Method, in four passes:
//!
//! 1. **Outlier runs.** A run is an *isolated outlier* when it lies outside the `outlier_level`
//!    (99%) prediction interval of the runs before it *and* outside that of the runs after it,
//!    on the same side: one run off and the series back to its level. Each interval is
//!    Student's prediction interval for one new value, `ȳ ± t(1 − α/2, m − 1)·s·√(1 + 1/m)`,
//!    from the nearest `window` (10) runs on that side, at least 3; with only one or two runs
//!    on a side, they must instead lie inside the other side's interval ("back to its level").
//!    The most extreme run is set aside first and the others judged again without it. A run
//!    with no run after it is never an outlier: it cannot be told from a step yet (pass 4).
//!    Reference: Hahn & Meeker, *Statistical Intervals* (1991) §4.7.
//! 2. **Binary segmentation** of the other runs (Vostrikova, "Detecting 'disorder' in
//!    multidimensional random processes", Soviet Math. Dokl. 24, 1981): in a segment, the split
//!    with the largest two-sample t statistic (Student's, pooled variance: Hawkins, "Testing a
//!    sequence of observations for a shift in location", JASA 72, 1977), segments of at least
//!    `min_segment` (3) runs; the split is kept when a permutation test of that maximum gives p ≤ `alpha` (the runs of the segment
//!    shuffled `permutations` times, p = (1 + #{T* ≥ T})/(1 + B): Antoch & Hušková,
//!    "Permutation tests in change point analysis", Stat. Probab. Lett. 53, 2001; the
//!    significance test of E-Divisive, Matteson & James, JASA 109, 2014), then both halves are
//!    searched again. The newest two runs are left to pass 4.
//! 3. **Confirmation**: each change point is tested again by Student's t-test between its two
//!    adjacent segments (the runs between its neighbouring change points); while the weakest
//!    has p > `alpha` it is dropped and the others tested again — as Hunter (Apache Otava)
//!    confirms E-Divisive's candidates with a t-test (Fleming et al., "Hunter: using change
//!    point detection to hunt for performance regressions", ICPE 2023).
//! 4. **The newest runs** (the persistence rule of PyTorch's regression reports: a
//!    "regression" after two consecutive violations, "suspicious" after one). The largest `r`
//!    such that the newest `r` runs all lie outside the `newest_level` (99%) prediction
//!    interval of the runs of the last segment before them, on one side, makes a
//!    **confirmed** change when `r ≥ 2` and an **unconfirmed** one when `r = 1`: one run off
//!    cannot be told from an outlier until the next run says whether the series went back.
//!
//! Every change point carries its shift (after − before, Student's pooled-variance interval
//! at `level`, [`crate::student`]) between the runs of its two adjacent segments, outlier runs
//! left out. The permutations use ChaCha8 seeded from `seed` and the segment's bounds, so a
//! series always gives the same answer.

use rand::{Rng as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_finite, check_probability};
use crate::estimate::ConfidenceInterval;
use crate::interval::prediction_interval;
use crate::student::{PooledTest, pooled};

/// The thresholds of [`detect`] (module docs); [`Default`] gives the documented ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Level of the permutation test of a split and of the t-test that confirms it.
    pub alpha: f64,
    /// Shuffles of the permutation test.
    pub permutations: usize,
    /// Fewest runs in a segment of the binary segmentation (the newest two runs alone are
    /// judged by the persistence rule instead).
    pub min_segment: usize,
    /// Runs on each side whose prediction interval judges an outlier run.
    pub window: usize,
    /// Level of the prediction intervals that judge outlier runs.
    pub outlier_level: f64,
    /// Level of the prediction interval that judges the newest runs.
    pub newest_level: f64,
    /// Level of the shift's interval.
    pub level: f64,
    /// Seed of the permutations.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            alpha: 0.05,
            permutations: 999,
            min_segment: 3,
            window: 10,
            outlier_level: 0.99,
            newest_level: 0.99,
            level: 0.95,
            seed: 0x5EED_C4A9,
        }
    }
}

/// Whether a change point is established.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Found by segmentation and confirmed, or two or more newest runs off on one side.
    Confirmed,
    /// Only the newest run is off: a step or an outlier, the next run will tell.
    Unconfirmed,
}

/// Which pass found a change point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// Binary segmentation and its confirming t-test (passes 2 and 3).
    Segmentation,
    /// Two or more newest runs outside the prediction interval of the level before them.
    Persistence,
    /// The newest run alone outside it.
    Newest,
}

/// One change of level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// The first run after the change (index into the input).
    pub index: usize,
    /// Confirmed or not yet.
    pub status: Status,
    /// Which pass found it.
    pub rule: Rule,
    /// The runs of the segment before it (outlier runs left out).
    pub before: Vec<usize>,
    /// The runs of the segment after it (outlier runs left out).
    pub after: Vec<usize>,
    /// `mean(after) − mean(before)`, with its interval and p-value.
    pub shift: PooledTest,
}

/// One isolated outlier run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutlierRun {
    /// Index into the input.
    pub index: usize,
    /// Its value minus the mean of the runs it was judged against (those before it, else
    /// those after it).
    pub shift: f64,
    /// The prediction interval it fell outside (of those runs).
    pub interval: ConfidenceInterval,
}

/// What [`detect`] found.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Detection {
    /// Outlier runs, in run order.
    pub outliers: Vec<OutlierRun>,
    /// Change points, in run order.
    pub change_points: Vec<ChangePoint>,
}

/// The split of `values` with the largest |t| (Student's pooled two-sample t of the values
/// after it against those before it), with at least `min_left` values before and
/// `min_right` after: `(k, t)` where `k` is the first index after the split. `None` when no
/// split fits. A split between two constant sides has |t| = ∞ unless their means are equal.
pub fn max_t_split(values: &[f64], min_left: usize, min_right: usize) -> Option<(usize, f64)> {
    let n = values.len();
    if min_left == 0 || min_right == 0 || n < min_left + min_right || n < 3 {
        return None;
    }
    // Centred, so that the sums of squares do not cancel.
    let centre = values.iter().sum::<f64>() / n as f64;
    let (mut sum, mut sq) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for (i, v) in values.iter().enumerate() {
        let c = v - centre;
        sum[i + 1] = sum[i] + c;
        sq[i + 1] = sq[i] + c * c;
    }
    let mut best: Option<(usize, f64)> = None;
    for k in min_left..=n - min_right {
        let (n1, n2) = (k as f64, (n - k) as f64);
        let (s1, s2) = (sum[k], sum[n] - sum[k]);
        let ss1 = (sq[k] - s1 * s1 / n1).max(0.0);
        let ss2 = (sq[n] - sq[k] - s2 * s2 / n2).max(0.0);
        let diff = s2 / n2 - s1 / n1;
        let var = (ss1 + ss2) / (n as f64 - 2.0);
        let t = if var > 0.0 {
            diff / (var * (1.0 / n1 + 1.0 / n2)).sqrt()
        } else if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        if best.is_none_or(|(_, b)| t.abs() > b.abs()) {
            best = Some((k, t));
        }
    }
    best
}

/// The permutation p-value of `observed` = max |t| of [`max_t_split`] over `values`:
/// `(1 + #{T* ≥ |observed|})/(1 + permutations)` over shuffles drawn by ChaCha8 from `seed`
/// (Fisher–Yates). Reference: Antoch & Hušková (2001).
pub fn permutation_p(
    values: &[f64],
    min_left: usize,
    min_right: usize,
    observed: f64,
    permutations: usize,
    seed: u64,
) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut v = values.to_vec();
    let bar = observed.abs() * (1.0 - 1e-12);
    let mut at_least = 0usize;
    for _ in 0..permutations {
        for i in (1..v.len()).rev() {
            let j = rng.random_range(0..=i);
            v.swap(i, j);
        }
        if let Some((_, t)) = max_t_split(&v, min_left, min_right)
            && t.abs() >= bar
        {
            at_least += 1;
        }
    }
    (1 + at_least) as f64 / (1 + permutations) as f64
}

/// Student's prediction interval of `values`, or `None` below 3 values or without spread.
fn interval_of(values: &[f64], level: f64) -> Option<ConfidenceInterval> {
    prediction_interval(values, level)
        .ok()
        .filter(|c| c.upper > c.lower)
}

/// Which side of `ci` `x` lies on, and how far out (|x − centre| / half-width, > 1 outside).
fn outside(x: f64, ci: &ConfidenceInterval) -> Option<(bool, f64)> {
    let centre = (ci.lower + ci.upper) / 2.0;
    let half = (ci.upper - ci.lower) / 2.0;
    let score = (x - centre).abs() / half;
    (score > 1.0).then_some((x > centre, score))
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Pass 1 for one run: `Some((score, outlier))` when `x` is an isolated outlier between
/// `before` (nearest first) and `after`.
fn judge(
    index: usize,
    x: f64,
    before: &[f64],
    after: &[f64],
    level: f64,
) -> Option<(f64, OutlierRun)> {
    let min = crate::interval::MIN_TRIALS_FOR_INTERVAL;
    let pb = (before.len() >= min)
        .then(|| interval_of(before, level))
        .flatten();
    let pa = (after.len() >= min)
        .then(|| interval_of(after, level))
        .flatten();
    let inside_all = |vs: &[f64], ci: &ConfidenceInterval| vs.iter().all(|v| ci.contains(*v));
    let (score, values, ci) = match (pb, pa) {
        (Some(b), Some(a)) => {
            let (sb, zb) = outside(x, &b)?;
            let (sa, za) = outside(x, &a)?;
            (sb == sa).then_some((zb.min(za), before, b))?
        }
        (Some(b), None) if !after.is_empty() && inside_all(after, &b) => {
            (outside(x, &b)?.1, before, b)
        }
        (None, Some(a)) if inside_all(before, &a) => (outside(x, &a)?.1, after, a),
        _ => return None,
    };
    Some((
        score,
        OutlierRun {
            index,
            shift: x - mean(values),
            interval: ci,
        },
    ))
}

/// Pass 1: the isolated outlier runs, most extreme first set aside, in run order.
fn outliers(values: &[f64], s: &Settings) -> Vec<OutlierRun> {
    let n = values.len();
    let mut out = vec![false; n];
    let mut found = Vec::new();
    loop {
        let mut best: Option<(f64, OutlierRun)> = None;
        for i in (0..n).filter(|&i| !out[i]) {
            let before: Vec<f64> = (0..i)
                .rev()
                .filter(|&j| !out[j])
                .take(s.window)
                .map(|j| values[j])
                .collect();
            let after: Vec<f64> = (i + 1..n)
                .filter(|&j| !out[j])
                .take(s.window)
                .map(|j| values[j])
                .collect();
            if let Some((score, o)) = judge(i, values[i], &before, &after, s.outlier_level)
                && best.as_ref().is_none_or(|(b, _)| score > *b)
            {
                best = Some((score, o));
            }
        }
        match best {
            Some((_, o)) => {
                out[o.index] = true;
                found.push(o);
            }
            None => break,
        }
    }
    found.sort_by_key(|o| o.index);
    found
}

/// The newest runs judged by the persistence rule rather than by segmentation: two, as a
/// change is confirmed after two consecutive runs off.
const NEWEST: usize = 2;

/// A seed for the segment `lo..hi` (SplitMix64 of the bounds mixed into `seed`).
fn segment_seed(seed: u64, lo: usize, hi: usize) -> u64 {
    let mut z = seed ^ ((lo as u64) << 32 | hi as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Pass 2 over `z[lo..hi]`: the positions (into `z`) of the significant splits.
fn segment(z: &[f64], lo: usize, hi: usize, s: &Settings, out: &mut Vec<usize>) {
    let part = &z[lo..hi];
    let Some((k, t)) = max_t_split(part, s.min_segment, s.min_segment) else {
        return;
    };
    let p = permutation_p(
        part,
        s.min_segment,
        s.min_segment,
        t,
        s.permutations,
        segment_seed(s.seed, lo, hi),
    );
    if p > s.alpha {
        return;
    }
    out.push(lo + k);
    segment(z, lo, lo + k, s, out);
    segment(z, lo + k, hi, s, out);
}

/// Pass 3: drop the weakest change point while its t-test between adjacent segments has
/// p > α. Returns the kept positions with their tests.
fn confirm(z: &[f64], mut cps: Vec<usize>, s: &Settings) -> Vec<(usize, PooledTest)> {
    cps.sort_unstable();
    loop {
        let tests: Vec<Option<PooledTest>> = (0..cps.len())
            .map(|j| {
                let lo = if j == 0 { 0 } else { cps[j - 1] };
                let hi = cps.get(j + 1).copied().unwrap_or(z.len());
                pooled(&z[lo..cps[j]], &z[cps[j]..hi], s.level).ok()
            })
            .collect();
        let weakest = tests
            .iter()
            .enumerate()
            .map(|(j, t)| (j, t.map_or(1.0, |t| t.p)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match weakest {
            Some((j, p)) if p > s.alpha => {
                cps.remove(j);
            }
            _ => {
                return cps
                    .into_iter()
                    .zip(tests)
                    .filter_map(|(c, t)| Some((c, t?)))
                    .collect();
            }
        }
    }
}

/// Pass 4 on the kept values `z` after the last change point at `from`: the largest `r`
/// such that the newest `r` values all lie outside the prediction interval of the values
/// from `from` up to them (at least `min_segment`), on one side; 0 when there is none.
fn newest_off(z: &[f64], from: usize, s: &Settings) -> usize {
    let m = z.len();
    let mut off = 0;
    for r in 1..m {
        let Some(reference) = z.get(from..m - r) else {
            break;
        };
        if reference.len() < s.min_segment {
            break;
        }
        let Some(ci) = interval_of(reference, s.newest_level) else {
            continue;
        };
        let sides: Vec<Option<bool>> = z[m - r..]
            .iter()
            .map(|x| outside(*x, &ci).map(|o| o.0))
            .collect();
        if sides[0].is_some() && sides.iter().all(|x| *x == sides[0]) {
            off = r;
        }
    }
    off
}

/// Outlier runs and change points of `values`, one value per run in run order (module docs).
/// Errors on a non-finite value or a setting out of range; a series too short for a pass
/// simply finds nothing in it.
pub fn detect(values: &[f64], settings: &Settings) -> Result<Detection, StatsError> {
    check_finite("change points", values)?;
    for (name, p) in [
        ("alpha", settings.alpha),
        ("outlier_level", settings.outlier_level),
        ("newest_level", settings.newest_level),
        ("level", settings.level),
    ] {
        check_probability(name, p)?;
    }
    if settings.min_segment < 2 {
        return Err(StatsError::InvalidParameter {
            name: "min_segment",
            value: settings.min_segment as f64,
            why: "a segment needs at least 2 runs",
        });
    }
    let outliers = outliers(values, settings);
    let kept: Vec<usize> = (0..values.len())
        .filter(|i| !outliers.iter().any(|o| o.index == *i))
        .collect();
    let z: Vec<f64> = kept.iter().map(|&i| values[i]).collect();
    // Passes 2 and 3 on every run but the newest two, which pass 4 judges.
    let body = &z[..z.len().saturating_sub(NEWEST)];
    let mut found = Vec::new();
    segment(body, 0, body.len(), settings, &mut found);
    let mut bounds: Vec<(usize, Rule, Status)> = confirm(body, found, settings)
        .into_iter()
        .map(|(c, _)| (c, Rule::Segmentation, Status::Confirmed))
        .collect();
    let from = bounds.last().map_or(0, |b| b.0);
    let off = newest_off(&z, from, settings);
    if off > 0 {
        let status = if off >= NEWEST {
            Status::Confirmed
        } else {
            Status::Unconfirmed
        };
        let rule = if off >= NEWEST {
            Rule::Persistence
        } else {
            Rule::Newest
        };
        bounds.push((z.len() - off, rule, status));
    }
    // Each shift between the final adjacent segments, the newest runs included.
    let ids = |range: std::ops::Range<usize>| -> Vec<usize> { kept[range].to_vec() };
    let change_points = bounds
        .iter()
        .enumerate()
        .filter_map(|(j, &(c, rule, status))| {
            let lo = if j == 0 { 0 } else { bounds[j - 1].0 };
            let hi = bounds.get(j + 1).map_or(z.len(), |b| b.0);
            let shift = pooled(&z[lo..c], &z[c..hi], settings.level).ok()?;
            Some(ChangePoint {
                index: kept[c],
                status,
                rule,
                before: ids(lo..c),
                after: ids(c..hi),
                shift,
            })
        })
        .collect();
    Ok(Detection {
        outliers,
        change_points,
    })
}

#[cfg(test)]
mod tests;
