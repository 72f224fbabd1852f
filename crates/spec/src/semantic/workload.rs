//! Workload, sweep, trials and compare settings.

use std::collections::BTreeSet;

use super::at;
use crate::diagnostics::{Diagnostic, did_you_mean};
use crate::metrics::{self, Aggregate};
use crate::position::PositionIndex;
use crate::rate::Rate;
use crate::types::{ArrivalProcess, DatasetKind, SpecFile, TokenCount};

pub(super) fn check(spec: &SpecFile, index: &PositionIndex, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let w = &s.workload;
    let d = &w.dataset;
    match d.kind {
        DatasetKind::Random | DatasetKind::Image => {
            if d.input_tokens.is_none() && s.sweep.input_tokens.is_none() {
                out.push(
                    Diagnostic::error(
                        at("workload.dataset"),
                        format!("a `{}` dataset needs `input_tokens`", kind_name(d.kind)),
                    )
                    .with_hint("e.g. `input_tokens: 512`"),
                );
            }
            if d.output_tokens.is_none() && s.sweep.output_tokens.is_none() {
                out.push(
                    Diagnostic::error(
                        at("workload.dataset"),
                        format!("a `{}` dataset needs `output_tokens`", kind_name(d.kind)),
                    )
                    .with_hint("e.g. `output_tokens: 128`"),
                );
            }
            if d.path.is_some() {
                out.push(
                    Diagnostic::error(
                        at("workload.dataset.path"),
                        "a `random` dataset reads no file",
                    )
                    .with_hint("remove `path`, or set `kind: jsonl` / `kind: sharegpt`"),
                );
            }
        }
        DatasetKind::Jsonl | DatasetKind::Sharegpt => {
            if d.path.as_deref().is_none_or(|p| p.trim().is_empty()) {
                out.push(
                    Diagnostic::error(
                        at("workload.dataset"),
                        format!("a `{}` dataset needs `path`", kind_name(d.kind)),
                    )
                    .with_hint("add `path: prompts.jsonl` (relative to the spec file)"),
                );
            }
            if d.input_tokens.is_some() {
                out.push(
                    Diagnostic::error(
                        at("workload.dataset.input_tokens"),
                        "input lengths of a prompt file come from its prompts",
                    )
                    .with_hint("remove `input_tokens`, or use `kind: random`"),
                );
            }
            if s.sweep.input_tokens.is_some() {
                out.push(Diagnostic::error(
                    at("sweep.input_tokens"),
                    "`sweep.input_tokens` needs a `random` dataset",
                ));
            }
        }
        // shared_prefix, multi_turn, trace: semantic::datasets
        DatasetKind::SharedPrefix | DatasetKind::MultiTurn | DatasetKind::Trace => {}
    }
    super::datasets::check(spec, out);
    let count_from_dataset = matches!(
        d.kind,
        DatasetKind::SharedPrefix | DatasetKind::MultiTurn | DatasetKind::Trace
    );
    for (key, count) in [
        ("input_tokens", d.input_tokens),
        ("output_tokens", d.output_tokens),
    ] {
        if let Some(TokenCount::Range(r)) = count
            && r.min > r.max
        {
            out.push(
                Diagnostic::error(
                    at(&format!("workload.dataset.{key}")),
                    format!("the range has min {} above max {}", r.min, r.max),
                )
                .with_hint(format!("write `{{min: {}, max: {}}}`", r.max, r.min)),
            );
        }
    }

    match (w.requests, w.duration) {
        _ if count_from_dataset => {}
        (Some(_), Some(_)) => out.push(
            Diagnostic::error(
                at("workload.duration"),
                "set `requests` or `duration`, not both",
            )
            .with_hint("a trial is either a count of requests or a length of time"),
        ),
        (None, None) => out.push(
            Diagnostic::error(
                at("workload"),
                "a trial needs `requests` (a count) or `duration` (a time)",
            )
            .with_hint("e.g. `requests: 200`"),
        ),
        (None, Some(dur)) if dur.is_zero() => out.push(Diagnostic::error(
            at("workload.duration"),
            "`duration` must be greater than 0",
        )),
        (None, Some(_)) => {
            let unbounded = crate::plan::sweep_points(spec)
                .iter()
                .any(|p| p.requests.is_none() && p.request_rate == crate::rate::Rate::Inf)
                && !searches_rate(spec);
            if unbounded {
                out.push(
                    Diagnostic::error(
                        at("workload.duration"),
                        "a trial by `duration` sends the requests due before it ends, so it needs a request rate; at `request_rate: inf` every request is due at once",
                    )
                    .with_hint("give `request_rate` a number (e.g. `request_rate: 20`, also in `sweep.request_rate`), or measure by count with `requests`"),
                );
            }
        }
        _ => {}
    }
    if w.request_timeout.is_zero() {
        out.push(
            Diagnostic::error(
                at("workload.request_timeout"),
                "`request_timeout` must be greater than 0",
            )
            .with_hint("e.g. `request_timeout: 600s`"),
        );
    }
    if w.trial_timeout.is_some_and(|t| t.is_zero()) {
        out.push(Diagnostic::error(
            at("workload.trial_timeout"),
            "`trial_timeout` must be greater than 0",
        ));
    }
    if !w.temperature.is_finite() {
        out.push(Diagnostic::error(
            at("workload.temperature"),
            "`temperature` must be a number",
        ));
    }
    let rate_numeric = !matches!(w.request_rate, Rate::Inf)
        || searches_rate(spec)
        || s.sweep
            .request_rate
            .as_ref()
            .is_some_and(|v| v.iter().any(|r| !matches!(r, Rate::Inf)));
    match (w.arrival, w.burstiness) {
        (ArrivalProcess::Gamma, None) => out.push(
            Diagnostic::error(
                at("workload.arrival"),
                "`arrival: gamma` needs `burstiness`",
            )
            .with_hint(
                "1 is Poisson, below 1 burstier, above 1 more regular: e.g. `burstiness: 0.5`",
            ),
        ),
        (ArrivalProcess::Gamma, Some(b)) if !(b.is_finite() && b > 0.0) => {
            out.push(Diagnostic::error(
                at("workload.burstiness"),
                format!("`burstiness` must be a number > 0; got {b}"),
            ))
        }
        (ArrivalProcess::Poisson | ArrivalProcess::Constant, Some(_)) => out.push(
            Diagnostic::error(
                at("workload.burstiness"),
                "`burstiness` is only read with `arrival: gamma`",
            )
            .with_hint("add `arrival: gamma` or remove `burstiness`"),
        ),
        _ => {}
    }
    if !rate_numeric && index.exact(&at("workload.arrival")).is_some() {
        out.push(Diagnostic::warning(
            at("workload.arrival"),
            "`arrival` has no effect with `request_rate: inf`: every request is due at once",
        ));
    }

    sweep(spec, out);
    concurrency_warnings(spec, out);
    compare(spec, out);
}

