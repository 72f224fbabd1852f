//! The estimates behind a capacity report: each variant's server starts on the grid's scale,
//! its capacity with the repeated interval, the looks, and the candidate/baseline ratio with
//! its verdict (the method is in this module's parent and docs/search.md).

use super::*;
use servebench_spec::search::load_text;

/// One variant's starts up to a round, on the grid's scale.
struct Starts {
    on_scale: Vec<f64>,
    below: u64,
    above: u64,
    invalid: u64,
    /// Bracketing starts counted at each round `1..=round`.
    per_round: Vec<usize>,
}

fn starts(blocks: &[&SearchBlock], scale: GridScale, integer: bool, round: u32) -> Starts {
    let mut s = Starts {
        on_scale: Vec::new(),
        below: 0,
        above: 0,
        invalid: 0,
        per_round: Vec::new(),
    };
    for r in 1..=round {
        for b in blocks.iter().filter(|b| b.round == r) {
            match &b.outcome {
                Some(SearchOutcome::Bracketed { estimate, .. }) => s.on_scale.push(if integer {
                    *estimate
                } else {
                    scale.to_scale(*estimate)
                }),
                Some(SearchOutcome::BelowLower { .. }) => s.below += 1,
                Some(SearchOutcome::AboveUpper { .. }) => s.above += 1,
                Some(SearchOutcome::Invalid { .. }) => s.invalid += 1,
                None => {}
            }
        }
        s.per_round.push(s.on_scale.len());
    }
    s
}

/// The counts at the looks that could stop the search: rounds from `min_rounds` on, with at
/// least 3 estimates and more than at the previous look.
fn look_history(per_round: &[(usize, usize)], min_rounds: u32) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (i, &(a, b)) in per_round.iter().enumerate() {
        if (i as u32 + 1) < min_rounds || a < MIN_STARTS || b < MIN_STARTS {
            continue;
        }
        let (a, b) = (a as u64, b as u64);
        if out.last().is_none_or(|&(pa, pb)| a + b > pa + pb) {
            out.push((a, b));
        }
    }
    out
}

fn design(result: &RunResult, q: &Search) -> Option<SequentialDesign> {
    SequentialDesign::new(
        SpendingFunction::OBrienFleming,
        result.spec.spec.compare.alpha,
        u64::from(q.max_rounds.max(MIN_STARTS as u32)),
    )
    .ok()
}

