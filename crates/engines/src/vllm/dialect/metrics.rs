//! vLLM's Prometheus series in the simulator, as read in
//! vLLM 0.33.0, `v1/metrics/loggers.py:499-812`: labels `model_name`, `engine`; gauges
//! `vllm:num_requests_running`, `vllm:num_requests_waiting`,
//! `vllm:num_requests_waiting_by_reason{reason=capacity|deferred}`,
//! `vllm:kv_cache_usage_perc` (0–1); counters `vllm:num_preemptions`,
//! `vllm:prompt_tokens`, `vllm:generation_tokens` (exposed with `_total`); always at
//! `/metrics`. prometheus_client's multiprocess collector (no `_created` samples) only with
//! `--api-server-count` > 1 (0.26.0 entrypoints/cli/serve.py:268-269); one API server, the
//! default, exports the default registry: a `_created` gauge family beside each counter and
//! the `python_gc_*`/`process_*` families (seen in transcripts/0.26.0/metrics-*.http). The
//! simulator writes neither: the client must (and does, `telemetry::prom`) read both forms.

use crate::dialect::Snapshot;
use crate::dialect::metrics::{escape, n, py_float, text};

/// vLLM 0.33.0's series.
pub(super) fn vllm(model: &str, s: &Snapshot) -> String {
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
            f.py_counter(name, help);
            f.sample(&format!("{name}_total"), &l, &n(v));
        }
    })
}
