//! TensorRT-LLM's Prometheus series in the simulator, as read in
//! TensorRT-LLM, `tensorrt_llm/metrics/collector.py`: at `/prometheus/metrics`, only with
//! `return_perf_metrics` (`/metrics` is JSON); labels `model_name`, `engine_type`
//! (`pytorch`, the backend); counters `trtllm_prompt_tokens_total`,
//! `trtllm_generation_tokens_total`; the gauges `trtllm_num_requests_running`,
//! `trtllm_num_requests_waiting`, `trtllm_kv_cache_utilization`,
//! `trtllm_num_paused_requests` only with `enable_iter_perf_stats`
//! (`--enable-iter-perf-stats`; `log_iteration_stats`, started by openai_server.py's
//! lifespan only then, and run when a request finishes).

use crate::dialect::Snapshot;
use crate::dialect::metrics::{Family, escape, py_float, text};

/// TensorRT-LLM (metrics/collector.py): the per-request counters with
/// `return_perf_metrics`; the running, waiting, KV and paused gauges only with
/// `enable_iter_perf_stats` (`log_iteration_stats`, started by openai_server.py's lifespan
/// only then). Every series is recorded when a request ends, so `s` is the engine model's
/// state when the last request finished (`Dialect::metrics_snapshot`), and prometheus_client
/// writes no family without samples: before the first request has finished, the endpoint
/// serves none of them.
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
        // prometheus_client's multiprocess mode gives these gauges a `pid` label (finding 16).
        let lp = format!("{l},pid=\"{}\"", std::process::id());
        for (name, help, v) in gauges {
            f.head(name, help, "gauge");
            f.sample(name, &lp, &v);
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
        f.py_counter(name, help);
        f.sample(&format!("{name}_total"), &l, &n(v));
    }
    // One series per `finished_reason` seen (`log_request_metrics_dict`, the label's value
    // the output's `finish_reason`, `stop` or `length` for a request that ended normally:
    // executor/result.py `CompletionOutput`): the simulator's requests end at `max_tokens`
    // (`length`) or at a simulated EOS (`stop`).
    let name = "trtllm_request_success";
    f.py_counter(name, "Count of successfully processed requests.");
    let stop = s.finished_stop.min(s.finished);
    for (reason, count) in [("length", s.finished - stop), ("stop", stop)] {
        if count > 0 {
            f.sample(
                &format!("{name}_total"),
                &format!("engine_type=\"pytorch\",finished_reason=\"{reason}\",model_name=\"{m}\""),
                &n(count),
            );
        }
    }
}

/// TensorRT-LLM's series (`iter_stats`: its `enable_iter_perf_stats`).
pub(super) fn trtllm_text(model: &str, s: &Snapshot, iter_stats: bool) -> String {
    let m = escape(model);
    text(|f| trtllm(f, &m, s, iter_stats))
}