/// A search on the request-rate axis sets the rate of every trial (docs/search.md).
fn searches_rate(spec: &SpecFile) -> bool {
    spec.spec
        .search
        .as_ref()
        .is_some_and(|q| q.axis == crate::types::SearchAxis::RequestRate)
}

fn kind_name(k: DatasetKind) -> &'static str {
    match k {
        DatasetKind::Random => "random",
        DatasetKind::Jsonl => "jsonl",
        DatasetKind::Sharegpt => "sharegpt",
        DatasetKind::SharedPrefix => "shared_prefix",
        DatasetKind::MultiTurn => "multi_turn",
        DatasetKind::Trace => "trace",
        DatasetKind::Image => "image",
    }
}

fn sweep(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let sw = &spec.spec.sweep;
    fn dupes<T: ToString>(key: &str, vals: &[T], out: &mut Vec<Diagnostic>) {
        if vals.is_empty() {
            out.push(
                Diagnostic::error(
                    at(&format!("sweep.{key}")),
                    format!("`sweep.{key}` lists no values"),
                )
                .with_hint("list at least one value, or remove the key"),
            );
        }
        let mut seen = BTreeSet::new();
        for (i, v) in vals.iter().enumerate() {
            if !seen.insert(v.to_string()) {
                out.push(Diagnostic::error(
                    at(&format!("sweep.{key}[{i}]")),
                    format!("`{}` is listed twice in `sweep.{key}`", v.to_string()),
                ));
            }
        }
    }
    if let Some(v) = &sw.max_concurrency {
        dupes("max_concurrency", v, out);
        for (i, c) in v.iter().enumerate() {
            if *c == 0 {
                out.push(Diagnostic::error(
                    at(&format!("sweep.max_concurrency[{i}]")),
                    "a concurrency limit must be at least 1",
                ));
            }
        }
    }
    if let Some(v) = &sw.request_rate {
        dupes("request_rate", v, out);
    }
    if let Some(v) = &sw.input_tokens {
        dupes("input_tokens", v, out);
    }
    if let Some(v) = &sw.output_tokens {
        dupes("output_tokens", v, out);
    }
    if let Some(v) = &sw.trace_speed {
        dupes("trace_speed", v, out);
    }
    for (list, name) in [(&sw.include, "include"), (&sw.exclude, "exclude")] {
        for (i, p) in list.iter().enumerate() {
            if *p == Default::default() {
                out.push(
                    Diagnostic::error(
                        at(&format!("sweep.{name}[{i}]")),
                        format!("an `{name}` entry names no key"),
                    )
                    .with_hint("e.g. `{max_concurrency: 64}`"),
                );
            }
        }
    }
    for (i, ex) in sw.exclude.iter().enumerate() {
        if let Some(n) = ex.requests {
            out.push(
                Diagnostic::error(
                    at(&format!("sweep.exclude[{i}].requests")),
                    format!("`requests: {n}` in an `exclude` entry selects nothing: a point's request count is not one of its keys"),
                )
                .with_hint("remove `requests` here; to change a point's request count, exclude it and `include` it again with `requests`"),
            );
        }
    }
    let mut earlier = crate::plan::kept_matrix_points(spec);
    for (k, inc) in sw.include.iter().enumerate() {
        let p = crate::plan::include_point(spec, inc);
        if let Some(q) = earlier
            .iter()
            .find(|q| q.same_point(&p) && q.requests != p.requests)
        {
            let n = |r: Option<u32>| r.map_or_else(|| "no".to_string(), |n| n.to_string());
            out.push(
                Diagnostic::error(
                    at(&format!("sweep.include[{k}]")),
                    format!(
                        "this point ({p}) is already in the sweep with {} requests, here with {}: one point cannot run twice with different request counts",
                        n(q.requests),
                        n(p.requests)
                    ),
                )
                .with_hint("`exclude` the matrix point first, or drop the key from the sweep matrix and list every point under `include`"),
            );
        }
        earlier.push(p);
    }
    let points = crate::plan::sweep_points(spec);
    if points.is_empty() {
        out.push(Diagnostic::error(
            at("sweep"),
            "`exclude` removes every sweep point: nothing would run",
        ));
    }
    for (i, ex) in sw.exclude.iter().enumerate() {
        let matches_any = crate::plan::matrix_points(spec)
            .iter()
            .any(|p| p.matches(ex));
        if !matches_any && *ex != Default::default() {
            out.push(Diagnostic::warning(
                at(&format!("sweep.exclude[{i}]")),
                "this `exclude` entry matches no sweep point",
            ));
        }
    }
}