/// Mean attainment at the bound over the starts that ended there (`below`: at `lower`,
/// else at `upper`), as their outcomes recorded it.
fn bound_attainment(blocks: &[&SearchBlock], below: bool) -> Option<f64> {
    let vals: Vec<f64> = blocks
        .iter()
        .filter_map(|b| match (&b.outcome, below) {
            (Some(SearchOutcome::BelowLower { attainment }), true)
            | (Some(SearchOutcome::AboveUpper { attainment }), false) => *attainment,
            _ => None,
        })
        .collect();
    (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
}

/// Mean attainment of `variant`'s trials at `load`.
fn attainment_at(result: &RunResult, variant: &str, load: f64) -> Option<f64> {
    let log = result.search.as_ref()?;
    let vals: Vec<f64> = log
        .blocks
        .iter()
        .filter(|b| b.variant == variant)
        .flat_map(|b| &b.steps)
        .filter(|s| (s.load - load).abs() <= 1e-9 * load.abs().max(1.0))
        .filter_map(|s| s.attainment)
        .collect();
    (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
}

pub(super) fn variant_capacity(
    result: &RunResult,
    q: &Search,
    name: &str,
    round: u32,
) -> VariantCapacity {
    let log = result.search.clone().unwrap_or_default();
    let blocks: Vec<&SearchBlock> = log.blocks.iter().filter(|b| b.variant == name).collect();
    let integer = q.axis == SearchAxis::MaxConcurrency;
    let (scale, step) = scale_and_step(q);
    let st = starts(&blocks, scale, integer, round);
    let trials = result
        .trials
        .iter()
        .filter(|t| t.variant == name)
        .filter(|t| {
            blocks
                .iter()
                .filter(|b| b.round <= round)
                .any(|b| b.block == t.block)
        })
        .count() as u64;
    let unit = q.axis.unit();
    let from = |g: f64| if integer { g } else { scale.from_scale(g) };
    let mut out = VariantCapacity {
        variant: name.to_owned(),
        baseline: result
            .spec
            .spec
            .variants
            .iter()
            .any(|v| v.name == name && v.baseline),
        outcome: CapacityOutcome::TooFewStarts,
        start_estimates: st.on_scale.iter().map(|g| from(*g)).collect(),
        below_lower: st.below,
        above_upper: st.above,
        invalid: st.invalid,
        trials,
        estimate: None,
        lower: None,
        upper: None,
        half_width: None,
        precise: false,
        look: None,
        note: String::new(),
    };
    let n = st.on_scale.len();
    // Every start up to the round, the ones that gave no estimate included: the table's
    // count and the text's are this one.
    let ended = n as u64 + st.below + st.above + st.invalid;
    let in_rounds: Vec<usize> = blocks
        .iter()
        .filter(|b| b.round <= round)
        .map(|b| b.block)
        .collect();
    let queued = super::queued::engine_queued(result, name, &in_rounds);
    if st.below > 0 && n == 0 && st.above == 0 {
        let a = bound_attainment(&blocks, true).or_else(|| attainment_at(result, name, q.lower));
        out.outcome = CapacityOutcome::BelowLower { attainment: a };
        out.note = format!(
            "capacity below the lower bound {} {unit}: {}",
            load(q.lower),
            match a {
                Some(a) => format!(
                    "at {} {unit} {} of requests met the SLOs (target {})",
                    load(q.lower),
                    pct_floor(a),
                    pct(q.attainment)
                ),
                None => format!("every start failed at {} {unit}", load(q.lower)),
            }
        );
        if let Some((r, w)) = queued {
            out.note
                .push_str(&format!("; {}", super::queued::advice(r, w)));
        }
        return out;
    }
    if st.above > 0 && n == 0 && st.below == 0 {
        let a = bound_attainment(&blocks, false).or_else(|| attainment_at(result, name, q.upper));
        out.outcome = CapacityOutcome::AboveUpper { attainment: a };
        out.note = format!(
            "capacity above the upper bound {} {unit}: {}",
            load(q.upper),
            match a {
                Some(a) => format!(
                    "at {} {unit} {} of requests met the SLOs (target {})",
                    load(q.upper),
                    pct_floor(a),
                    pct(q.attainment)
                ),
                None => format!("every start passed at {} {unit}", load(q.upper)),
            }
        );
        return out;
    }
    if st.below + st.above > 0 {
        out.outcome = CapacityOutcome::AtABound;
        let no_estimate = if st.invalid > 0 {
            format!(", {} gave no estimate", st.invalid)
        } else {
            String::new()
        };
        out.note = format!(
            "capacity at a bound: of {ended} server starts, {} failed even at {} {unit}, {} \
             passed even at {} {unit} and {n} bracketed it{no_estimate}: {}",
            st.below,
            load(q.lower),
            st.above,
            load(q.upper),
            match queued {
                Some((r, w)) => super::queued::advice(r, w),
                None => "widen `search.lower`..`upper`".to_owned(),
            }
        );
        return out;
    }
    let (mean, var) = mean_var(&st.on_scale);
    out.estimate = mean.map(from);
    if n < MIN_STARTS {
        out.note =
            format!("{n} server start(s) bracketed the capacity: an interval needs {MIN_STARTS}");
        let reasons: Vec<&str> = blocks
            .iter()
            .filter(|b| b.round <= round)
            .filter_map(|b| match &b.outcome {
                Some(SearchOutcome::Invalid { reason }) => Some(reason.as_str()),
                _ => None,
            })
            .collect();
        if let Some(first) = reasons.first() {
            out.note.push_str(&format!(
                "; {} start(s) gave no estimate, the first: {}",
                reasons.len(),
                first.lines().next().unwrap_or(first)
            ));
        }
        return out;
    }
    let (Some(mean), Some(var)) = (mean, var) else {
        return out;
    };
    out.outcome = CapacityOutcome::Estimated;
    let history = look_history(
        &st.per_round.iter().map(|&c| (c, c)).collect::<Vec<_>>(),
        q.min_rounds,
    );
    let look = design(result, q).and_then(|d| d.look(&history).ok());
    // The variance, floored at one grid step's rounding variance, step²/12 (W. F. Sheppard,
    // "On the calculation of the most probable values of frequency-constants", Proc. London
    // Math. Soc. 29, 1898): starts that happen to bracket the same grid points would
    // otherwise give a zero-width interval.
    let var = var.max(if integer || scale == GridScale::Linear {
        grid_step(q, step).powi(2) / 12.0
    } else {
        step * step / 12.0
    });
    let se = (var / n as f64).sqrt();
    let ci =
        look.and_then(|l| repeated_ci(mean, se, (n - 1) as f64, l.z_boundary, 1.0 - l.alpha).ok());
    out.look = look;
    if let Some(ci) = ci {
        // Every start bracketed a load between the bounds, so the capacity lies between
        // them: the interval is cut there (an early look's wide t quantile otherwise reaches
        // below zero, for a quantity that cannot be: issue 29's `[-18.0482, 42.7149]`).
        let (lo, hi) = (from(ci.lower).max(q.lower), from(ci.upper).min(q.upper));
        out.lower = Some(lo);
        out.upper = Some(hi);
        let half = (ci.upper - ci.lower) / 2.0;
        out.half_width = Some(if integer || scale == GridScale::Linear {
            half
        } else {
            half.exp() - 1.0
        });
        out.precise = half <= step * (1.0 + 1e-9);
        let text = |x: f64| load_text(q, x);
        out.note = format!(
            "{} {unit} [{}, {}]: {} (wanted {})",
            text(from(mean)),
            text(lo),
            text(hi),
            match out.half_width {
                _ if lo > from(ci.lower) || hi < from(ci.upper) => "cut at the bounds".to_owned(),
                Some(h) if scale == GridScale::Log && !integer => format!("±{}", pct(h)),
                Some(h) => format!("±{} {unit}", text(h)),
                None => String::new(),
            },
            precision_words(q)
        );
    } else {
        out.note = format!(
            "{} starts bracketed the capacity, but no look can be read yet (the first look is \
             after round {})",
            n, q.min_rounds
        );
    }
    out
}

/// A share rounded down to the percent shown (so 98.6% is not printed as a 99% that met a
/// 99% target).
fn pct_floor(a: f64) -> String {
    let v = (a * 1000.0).floor() / 10.0;
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}%")
    } else {
        format!("{v:.1}%")
    }
}

