//! `compare.gate` (the gated metrics, points and margin, docs/compare.md "Gates") and the
//! waves of a closed-loop point: a point whose requests fill its concurrency limit fewer
//! than [`MIN_WAVES`] times holds the limit for about (k − 1)/k of a trial (k waves), at or
//! under the one half below which compare flags it `load-not-sustained`.

use super::at;
use crate::diagnostics::Diagnostic;
use crate::metrics::{self, Direction};
use crate::rate::Rate;
use crate::types::{Gate, GateCondition, SpecFile};

/// Fewer waves of a closed-loop point's concurrency than this is warned about.
pub(crate) const MIN_WAVES: u32 = 3;

pub(super) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    waves(spec, out);
    closed_by_limit(spec, out);
    if let Some(g) = &spec.spec.compare.gate {
        gate(spec, g, out);
    }
}

fn listed(names: &[String]) -> String {
    names
        .iter()
        .map(|m| format!("`{m}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn gate(spec: &SpecFile, g: &Gate, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    if let Some(metrics) = &g.metrics {
        if metrics.is_empty() {
            out.push(
                Diagnostic::error(at("compare.gate.metrics"), "`gate.metrics` lists no metric")
                    .with_hint("leave it out to gate every metric of `compare.metrics`"),
            );
        }
        for (i, m) in metrics.iter().enumerate() {
            let path = at(&format!("compare.gate.metrics[{i}]"));
            if !s.compare.metrics.contains(m) {
                out.push(
                    Diagnostic::error(
                        path,
                        format!("`{m}` is not compared: `compare.metrics` does not list it"),
                    )
                    .with_hint(format!(
                        "use one of {}, or add `{m}` to `compare.metrics`",
                        listed(&s.compare.metrics)
                    )),
                );
            } else if metrics::metric(m).is_some_and(|x| x.direction == Direction::Neutral) {
                out.push(
                    Diagnostic::error(
                        path,
                        format!("`{m}` is descriptive (no better direction): it cannot be gated"),
                    )
                    .with_hint("gate a throughput or a latency"),
                );
            }
        }
    }
    if let Some(m) = g.margin
        && !(m.is_finite() && m > 0.0 && m < 1.0)
    {
        out.push(
            Diagnostic::error(
                at("compare.gate.margin"),
                format!("the margin is a fraction in (0, 1), e.g. 0.05 for a 5% loss; got {m}"),
            )
            .with_hint("write e.g. `margin: 0.05`, or leave it out to use `compare.threshold`"),
        );
    }
    if s.search.is_some() {
        let cells = g.fail_on.iter().any(|c| {
            matches!(
                c,
                GateCondition::NotShownNonInferior
                    | GateCondition::NotShownSuperior
                    | GateCondition::Inconclusive
            )
        });
        if cells || !g.points.is_empty() {
            out.push(
                Diagnostic::error(
                    at("compare.gate"),
                    "a capacity search is gated on the verdict of its capacity ratio alone: \
                     only `regressed` and `likely-regressed` apply, and it has no sweep points",
                )
                .with_hint("write `gate: {fail_on: [regressed]}`"),
            );
        }
        return;
    }
    let points = crate::plan::sweep_points(spec);
    for (i, sel) in g.points.iter().enumerate() {
        let path = at(&format!("compare.gate.points[{i}]"));
        if !points.iter().any(|p| p.matches(&sel.as_sweep_point())) {
            let names: Vec<String> = points.iter().map(|p| format!("`{p}`")).collect();
            out.push(
                Diagnostic::error(path, "this entry matches no sweep point").with_hint(format!(
                    "the sweep points are {}; give keys that one of them has",
                    names.join(", ")
                )),
            );
        }
    }
}

/// The shortest time an LLM request takes, end to end: no served model answers a streamed
/// request in under a millisecond (the simulator's fastest personalities take several).
const FASTEST_REQUEST_S: f64 = 1e-3;

/// Open-loop points whose rate is so high that the concurrency limit binds before the
/// schedule does: with c requests in flight and each taking at least
/// [`FASTEST_REQUEST_S`], the client can send no faster than c / that time; a rate above it
/// only decides when the first c requests go, and the point is the same closed loop as
/// `request_rate: inf` (`--request-rate 100000 --max-concurrency 1`).
fn closed_by_limit(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    if s.search.is_some() {
        return;
    }
    let mut said = Vec::new();
    for p in crate::plan::sweep_points(spec) {
        let (Some(c), Rate::PerSecond(rate)) = (p.max_concurrency, p.request_rate) else {
            continue;
        };
        let ceiling = f64::from(c) / FASTEST_REQUEST_S;
        if rate <= ceiling || said.contains(&(c, rate.to_bits())) {
            continue;
        }
        said.push((c, rate.to_bits()));
        let path = if s.sweep.request_rate.is_some() {
            at("sweep.request_rate")
        } else {
            at("workload.request_rate")
        };
        out.push(
            Diagnostic::warning(
                path,
                format!(
                    "point `{p}`: {rate} requests/s under max_concurrency {c} is the same closed \
                     loop as `request_rate: inf`: {c} request(s) in flight, each taking at \
                     least {} ms, cannot be sent faster than {ceiling} a second, so the limit \
                     decides every send after the first {c}, not the rate",
                    FASTEST_REQUEST_S * 1e3
                ),
            )
            .with_hint(
                "write `request_rate: inf` to say what is measured, or a rate the server can \
                 keep up with to measure an open loop (then the limit is a safety cap)",
            ),
        );
    }
}

/// Closed-loop points whose measured requests are fewer than [`MIN_WAVES`] times the
/// concurrency limit (the case above one wave; one wave or less is warned about by the
/// workload checks).
fn waves(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    if s.search.is_some() {
        return;
    }
    let Some(default_requests) = s.workload.requests else {
        return;
    };
    for p in crate::plan::sweep_points(spec) {
        let (Some(c), Rate::Inf) = (p.max_concurrency, p.request_rate) else {
            continue;
        };
        let requests = p.requests.unwrap_or(default_requests);
        if c <= 1 || requests < c || requests >= MIN_WAVES.saturating_mul(c) {
            continue;
        }
        let path = s
            .sweep
            .include
            .iter()
            .position(|inc| inc.requests == Some(requests) && p.matches(inc))
            .map_or_else(
                || at("workload.requests"),
                |i| at(&format!("sweep.include[{i}].requests")),
            );
        let waves = f64::from(requests) / f64::from(c);
        out.push(
            Diagnostic::warning(
                path,
                format!(
                    "point `{p}`: {requests} requests at concurrency {c} are {waves:.1} waves: \
                     the client holds the limit for only about {:.0}% of each trial (k waves \
                     hold it for (k − 1)/k), close to the one half below which `compare` \
                     flags load-not-sustained",
                    100.0 * (waves - 1.0) / waves
                ),
            )
            .with_hint(format!(
                "give this point at least {} requests ({MIN_WAVES} waves; more for a steady \
                 state), e.g. with `sweep.include: [{{max_concurrency: {c}, requests: {}}}]`",
                MIN_WAVES * c,
                (MIN_WAVES + 1) * c
            )),
        );
    }
}