fn concurrency_warnings(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let Some(requests) = s.workload.requests else {
        return;
    };
    for p in crate::plan::sweep_points(spec) {
        let requests = p.requests.unwrap_or(requests);
        if let Some(c) = p.max_concurrency
            && u64::from(c) > u64::from(requests)
        {
            let path = if s.sweep.max_concurrency.is_some() {
                at("sweep.max_concurrency")
            } else {
                at("workload.max_concurrency")
            };
            out.push(Diagnostic::warning(path, format!(
                    "max_concurrency {c} is larger than the {requests} requests of a trial: at most {requests} can be in flight, so this point does not measure concurrency {c}"
                )).with_hint(format!("raise `workload.requests` to at least {c} (several times that for a steady state)")));
        }
    }
    let requests = crate::plan::sweep_points(spec)
        .iter()
        .filter_map(|p| p.requests)
        .min()
        .unwrap_or(requests);
    for (i, name) in s.compare.metrics.iter().enumerate() {
        if let Some(m) = metrics::metric(name)
            && let Aggregate::Quantile(q) = m.aggregate
        {
            let need = m.min_requests();
            if u64::from(requests) < need {
                out.push(Diagnostic::warning(at(&format!("compare.metrics[{i}]")), format!(
                        "`{name}` needs at least {need} requests per trial to be reportable (p{} from {requests} requests is mostly the maximum)", q * 100.0
                    )).with_hint(format!("raise `workload.requests` to {need}, or compare a lower percentile")));
            }
        }
    }
}

fn compare(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let c = &spec.spec.compare;
    let names = metrics::metric_names();
    let mut seen = BTreeSet::new();
    if c.metrics.is_empty() {
        out.push(
            Diagnostic::error(at("compare.metrics"), "`compare.metrics` lists no metric")
                .with_hint("e.g. `[output_throughput, ttft_p50]`"),
        );
    }
    for (i, m) in c.metrics.iter().enumerate() {
        if metrics::metric(m).is_none() {
            let d = Diagnostic::error(
                at(&format!("compare.metrics[{i}]")),
                format!("unknown metric `{m}`"),
            );
            out.push(match did_you_mean(m, names.iter().map(String::as_str)) {
                Some(s) => d.with_hint(format!(
                    "did you mean `{s}`? docs/metrics.md lists every metric"
                )),
                None => d.with_hint("docs/metrics.md lists every metric"),
            });
        }
        if !seen.insert(m.as_str()) {
            out.push(Diagnostic::error(
                at(&format!("compare.metrics[{i}]")),
                format!("metric `{m}` is listed twice"),
            ));
        }
    }
    for (k, v) in &c.thresholds {
        let p = at(&format!("compare.thresholds.{k}"));
        if metrics::metric(k).is_none() {
            let d = Diagnostic::error(p.clone(), format!("unknown metric `{k}`"));
            out.push(match did_you_mean(k, names.iter().map(String::as_str)) {
                Some(s) => d.with_hint(format!("did you mean `{s}`?")),
                None => d,
            });
        } else if !c.metrics.contains(k) {
            out.push(Diagnostic::warning(
                p.clone(),
                format!("a threshold is set for `{k}`, which `compare.metrics` does not list"),
            ));
        }
        if !(v.is_finite() && *v >= 0.0 && *v < 1.0) {
            out.push(Diagnostic::error(
                p,
                format!("a threshold is a fraction in [0, 1), e.g. 0.05 for 5%; got {v}"),
            ));
        }
    }
    if c.alpha <= 0.0 {
        out.push(
            Diagnostic::error(at("compare.alpha"), "`alpha` must be greater than 0")
                .with_hint("e.g. `alpha: 0.05`"),
        );
    }
}
