//! vLLM's Prometheus series in the simulator, as read in
//! vLLM 0.33.0, `v1/metrics/loggers.py:499-812`: labels `model_name`, `engine`; gauges
//! `vllm:num_requests_running`, `vllm:num_requests_waiting`,
//! `vllm:num_requests_waiting_by_reason{reason=capacity|deferred}`,
//! `vllm:kv_cache_usage_perc` (0–1); counters `vllm:num_preemptions`,
//! `vllm:prompt_tokens`, `vllm:generation_tokens` (exposed with `_total`); always at
//! `/metrics`. prometheus_client's multiprocess collector (no `_created` samples) only with
//! `--api-server-count` > 1 (0.26.0 entrypoints/cli/serve.py:268-269); one API server, the
//! default, exports the default registry: a `_created` gauge family beside each counter (its
//! creation time, written as Go writes floats) and the `python_gc_*`/`process_*` families
//! (seen in transcripts/0.26.0/metrics-*.http). The simulator writes the `_created` families,
//! its counters created at its first scrape, and not the Python process families.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

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
        let created = go_float(created());
        for (name, help, v) in counters {
            f.py_counter(name, help);
            f.sample(&format!("{name}_total"), &l, &n(v));
            let c = format!("{name}_created");
            f.head(&c, help, "gauge");
            f.sample(&c, &l, &created);
        }
    })
}

/// When the simulator's counters were created: its first scrape, as seconds since the epoch.
fn created() -> f64 {
    static AT: OnceLock<f64> = OnceLock::new();
    *AT.get_or_init(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    })
}

/// prometheus_client's `floatToGoString` (utils.py): Python's repr, and a positive number
/// with more than 6 digits before the point in exponent form, `1.796618004276472e+09`.
fn go_float(x: f64) -> String {
    let s = format!("{x:?}");
    match s.find('.') {
        Some(dot) if x > 0.0 && dot > 6 => {
            let digits = format!("{}{}", &s[1..dot], &s[dot + 1..]);
            let mantissa = format!("{}.{digits}", &s[..1]);
            format!("{}e+0{}", mantissa.trim_end_matches(['0', '.']), dot - 1)
        }
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    // prometheus_client 0.26.0's rule, on the value of transcripts/0.26.0/
    // metrics-under-load.http's `vllm:num_preemptions_created`.
    #[test]
    fn created_times_are_written_as_go_writes_them() {
        assert_eq!(
            super::go_float(1_796_618_004.276_472),
            "1.796618004276472e+09"
        );
        assert_eq!(super::go_float(0.25), "0.25");
        assert_eq!(super::go_float(16.0), "16.0");
    }
}
