//! `spec.search`: bounds, precision, budget, and what a search needs from the rest of the
//! spec (SLOs, no sweep, one server start per block).

use super::at;
use crate::diagnostics::Diagnostic;
use crate::position::PositionIndex;
use crate::search::{MAX_GRID_POINTS, max_grid_len, worst_case_total, worst_case_trials};
use crate::types::{Precision, Search, SearchAxis, ServerRestart, SpecFile, TrialOrder};

pub(super) fn check(spec: &SpecFile, index: &PositionIndex, out: &mut Vec<Diagnostic>) {
    let Some(q) = &spec.spec.search else {
        return;
    };
    let bounds_ok = bounds(q, out);
    let precision_ok = precision(q, bounds_ok, out);
    rounds(q, bounds_ok && precision_ok, out);
    rest_of_spec(spec, q, index, out);
}

fn unit(q: &Search) -> &'static str {
    q.axis.unit()
}

/// `lower` and `upper`: numbers > 0, in order, whole on the concurrency axis.
fn bounds(q: &Search, out: &mut Vec<Diagnostic>) -> bool {
    let mut ok = true;
    for (key, v) in [("lower", q.lower), ("upper", q.upper)] {
        if !(v.is_finite() && v > 0.0) {
            out.push(
                Diagnostic::error(
                    at(&format!("search.{key}")),
                    format!("`{key}` must be a load greater than 0; got {v}"),
                )
                .with_hint(format!(
                    "e.g. `{key}: {}`",
                    if key == "lower" { 1 } else { 64 }
                )),
            );
            ok = false;
        } else if q.axis == SearchAxis::MaxConcurrency && v.fract() != 0.0 {
            out.push(
                Diagnostic::error(
                    at(&format!("search.{key}")),
                    format!("a concurrency is a whole number of requests in flight; got {v}"),
                )
                .with_hint(format!("write `{key}: {}`", v.round().max(1.0))),
            );
            ok = false;
        }
    }
    if ok && q.lower >= q.upper {
        let d = if q.lower > q.upper {
            Diagnostic::error(
                at("search.upper"),
                format!(
                    "the bounds are inverted: `upper: {}` is below `lower: {}`",
                    q.upper, q.lower
                ),
            )
            .with_hint(format!(
                "swap them: `lower: {}`, `upper: {}`",
                q.upper, q.lower
            ))
        } else {
            Diagnostic::error(
                at("search.upper"),
                format!(
                    "`upper` equals `lower` ({} {}): there is nothing to search between them",
                    q.upper,
                    unit(q)
                ),
            )
            .with_hint(format!(
                "give a range that holds the capacity, e.g. `lower: {}`, `upper: {}`",
                q.lower / 4.0,
                q.upper * 4.0
            ))
        };
        out.push(d);
        ok = false;
    }
    ok
}

