//! Prometheus metrics in each engine's names, at each engine's path, with values from the
//! engine model: running sequences, waiting requests, KV cache use (reserved / capacity:
//! the model reserves `prompt + max_tokens` at admission), preemptions, token counters.
//!
//! Preemptions are always 0: a sequence's KV is reserved whole at admission, so the model
//! never runs out of KV mid-generation, where vLLM (which allocates blocks as tokens come)
//! would preempt and recompute, or SGLang would retract.
//!
//! * vLLM 0.33.0, `v1/metrics/loggers.py:499-812`: labels `model_name`, `engine`; gauges
//!   `vllm:num_requests_running`, `vllm:num_requests_waiting`,
//!   `vllm:num_requests_waiting_by_reason{reason=capacity|deferred}`,
//!   `vllm:kv_cache_usage_perc` (0–1); counters `vllm:num_preemptions`,
//!   `vllm:prompt_tokens`, `vllm:generation_tokens` (exposed with `_total`); always at
//!   `/metrics`; `vllm serve` uses prometheus_client's multiprocess collector
//!   (entrypoints/cli/serve.py:283, v1/metrics/prometheus.py), which sorts label names and
//!   writes no `_created` samples;
//! * SGLang 0.5.23, `observability/metrics_collector.py:334-570, 1375-1395`: only with
//!   `--enable-metrics`; labels `model_name`, `engine_type` (`unified`), `tp_rank`,
//!   `pp_rank`, `moe_ep_rank`; gauges `sglang:num_running_reqs`, `sglang:num_queue_reqs`,
//!   `sglang:token_usage` (0–1), `sglang:num_used_tokens`, `sglang:num_retracted_reqs`;
//!   counter `sglang:num_retracted_requests_total`;
//! * llama.cpp (llama-cpp-python 0.3.36), `tools/server/server-task.cpp:1523-1610`: only
//!   with `--metrics` (else 501 `not_supported_error`, server-context.cpp:4655-4660); no
//!   labels; counters `llamacpp:prompt_tokens_total`, `llamacpp:tokens_predicted_total`,
//!   `llamacpp:n_decode_total`; gauges `llamacpp:requests_processing`,
//!   `llamacpp:requests_deferred`; numbers written by a C++ stream (`3`, `0.5`);
//! * TGI db931fcf, `router/src/server.rs:1974-2070`, `backends/v3/src/backend.rs`,
//!   `queue.rs`: always at `/metrics`, no labels: `tgi_batch_current_size`,
//!   `tgi_queue_size`, `tgi_batch_current_max_tokens`;
//! * TensorRT-LLM, `tensorrt_llm/metrics/collector.py`: at `/prometheus/metrics`, only with
//!   `return_perf_metrics` (`/metrics` is JSON); labels `model_name`, `engine_type`
//!   (`pytorch`, the backend); counters `trtllm_prompt_tokens_total`,
//!   `trtllm_generation_tokens_total`; the gauges `trtllm_num_requests_running`,
//!   `trtllm_num_requests_waiting`, `trtllm_kv_cache_utilization`,
//!   `trtllm_num_paused_requests` only with `enable_iter_perf_stats`
//!   (`--enable-iter-perf-stats`; `log_iteration_stats`, started by openai_server.py's
//!   lifespan only then, and run when a request finishes);
//! * transformers serve: no metrics endpoint;
//! * the generic dialect: `servebench_sim_*` at `/metrics`.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::{Dialect, Host, Snapshot, of};

/// The metrics route of a dialect, where it has one (none for transformers serve).
pub(crate) fn routes(d: &dyn Dialect) -> Router<Arc<Host>> {
    match d.metrics_path() {
        Some(path) => Router::new().route(path, get(metrics)),
        None => Router::new(),
    }
}

async fn metrics(State(st): State<Arc<Host>>) -> Response {
    let d = of(st.config.wire.engine);
    if let Some(off) = d.metrics_off(st.config.wire.enable_metrics) {
        return off;
    }
    let body = d.metrics_text(&st.config.model, &st.metrics(), &st.config.wire);
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
struct Family<'a> {
    out: &'a mut String,
}

impl Family<'_> {
    fn head(&mut self, name: &str, help: &str, kind: &str) {
        let _ = writeln!(self.out, "# HELP {name} {help}");
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &str, value: &str) {
        if labels.is_empty() {
            let _ = writeln!(self.out, "{name} {value}");
        } else {
            let _ = writeln!(self.out, "{name}{{{labels}}} {value}");
        }
    }
}

/// prometheus_client's `floatToGoString`: `3.0`, `0.25`.
fn py_float(x: f64) -> String {
    format!("{x:?}")
}

