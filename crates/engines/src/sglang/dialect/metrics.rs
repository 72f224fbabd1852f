//! SGLang's Prometheus series in the simulator, as read in
//! SGLang 0.5.23, `observability/metrics_collector.py:334-570, 1375-1395`: only with
//! `--enable-metrics`; labels `model_name`, `engine_type` (`unified`), `tp_rank`,
//! `pp_rank`, `moe_ep_rank`; gauges `sglang:num_running_reqs`, `sglang:num_queue_reqs`,
//! `sglang:token_usage` (0–1), `sglang:num_used_tokens`, `sglang:num_retracted_reqs`;
//! counter `sglang:num_retracted_requests_total`.

use crate::dialect::Snapshot;
use crate::dialect::metrics::{Family, escape, py_float, share, text};

/// Where a series is: its DP rank `r` among `ranks` (`--tp`, `--dp`), the process id that
/// prometheus_client's multiprocess mode adds to a gauge without a `multiprocess_mode`
/// (multiprocess.py:80-82; of the series written here only `sglang:num_retracted_reqs`,
/// finding 17), and its `priority` label with `--enable-priority-scheduling` (`""` for the
/// total, metrics_collector.py:1388-1390; the priority for its share, :1417-1428).
struct At<'a> {
    r: u64,
    pid: bool,
    priority: Option<&'a str>,
}

/// The labels of a series, sorted by name as the multiprocess collector writes them.
fn labels(m: &str, (tp, dp): (u64, u64), at: &At<'_>) -> String {
    let rank = (at.r * (tp / dp).max(1)).to_string();
    let mut l: Vec<(&str, String)> = vec![
        ("engine_type", "unified".into()),
        ("model_name", m.into()),
        ("moe_ep_rank", rank.clone()),
        ("pp_rank", "0".into()),
        ("tp_rank", rank),
    ];
    if dp > 1 {
        l.push(("dp_rank", at.r.to_string()));
    }
    if at.pid {
        l.push(("pid", (u64::from(std::process::id()) + at.r).to_string()));
    }
    if let Some(p) = at.priority {
        l.push(("priority", p.to_owned()));
    }
    l.sort_by_key(|(k, _)| *k);
    let l: Vec<String> = l.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    l.join(",")
}

/// SGLang 0.5.23 (observability/metrics_collector.py): one series per scheduler that logs;
/// with `--dp N` (data-parallel attention) one per DP rank, labelled `dp_rank` with its first
/// global `tp_rank` and `moe_ep_rank` (:1361-1392), each with its share of the requests; with
/// `--enable-priority-scheduling` every series labelled `priority=""`, and running and
/// waiting also per priority seen (`_log_gauge_queue_count`, :1413-1428).
fn sglang(f: &mut Family<'_>, m: &str, s: &Snapshot, ranks: (u64, u64), priorities: bool) {
    let dp = ranks.1;
    let n = |v: u64| py_float(v as f64);
    let total = priorities.then_some("");
    let per_rank = |total: u64| (0..dp).map(|r| n(share(total, r, dp))).collect::<Vec<_>>();
    let running: Vec<(i64, u64)> = s.by_priority.iter().map(|&(p, r, _)| (p, r)).collect();
    let waiting: Vec<(i64, u64)> = s.by_priority.iter().map(|&(p, _, w)| (p, w)).collect();
    let none = Vec::new();
    let gauges = [
        (
            "sglang:num_running_reqs",
            "The number of running requests.",
            per_rank(s.running),
            &running,
        ),
        (
            "sglang:num_queue_reqs",
            "The number of requests in the waiting queue.",
            per_rank(s.waiting),
            &waiting,
        ),
        (
            "sglang:token_usage",
            "The token usage.",
            (0..dp).map(|_| py_float(s.kv_usage)).collect(),
            &none,
        ),
        (
            "sglang:num_used_tokens",
            "The number of used tokens.",
            per_rank(s.kv_used_tokens),
            &none,
        ),
        (
            "sglang:num_retracted_reqs",
            "The number of retracted requests.",
            per_rank(0),
            &none,
        ),
    ];
    for (name, help, values, by) in gauges {
        f.head(name, help, "gauge");
        let pid = name == "sglang:num_retracted_reqs";
        for (r, v) in (0..dp).zip(values) {
            f.sample(
                name,
                &labels(
                    m,
                    ranks,
                    &At {
                        r,
                        pid,
                        priority: total,
                    },
                ),
                &v,
            );
            for &(p, count) in by.iter().filter(|_| priorities) {
                let p = p.to_string();
                let at = At {
                    r,
                    pid,
                    priority: Some(&p),
                };
                f.sample(name, &labels(m, ranks, &at), &n(share(count, r, dp)));
            }
        }
    }
    // A counter has no sample, and prometheus_client writes no family, until its first
    // increment (`increment_retracted_reqs`; metrics-retract-before.txt): a rank that has
    // retracted nothing serves none (the engine model never retracts).
    let retracted: Vec<(u64, u64)> = (0..dp)
        .map(|r| (r, share(s.preemptions, r, dp)))
        .filter(|&(_, v)| v > 0)
        .collect();
    if retracted.is_empty() {
        return;
    }
    f.py_counter(
        "sglang:num_retracted_requests",
        "Total number of retracted requests.",
    );
    for (r, v) in retracted {
        let at = At {
            r,
            pid: false,
            priority: total,
        };
        f.sample(
            "sglang:num_retracted_requests_total",
            &labels(m, ranks, &at),
            &n(v),
        );
    }
}

/// SGLang 0.5.23's series (`ranks`: its `--tp` and `--dp`; `priorities`: its
/// `--enable-priority-scheduling`).
pub(super) fn sglang_text(
    model: &str,
    s: &Snapshot,
    (tp, dp): (u32, u32),
    priorities: bool,
) -> String {
    let m = escape(model);
    let ranks = (u64::from(tp.max(1)), u64::from(dp.max(1)));
    text(|f| sglang(f, &m, s, ranks, priorities))
}