/// The precision: > 0, relative below 1, absolute whole on the concurrency axis, finer than
/// the bounds and not so fine that the grid is absurd.
fn precision(q: &Search, bounds_ok: bool, out: &mut Vec<Diagnostic>) -> bool {
    let (key, v) = match q.precision {
        Precision::Relative(p) => ("relative", p),
        Precision::Absolute(p) => ("absolute", p),
    };
    let path = at(&format!("search.precision.{key}"));
    if !(v.is_finite() && v > 0.0) {
        out.push(
            Diagnostic::error(
                path,
                format!("the precision must be greater than 0; got {v}"),
            )
            .with_hint("e.g. `precision: {relative: 0.05}` for ±5%"),
        );
        return false;
    }
    match q.precision {
        Precision::Relative(p) if p >= 1.0 => {
            out.push(
                Diagnostic::error(
                    path,
                    format!("a relative precision is a share below 1, e.g. 0.05 for ±5%; got {p}"),
                )
                .with_hint("write `precision: {relative: 0.05}`"),
            );
            return false;
        }
        Precision::Relative(_) if q.axis == SearchAxis::MaxConcurrency => {
            out.push(
                Diagnostic::error(
                    path,
                    "the `max_concurrency` axis is searched in whole numbers: its precision is \
                     absolute",
                )
                .with_hint("write `precision: {absolute: 1}` (or a coarser whole step)"),
            );
            return false;
        }
        Precision::Absolute(p) if q.axis == SearchAxis::MaxConcurrency && p.fract() != 0.0 => {
            out.push(
                Diagnostic::error(
                    path,
                    format!("a concurrency step is a whole number; got {p}"),
                )
                .with_hint(format!(
                    "write `precision: {{absolute: {}}}`",
                    p.round().max(1.0)
                )),
            );
            return false;
        }
        _ => {}
    }
    if !bounds_ok {
        return true;
    }
    let coarse = match q.precision {
        Precision::Relative(p) => 1.0 + p >= q.upper / q.lower,
        Precision::Absolute(p) => p >= q.upper - q.lower,
    };
    if coarse {
        out.push(
            Diagnostic::error(
                path,
                format!(
                    "a step of {} spans the whole range {}..{} {}: the search could only say \
                     whether the capacity is below or above it",
                    match q.precision {
                        Precision::Relative(p) => format!("{}%", p * 100.0),
                        Precision::Absolute(p) => format!("{p} {}", unit(q)),
                    },
                    q.lower,
                    q.upper,
                    unit(q)
                ),
            )
            .with_hint("ask for a finer precision, or widen `lower`..`upper`"),
        );
        return false;
    }
    if max_grid_len(q) > MAX_GRID_POINTS {
        out.push(
            Diagnostic::error(
                path,
                format!(
                    "this precision puts more than {MAX_GRID_POINTS} loads between {} and {} {}",
                    q.lower,
                    q.upper,
                    unit(q)
                ),
            )
            .with_hint("ask for a coarser precision, or narrow `lower`..`upper`"),
        );
        return false;
    }
    true
}

/// Rounds and the trial budget.
fn rounds(q: &Search, grid_ok: bool, out: &mut Vec<Diagnostic>) {
    if q.min_rounds < 3 {
        out.push(
            Diagnostic::error(
                at("search.min_rounds"),
                format!(
                    "a capacity interval needs 3 server starts per variant at least; \
                     `min_rounds` is {}",
                    q.min_rounds
                ),
            )
            .with_hint("write `min_rounds: 3` or more (the default is 3)"),
        );
    }
    if q.max_rounds < q.min_rounds {
        out.push(
            Diagnostic::error(
                at("search.max_rounds"),
                format!(
                    "`max_rounds: {}` is below `min_rounds: {}`",
                    q.max_rounds, q.min_rounds
                ),
            )
            .with_hint(format!(
                "write `max_rounds: {}` or more",
                q.min_rounds.max(3) * 2
            )),
        );
    }
    if !(q.attainment.is_finite() && q.attainment > 0.0 && q.attainment <= 1.0) {
        out.push(
            Diagnostic::error(
                at("search.attainment"),
                format!(
                    "the attainment target is the share of requests that must meet the SLOs, \
                     in (0, 1]; got {}",
                    q.attainment
                ),
            )
            .with_hint("e.g. `attainment: 0.99`"),
        );
    }
    let Some(max) = q.max_trials else { return };
    if !grid_ok {
        return;
    }
    let len = max_grid_len(q);
    let need = worst_case_total(len, q.min_rounds.max(1));
    if u64::from(max) < need {
        out.push(
            Diagnostic::error(
                at("search.max_trials"),
                format!(
                    "the budget `max_trials: {max}` is too small for the precision asked: \
                     bisecting {}..{} {} on a grid of up to {len} loads takes up to {} trials \
                     in the first round and {} in each later one, so the {} rounds an interval \
                     needs (`min_rounds`) may take {need}",
                    q.lower,
                    q.upper,
                    unit(q),
                    worst_case_trials(len, false),
                    worst_case_trials(len, true),
                    q.min_rounds
                ),
            )
            .with_hint(format!(
                "write `max_trials: {need}` or more, ask for a coarser precision, or narrow \
                 `lower`..`upper`"
            )),
        );
    }
}