/// A C++ `ostream << double` (6 significant digits, `%g`).
fn cpp_double(x: f64) -> String {
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

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `total` split over `n` ranks: rank `r`'s share.
fn share(total: u64, r: u64, n: u64) -> u64 {
    total / n + u64::from(r < total % n)
}

/// SGLang 0.5.23 (observability/metrics_collector.py): one series per scheduler that logs;
/// with `--dp N` (data-parallel attention) one per DP rank, labelled `dp_rank` with its first
/// global `tp_rank` and `moe_ep_rank` (:1361-1392), each with its share of the requests.
fn sglang(f: &mut Family<'_>, m: &str, s: &Snapshot, (tp, dp): (u32, u32)) {
    let (tp, dp) = (u64::from(tp.max(1)), u64::from(dp.max(1)));
    let n = |v: u64| py_float(v as f64);
    let labels = |r: u64| {
        let rank = r * (tp / dp).max(1);
        let base = format!(
            "engine_type=\"unified\",model_name=\"{m}\",moe_ep_rank=\"{rank}\",pp_rank=\"0\",\
             tp_rank=\"{rank}\""
        );
        if dp > 1 {
            format!("dp_rank=\"{r}\",{base}")
        } else {
            base
        }
    };
    let per_rank = |total: u64| (0..dp).map(|r| n(share(total, r, dp))).collect::<Vec<_>>();
    let gauges = [
        (
            "sglang:num_running_reqs",
            "The number of running requests.",
            per_rank(s.running),
        ),
        (
            "sglang:num_queue_reqs",
            "The number of requests in the waiting queue.",
            per_rank(s.waiting),
        ),
        (
            "sglang:token_usage",
            "The token usage.",
            (0..dp).map(|_| py_float(s.kv_usage)).collect(),
        ),
        (
            "sglang:num_used_tokens",
            "The number of used tokens.",
            per_rank(s.kv_used_tokens),
        ),
        (
            "sglang:num_retracted_reqs",
            "The number of retracted requests.",
            per_rank(0),
        ),
    ];
    for (name, help, values) in gauges {
        f.head(name, help, "gauge");
        for (r, v) in (0..dp).zip(values) {
            f.sample(name, &labels(r), &v);
        }
    }
    f.head(
        "sglang:num_retracted_requests",
        "Total number of retracted requests.",
        "counter",
    );
    for r in 0..dp {
        f.sample(
            "sglang:num_retracted_requests_total",
            &labels(r),
            &n(share(s.preemptions, r, dp)),
        );
    }
}

/// TensorRT-LLM (metrics/collector.py): the per-request counters with
/// `return_perf_metrics`; the running, waiting, KV and paused gauges only with
/// `enable_iter_perf_stats` (`log_iteration_stats`, started by openai_server.py's lifespan
/// only then). TensorRT-LLM updates those gauges when a request finishes; the simulator
/// writes the engine model's values at each scrape. Every series is recorded at a request's
/// end and prometheus_client writes no family without samples: before the first request has
/// finished, the endpoint serves none of them.
fn trtllm(f: &mut Family<'_>, m: &str, s: &Snapshot, iter_stats: bool) {
    if s.finished == 0 {
        return;
    }
    let n = |v: u64| py_float(v as f64);
    let l = format!("engine_type=\"pytorch\",model_name=\"{m}\"");
    if iter_stats {
        let gauges = [
            (
                "trtllm_num_requests_running",
                "Number of active requests",
                n(s.running),
            ),
            (
                "trtllm_num_requests_waiting",
                "Number of queued requests",
                n(s.waiting),
            ),
            (
                "trtllm_kv_cache_utilization",
                "KV cache utilization",
                py_float(s.kv_usage),
            ),
            (
                "trtllm_num_paused_requests",
                "Number of paused requests",
                n(s.preemptions),
            ),
        ];
        for (name, help, v) in gauges {
            f.head(name, help, "gauge");
            f.sample(name, &l, &v);
        }
    }
    let counters = [
        (
            "trtllm_prompt_tokens",
            "Cumulative number of prompt (input) tokens processed.",
            s.prompt_tokens,
        ),
        (
            "trtllm_generation_tokens",
            "Cumulative number of generation (output) tokens produced.",
            s.generation_tokens,
        ),
    ];
    for (name, help, v) in counters {
        f.head(name, help, "counter");
        f.sample(&format!("{name}_total"), &l, &n(v));
    }
    // Labelled by `finished_reason` in TensorRT-LLM; the simulator counts every finished
    // request under `length` (its requests run to max_tokens unless they stop early).
    let name = "trtllm_request_success";
    f.head(name, "Count of successfully processed requests.", "counter");
    f.sample(
        &format!("{name}_total"),
        &format!("engine_type=\"pytorch\",finished_reason=\"length\",model_name=\"{m}\""),
        &n(s.finished),
    );
}

/// The text `write` makes.
fn text(write: impl FnOnce(&mut Family<'_>)) -> String {
    let mut out = String::new();
    write(&mut Family { out: &mut out });
    out
}

fn n(v: u64) -> String {
    py_float(v as f64)
}

/// vLLM 0.33.0's series.
pub(crate) fn vllm(model: &str, s: &Snapshot) -> String {
    let m = escape(model);
    text(|f| {
        let l = format!("engine=\"0\",model_name=\"{m}\"");
        let gauges = [
            (
                "vllm:num_requests_running",
                "Number of requests in model execution batches.",
                n(s.running),
            ),
            (
                "vllm:num_requests_waiting",
                "Number of requests waiting to be processed.",
                n(s.waiting),
            ),
        ];
        for (name, help, v) in gauges {
            f.head(name, help, "gauge");
            f.sample(name, &l, &v);
        }
        let name = "vllm:num_requests_waiting_by_reason";
        f.head(
            name,
            "Number of waiting requests by reason. Reason labels: 'capacity' = waiting \
                 for scheduling capacity; 'deferred' = deferred by transient constraints (LoRA \
                 budget, KV transfer, blocked status). Sum of all reasons equals \
                 vllm:num_requests_waiting.",
            "gauge",
        );
        f.sample(name, &format!("{l},reason=\"capacity\""), &n(s.waiting));
        f.sample(name, &format!("{l},reason=\"deferred\""), &n(0));
        f.head(
            "vllm:kv_cache_usage_perc",
            "KV-cache usage. 1 means 100 percent usage.",
            "gauge",
        );
        f.sample("vllm:kv_cache_usage_perc", &l, &py_float(s.kv_usage));
        let counters = [
            (
                "vllm:num_preemptions",
                "Cumulative number of preemption from the engine.",
                s.preemptions,
            ),
            (
                "vllm:prompt_tokens",
                "Number of prefill tokens processed.",
                s.prompt_tokens,
            ),
            (
                "vllm:generation_tokens",
                "Number of generation tokens processed.",
                s.generation_tokens,
            ),
        ];
        for (name, help, v) in counters {
            f.head(name, help, "counter");
            f.sample(&format!("{name}_total"), &l, &n(v));
        }
    })
}

/// SGLang 0.5.23's series (`ranks`: its `--tp` and `--dp`).
pub(crate) fn sglang_text(model: &str, s: &Snapshot, ranks: (u32, u32)) -> String {
    let m = escape(model);
    text(|f| sglang(f, &m, s, ranks))
}

/// llama.cpp's series.
pub(crate) fn llamacpp(s: &Snapshot) -> String {
    text(|f| {
        let c = |v: u64| cpp_double(v as f64);
        let counters = [
            (
                "prompt_tokens_total",
                "Number of prompt tokens processed, excluding cached tokens",
                c(s.prompt_tokens),
            ),
            (
                "tokens_predicted_total",
                "Number of generation tokens processed",
                c(s.generation_tokens),
            ),
            (
                "n_decode_total",
                "Total number of llama_decode() calls, excluding speculative decoding and \
                     multimodal decoding",
                c(s.steps),
            ),
        ];
        for (name, help, v) in counters {
            let name = format!("llamacpp:{name}");
            f.head(&name, help, "counter");
            f.sample(&name, "", &v);
        }
        let gauges = [
            (
                "requests_processing",
                "Number of requests processing",
                c(s.running),
            ),
            (
                "requests_deferred",
                "Number of requests deferred",
                c(s.waiting),
            ),
        ];
        for (name, help, v) in gauges {
            let name = format!("llamacpp:{name}");
            f.head(&name, help, "gauge");
            f.sample(&name, "", &v);
        }
    })
}

/// TGI's series.
pub(crate) fn tgi(s: &Snapshot) -> String {
    text(|f| {
        let gauges = [
            ("tgi_batch_current_size", "Current batch size", s.running),
            ("tgi_queue_size", "Current queue size", s.waiting),
            (
                "tgi_batch_current_max_tokens",
                "Maximum tokens for the current batch",
                s.kv_used_tokens,
            ),
        ];
        for (name, help, v) in gauges {
            f.head(name, help, "gauge");
            f.sample(name, "", &v.to_string());
        }
    })
}

/// TensorRT-LLM's series (`iter_stats`: its `enable_iter_perf_stats`).
pub(crate) fn trtllm_text(model: &str, s: &Snapshot, iter_stats: bool) -> String {
    let m = escape(model);
    text(|f| trtllm(f, &m, s, iter_stats))
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
