//! SGLang's Prometheus series in the simulator, as read in
//! SGLang 0.5.23, `observability/metrics_collector.py:334-570, 1375-1395`: only with
//! `--enable-metrics`; labels `model_name`, `engine_type` (`unified`), `tp_rank`,
//! `pp_rank`, `moe_ep_rank`; gauges `sglang:num_running_reqs`, `sglang:num_queue_reqs`,
//! `sglang:token_usage` (0–1), `sglang:num_used_tokens`, `sglang:num_retracted_reqs`;
//! counter `sglang:num_retracted_requests_total`.

use crate::dialect::Snapshot;
use crate::dialect::metrics::{Family, escape, py_float, share, text};

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
            f.sample(name, &with_pid(name, &labels(r), r), &v);
        }
    }
    f.py_counter(
        "sglang:num_retracted_requests",
        "Total number of retracted requests.",
    );
    for r in 0..dp {
        f.sample(
            "sglang:num_retracted_requests_total",
            &labels(r),
            &n(share(s.preemptions, r, dp)),
        );
    }
}

/// `labels` with the `pid` label prometheus_client's multiprocess mode gives a gauge without a
/// `multiprocess_mode` (multiprocess.py:80-82), in sorted place: of the series written here
/// only `sglang:num_retracted_reqs` (finding 17); each scheduler rank is its own process.
fn with_pid(name: &str, labels: &str, rank: u64) -> String {
    if name != "sglang:num_retracted_reqs" {
        return labels.to_owned();
    }
    let pid = u64::from(std::process::id()) + rank;
    labels.replacen(",pp_rank=", &format!(",pid=\"{pid}\",pp_rank="), 1)
}

/// SGLang 0.5.23's series (`ranks`: its `--tp` and `--dp`).
pub(super) fn sglang_text(model: &str, s: &Snapshot, ranks: (u32, u32)) -> String {
    let m = escape(model);
    text(|f| sglang(f, &m, s, ranks))
}