/// What a search needs of the rest of the spec.
fn rest_of_spec(spec: &SpecFile, q: &Search, index: &PositionIndex, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    match &s.slo {
        None => out.push(
            Diagnostic::error(
                at("search"),
                "a capacity search needs service-level objectives: `spec.slo` is not set",
            )
            .with_hint("add e.g. `slo: {ttft: 2s, tpot: 50ms}` under `spec`"),
        ),
        Some(slo) if slo.ttft.is_none() && slo.tpot.is_none() && slo.e2e.is_none() => out.push(
            Diagnostic::error(
                at("slo"),
                "`slo` sets no objective: every request would meet it",
            )
            .with_hint("set `ttft`, `tpot` or `e2e`, e.g. `tpot: 50ms`"),
        ),
        _ => {}
    }
    if index.exact(&at("sweep")).is_some() {
        out.push(
            Diagnostic::error(
                at("sweep"),
                "`search` replaces `sweep`: the search chooses the loads it measures",
            )
            .with_hint("remove `sweep`, or remove `search` to measure fixed points"),
        );
    }
    let t = &s.trials;
    if t.until_decided.is_some() {
        out.push(
            Diagnostic::error(
                at("trials.until_decided"),
                "`until_decided` adds rounds to sweep points; a search adds its own rounds \
                 until `search.precision` is reached",
            )
            .with_hint("remove `until_decided` and set `search.max_rounds`"),
        );
    }
    if t.server_restart != ServerRestart::PerBlock {
        out.push(
            Diagnostic::error(
                at("trials.server_restart"),
                "a search measures each variant's capacity once per server start, bisecting \
                 within one start: it needs `server_restart: per_block`",
            )
            .with_hint("remove `server_restart` (per_block is the default)"),
        );
    }
    if t.order == TrialOrder::Blocked {
        out.push(
            Diagnostic::error(
                at("trials.order"),
                "`order: blocked` cannot be searched: each round interleaves the variants, so \
                 that drift hits every variant alike",
            )
            .with_hint("use `order: interleaved` (the default) or `random`"),
        );
    }
    if index.exact(&at("trials.count")).is_some() {
        out.push(
            Diagnostic::warning(
                at("trials.count"),
                "a search does not read `trials.count`: its rounds are `search.min_rounds` to \
                 `search.max_rounds`",
            )
            .with_hint("remove `trials.count`"),
        );
    }
    if s.server.is_none() {
        out.push(Diagnostic::warning(
            at("search"),
            "without a `server` block every round measures the same running server: the \
             variation between server starts is not captured, so the intervals are too narrow",
        ));
    }
    let w = &s.workload;
    match q.axis {
        SearchAxis::RequestRate if w.max_concurrency.is_some() => out.push(
            Diagnostic::warning(
                at("workload.max_concurrency"),
                "a concurrency limit holds requests back at high rates, and a trial whose \
                 client falls behind its schedule is invalid",
            )
            .with_hint("remove `max_concurrency` to search the rate alone"),
        ),
        SearchAxis::MaxConcurrency if index.exact(&at("workload.max_concurrency")).is_some() => out
            .push(Diagnostic::warning(
                at("workload.max_concurrency"),
                "the search sets `max_concurrency` of every trial: this value is not used",
            )),
        _ => {}
    }
    if q.axis == SearchAxis::RequestRate && index.exact(&at("workload.request_rate")).is_some() {
        out.push(Diagnostic::warning(
            at("workload.request_rate"),
            "the search sets `request_rate` of every trial: this value is not used",
        ));
    }
}
