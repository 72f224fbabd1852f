//! The telemetry flags of one comparison (`servebench_stats::flags::telemetry`), from what
//! each trial's summary recorded of its GPUs and its engine (`spec.telemetry`) and what each
//! server start found on its GPUs: per matched point server-queued, throttled, preempted and
//! kv-full, threatening every compared metric there; gpu-busy-at-start once, threatening the
//! verdicts of every point the busy starts measured.

use servebench_result::telemetry::TelemetrySummary;
use servebench_result::{RunResult, TrialStatus};
use servebench_stats::flags::telemetry::{
    StartCheck, TelemetryCheck, TelemetryThresholds, gpu_busy_at_start, kv_full, preempted,
    server_queued, throttled,
};
use servebench_stats::flags::{Flag, Threat};

use super::evidence::PointPair;
use super::report::MetricReport;

/// The trial's telemetry as the rules read it.
fn check(position: usize, t: &TelemetrySummary) -> TelemetryCheck {
    let server = t.server.as_ref();
    let mut reasons: Vec<(&String, &f64)> = t.gpu.reasons.iter().collect();
    reasons.sort_by(|a, b| b.1.total_cmp(a.1));
    TelemetryCheck {
        trial: position,
        waiting_while_held: server.and_then(|s| s.waiting_while_held),
        running_while_held: server.and_then(|s| s.running_while_held),
        throttled_share: t.gpu.throttled_share,
        gpu_samples: u64::try_from(t.gpu.samples).ok(),
        reasons: reasons
            .into_iter()
            .filter(|(n, _)| {
                servebench_result::telemetry::THROTTLE_REASONS
                    .iter()
                    .any(|(_, name, throttles)| *throttles && name == n)
            })
            .map(|(n, _)| n.clone())
            .collect(),
        sm_clock_ratio: t.gpu.sm_clock_ratio,
        preemptions: server.and_then(|s| s.preemptions),
        kv_full_share: server.and_then(|s| s.kv_full_share),
    }
}

/// The telemetry checks of `variant`'s ok trials at `point`, in run order.
fn checks(result: &RunResult, variant: &str, point: usize) -> Vec<TelemetryCheck> {
    let mut trials: Vec<_> = result
        .trials
        .iter()
        .filter(|t| t.variant == variant && t.point == point && t.status == TrialStatus::Ok)
        .collect();
    trials.sort_by_key(|t| t.seq);
    trials
        .iter()
        .enumerate()
        .filter_map(|(i, t)| Some(check(i, t.summary.as_ref()?.telemetry.as_ref()?)))
        .collect()
}

/// The GPUs of `variant`'s server starts, before each.
fn starts(result: &RunResult, variant: &str) -> Vec<StartCheck> {
    result
        .servers
        .iter()
        .filter(|s| s.variant == variant)
        .filter_map(|s| {
            let g = s.gpus_before_start.as_ref()?;
            Some(StartCheck {
                block: s.block,
                variant: s.variant.clone(),
                memory_used_mib: g.memory_used_mib.values().sum(),
                processes: g
                    .processes
                    .iter()
                    .map(|p| {
                        let mib = p
                            .used_mib
                            .map_or_else(String::new, |m| format!(", {m} MiB"));
                        format!(
                            "{} (pid {}{mib} on GPU {})",
                            p.name.as_deref().unwrap_or("a process"),
                            p.pid,
                            p.gpu
                        )
                    })
                    .collect(),
            })
        })
        .collect()
}

/// Every metric's verdict at `label`, as threats.
fn threats_at(metrics: &[MetricReport], label: &str) -> Vec<Threat> {
    metrics
        .iter()
        .filter_map(|m| {
            let row = m.points.iter().find(|p| p.label == label)?;
            Some(Threat {
                metric: m.metric.clone(),
                point: label.to_owned(),
                verdict: row.verdict.verdict(),
                otherwise: None,
            })
        })
        .collect()
}

/// The telemetry flags of the comparison of `base_v` in `base` with `cand_v` in `cand` over
/// the matched `pairs`.
pub(crate) fn flags(
    (base, base_v): (&RunResult, &str),
    (cand, cand_v): (&RunResult, &str),
    pairs: &[PointPair],
    metrics: &[MetricReport],
) -> Vec<Flag> {
    let th = TelemetryThresholds::default();
    let mut out = Vec::new();
    for pair in pairs {
        let b = checks(base, base_v, pair.base_point);
        let c = checks(cand, cand_v, pair.cand_point);
        if b.is_empty() && c.is_empty() {
            continue;
        }
        // Closed-loop points only record the engine's queue while the client held its limit.
        let mut found: Vec<Flag> = server_queued(&pair.label, pair.max_concurrency, &b, &c, &th)
            .into_iter()
            .collect();
        found.extend(throttled(&pair.label, &b, &c, &th));
        found.extend(preempted(&pair.label, &b, &c, &th));
        found.extend(kv_full(&pair.label, &b, &c, &th));
        let threats = threats_at(metrics, &pair.label);
        out.extend(found.into_iter().map(|f| f.threatening(threats.clone())));
    }
    let mut s = starts(base, base_v);
    if !std::ptr::eq(base, cand) || base_v != cand_v {
        s.extend(starts(cand, cand_v));
    }
    if let Some(f) = gpu_busy_at_start(&s, &th) {
        // The busy starts' points: every matched point (a start measures them all).
        let threats: Vec<Threat> = pairs
            .iter()
            .flat_map(|p| threats_at(metrics, &p.label))
            .collect();
        out.push(f.threatening(threats));
    }
    out
}
