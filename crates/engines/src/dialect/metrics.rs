//! Prometheus metrics in each engine's names, at each engine's path, with values from the
//! engine model: running sequences, waiting requests, KV cache use (reserved / capacity:
//! the model reserves `prompt + max_tokens` at admission), preemptions, token counters.
//!
//! Preemptions are always 0: a sequence's KV is reserved whole at admission, so the model
//! never runs out of KV mid-generation, where vLLM (which allocates blocks as tokens come)
//! would preempt and recompute, or SGLang would retract.
//!
//! Each engine's series are written in its folder (`vllm/dialect/metrics.rs`, …) with the
//! helpers here, which write numbers as each runtime does; transformers serve has no metrics
//! endpoint; the generic dialect serves the simulator's own `servebench_sim_*` series at
//! `/metrics` (`generic` below).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::{Dialect, Host, Snapshot};

/// The metrics route of a dialect, where it has one (none for transformers serve).
pub(crate) fn routes(d: &dyn Dialect) -> Router<Arc<Host>> {
    match d.metrics_path() {
        Some(path) => Router::new().route(path, get(metrics)),
        None => Router::new(),
    }
}

async fn metrics(
    State(st): State<Arc<Host>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let d = st.dialect();
    if let Some(refused) = d.metrics_gate(&st, &query) {
        return refused;
    }
    if let Some(off) = d.metrics_off(st.config.wire.enable_metrics) {
        return off;
    }
    let body = d
        .metrics_snapshot(&st)
        .map(|s| d.metrics_text(&st.config.model, &s, &st.config.wire))
        .unwrap_or_default();
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, d.metrics_content_type())],
        Body::from(body),
    )
        .into_response()
}

/// prometheus_client's `CONTENT_TYPE_LATEST` (vLLM, SGLang, TensorRT-LLM).
pub(crate) const PROMETHEUS_CLIENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One metric family in the text format.
pub(crate) struct Family<'a> {
    out: &'a mut String,
}

impl Family<'_> {
    pub(crate) fn head(&mut self, name: &str, help: &str, kind: &str) {
        let _ = writeln!(self.out, "# HELP {name} {help}");
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
    }

    /// The head of a prometheus_client counter `name`: its text format (0.0.4) names the
    /// family by its `_total` sample in `# HELP` and `# TYPE` (prometheus_client 0.26.0,
    /// exposition.py:321-323, `generate_latest`), as SGLang 0.5.23's rendered `/metrics`
    /// shows; the simulator wrote `name` alone before.
    pub(crate) fn py_counter(&mut self, name: &str, help: &str) {
        self.head(&format!("{name}_total"), help, "counter");
    }

    pub(crate) fn sample(&mut self, name: &str, labels: &str, value: &str) {
        if labels.is_empty() {
            let _ = writeln!(self.out, "{name} {value}");
        } else {
            let _ = writeln!(self.out, "{name}{{{labels}}} {value}");
        }
    }
}

/// prometheus_client's `floatToGoString`: `3.0`, `0.25`.
pub(crate) fn py_float(x: f64) -> String {
    format!("{x:?}")
}

/// A C++ `ostream << double` (6 significant digits, `%g`).
pub(crate) fn cpp_double(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e6 {
        return format!("{x}");
    }
    let digits = 6;
    let exp = if x == 0.0 {
        0
    } else {
        x.abs().log10().floor() as i32
    };
    if !(-5..digits).contains(&exp) {
        let m = x / 10f64.powi(exp);
        let mut s = format!("{m:.5}");
        while s.contains('.') && (s.ends_with('0') || s.ends_with('.')) {
            s.pop();
        }
        return format!("{s}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    let decimals = usize::try_from(digits - 1 - exp).unwrap_or(0);
    let mut s = format!("{x:.decimals$}");
    while s.contains('.') && (s.ends_with('0') || s.ends_with('.')) {
        s.pop();
    }
    s
}

pub(crate) fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `total` split over `n` ranks: rank `r`'s share.
pub(crate) fn share(total: u64, r: u64, n: u64) -> u64 {
    total / n + u64::from(r < total % n)
}

/// The text `write` makes.
pub(crate) fn text(write: impl FnOnce(&mut Family<'_>)) -> String {
    let mut out = String::new();
    write(&mut Family { out: &mut out });
    out
}

pub(crate) fn n(v: u64) -> String {
    py_float(v as f64)
}

/// The simulator's own `servebench_sim_*` series (the generic dialect, and any dialect
/// whose engine serves none).
pub(crate) fn generic(s: &Snapshot) -> String {
    text(|f| {
        let gauges = [
            (
                "servebench_sim_requests_running",
                "Sequences admitted and not finished.",
                n(s.running),
            ),
            (
                "servebench_sim_requests_waiting",
                "Requests waiting for admission.",
                n(s.waiting),
            ),
            (
                "servebench_sim_kv_cache_usage_ratio",
                "KV tokens reserved / KV capacity (0-1).",
                py_float(s.kv_usage),
            ),
        ];
        for (name, help, v) in gauges {
            f.head(name, help, "gauge");
            f.sample(name, "", &v);
        }
        let counters = [
            (
                "servebench_sim_preemptions_total",
                "Preemptions (always 0: KV is reserved at admission).",
                s.preemptions,
            ),
            (
                "servebench_sim_requests_received_total",
                "Generation requests received.",
                s.requests,
            ),
            (
                "servebench_sim_prompt_tokens_total",
                "Prompt tokens prefilled.",
                s.prompt_tokens,
            ),
            (
                "servebench_sim_generation_tokens_total",
                "Tokens generated.",
                s.generation_tokens,
            ),
        ];
        for (name, help, v) in counters {
            f.head(name, help, "counter");
            f.sample(name, "", &n(v));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_each_runtime_writes_them() {
        assert_eq!(py_float(3.0), "3.0");
        assert_eq!(py_float(0.25), "0.25");
        assert_eq!(cpp_double(3.0), "3");
        assert_eq!(cpp_double(0.5), "0.5");
        assert_eq!(cpp_double(1234567.0), "1.23457e+06");
        assert_eq!(cpp_double(2.0 / 3.0), "0.666667");
    }
}
