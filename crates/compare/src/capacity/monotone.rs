//! Attainment that is not monotone in the load. The search bisects on the assumption that
//! a load that fails makes every higher load fail; a server whose attainment rises with the
//! load (a cache that warms, a batch that fills, a noisy machine) breaks it, and the
//! bracket it ends with can then sit anywhere. Two patterns are said, as looks:
//!
//! * **within one server start**: a load passed although a lower one failed in the same
//!   start (the bisection measured both, so the start's bracket is not the only one its
//!   data allow);
//! * **across rounds**: over all starts of a variant, a load passed in every one of its
//!   trials (at least 2) while a load at least two grid steps lower failed in every one of
//!   its trials (at least 2). Starts differ in speed, so one start passing where another
//!   failed is the start-to-start spread the interval measures; unanimous trials at loads
//!   two steps apart, the wrong way round, are not.

use servebench_result::RunResult;
use servebench_spec::Search;
use servebench_spec::SearchAxis;
use servebench_spec::search::{GridScale, load_text, scale_and_step};

/// The looks for `variant` of `result` (empty when its attainment is monotone).
pub(super) fn not_monotone(result: &RunResult, q: &Search, variant: &str) -> Vec<String> {
    let Some(log) = result.search.as_ref() else {
        return Vec::new();
    };
    let unit = q.axis.unit();
    let text = |x: f64| load_text(q, x);
    let mut out = Vec::new();
    let blocks: Vec<_> = log.blocks.iter().filter(|b| b.variant == variant).collect();
    for b in &blocks {
        let judged: Vec<(f64, bool)> = b
            .steps
            .iter()
            .filter_map(|s| Some((s.load, s.passed?)))
            .collect();
        let pair = judged.iter().find_map(|&(hi, p)| {
            p.then(|| {
                judged
                    .iter()
                    .find(|&&(lo, q)| !q && lo < hi)
                    .map(|&(lo, _)| (lo, hi))
            })
            .flatten()
        });
        if let Some((lo, hi)) = pair {
            out.push(format!(
                "`{variant}`, round {} (block {}): {} {unit} passed although {} {unit} failed \
                 in the same server start — attainment is not monotone in the load, which the \
                 bisection assumes; this start's bracket is one of several its trials allow",
                b.round,
                b.block,
                text(hi),
                text(lo)
            ));
        }
    }
    // Across rounds: the share of passing trials per load.
    let mut by_load: Vec<(f64, u32, u32)> = Vec::new();
    for s in blocks.iter().flat_map(|b| &b.steps) {
        let Some(p) = s.passed else { continue };
        let tol = 1e-9 * s.load.abs().max(1.0);
        match by_load
            .iter_mut()
            .find(|(l, _, _)| (l - s.load).abs() <= tol)
        {
            Some((_, pass, all)) => {
                *pass += u32::from(p);
                *all += 1;
            }
            None => by_load.push((s.load, u32::from(p), 1)),
        }
    }
    by_load.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (scale, step) = scale_and_step(q);
    let apart = |lo: f64, hi: f64| match scale {
        GridScale::Log => (hi / lo).ln() >= 2.0 * step * (1.0 - 1e-9),
        GridScale::Linear => {
            hi - lo
                >= 2.0
                    * step.max(if q.axis == SearchAxis::MaxConcurrency {
                        1.0
                    } else {
                        0.0
                    })
                    * (1.0 - 1e-9)
        }
    };
    'outer: for (i, &(lo, lp, la)) in by_load.iter().enumerate() {
        if !(la >= 2 && lp == 0) {
            continue;
        }
        for &(hi, hp, ha) in &by_load[i + 1..] {
            if ha >= 2 && hp == ha && apart(lo, hi) {
                out.push(format!(
                    "`{variant}` across rounds: {} {unit} passed in {hp} of {ha} trial(s) while \
                     the lower {} {unit} failed in {} of {la} — attainment is not monotone in \
                     the load; look at the attainment of every trial (`servebench report`, \
                     capacity.svg) before trusting the capacity",
                    text(hi),
                    text(lo),
                    la - lp
                ));
                break 'outer;
            }
        }
    }
    out
}