fn mean_var(xs: &[f64]) -> (Option<f64>, Option<f64>) {
    match servebench_stats::summary::mean_var(xs) {
        Some((m, v)) => (Some(m), Some(v)),
        None => (servebench_stats::summary::mean(xs), None),
    }
}

pub(super) fn comparison(
    result: &RunResult,
    q: &Search,
    baseline: &str,
    candidate: &str,
    round: u32,
) -> CapacityComparison {
    let mut out = CapacityComparison {
        candidate: candidate.to_owned(),
        baseline: baseline.to_owned(),
        ratio: None,
        lower: None,
        upper: None,
        verdict: "not-computed".into(),
        look: None,
        note: None,
    };
    let log = result.search.clone().unwrap_or_default();
    let integer = q.axis == SearchAxis::MaxConcurrency;
    let (scale, _) = scale_and_step(q);
    let of = |name: &str| {
        let blocks: Vec<&SearchBlock> = log.blocks.iter().filter(|b| b.variant == name).collect();
        starts(&blocks, scale, integer, round)
    };
    let (b, c) = (of(baseline), of(candidate));
    if b.below + b.above + c.below + c.above > 0 {
        out.note = Some("a capacity at a bound has no number to compare".into());
        return out;
    }
    let loads = |s: &Starts| -> Vec<f64> {
        s.on_scale
            .iter()
            .map(|g| if integer { *g } else { scale.from_scale(*g) })
            .collect()
    };
    let (bv, cv) = (loads(&b), loads(&c));
    if bv.len() < MIN_STARTS || cv.len() < MIN_STARTS {
        out.note = Some(format!(
            "{} and {} server starts bracketed the capacity: a comparison needs {MIN_STARTS} each",
            bv.len(),
            cv.len()
        ));
        return out;
    }
    let per_round: Vec<(usize, usize)> = b
        .per_round
        .iter()
        .zip(&c.per_round)
        .map(|(x, y)| (*x, *y))
        .collect();
    let history = look_history(&per_round, q.min_rounds);
    let Some(look) = design(result, q).and_then(|d| d.look(&history).ok()) else {
        out.note = Some(format!(
            "no look can be read yet (the first look is after round {})",
            q.min_rounds
        ));
        return out;
    };
    out.look = Some(look);
    let threshold = result.spec.spec.compare.threshold.max(f64::MIN_POSITIVE);
    // Welch's test on the logs of the starts' estimates, each arm's variance floored at a
    // grid step's rounding variance (module docs), read on the repeated interval at the
    // look's boundary, with the verdict rule of every other metric.
    let (scale, step) = scale_and_step(q);
    let arm = |xs: &[f64]| -> Option<(f64, f64, f64)> {
        let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
        let (m, v) = servebench_stats::summary::mean_var(&logs)?;
        let floor = if scale == GridScale::Log && !integer {
            step * step / 12.0
        } else {
            let g = grid_step(q, step) / m.exp();
            g * g / 12.0
        };
        Some((m, v.max(floor), logs.len() as f64))
    };
    let (Some((mb, vb, nb)), Some((mc, vc, nc))) = (arm(&bv), arm(&cv)) else {
        out.note = Some("not computed: too few estimates".into());
        return out;
    };
    let d = mc - mb;
    let (ub, uc) = (vb / nb, vc / nc);
    let se = (ub + uc).sqrt();
    let df = (ub + uc).powi(2) / (ub * ub / (nb - 1.0) + uc * uc / (nc - 1.0));
    match repeated_ci(d, se, df, look.z_boundary, 1.0 - look.alpha) {
        Ok(ci) => {
            let significant = ci.lower > 0.0 || ci.upper < 0.0;
            let v = classify(
                d,
                &ci,
                significant,
                threshold.ln_1p(),
                Direction::HigherIsBetter,
            );
            // Both capacities lie between the bounds, and so the ratio between their ratios.
            let (min, max) = (q.lower / q.upper, q.upper / q.lower);
            out.ratio = Some(d.exp());
            out.lower = Some(ci.lower.exp().max(min));
            out.upper = Some(ci.upper.exp().min(max));
            out.verdict = v.as_str().to_owned();
        }
        Err(e) => out.note = Some(format!("not computed: {e}")),
    }
    out
}

/// The grid's step in load units on a linear or whole-number grid.
fn grid_step(q: &Search, step: f64) -> f64 {
    if q.axis == SearchAxis::MaxConcurrency {
        step.round().max(1.0)
    } else {
        step
    }
}
