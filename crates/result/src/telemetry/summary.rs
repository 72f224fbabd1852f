//! One trial's telemetry in its summary: mean, min and max of each GPU quantity over the
//! trial's window (first send to last end), the energy drawn, the share of samples with a
//! throttling reason, the SM clock against the GPU's highest; and from the server's scrapes
//! running, waiting and KV use, the preemptions during the trial, and — for a closed-loop
//! point — how many requests the engine held waiting while the client held its limit.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::series::{GpuSeries, THROTTLE_REASONS, THROTTLING_MASK, TrialTelemetry};
use crate::record::RequestRecord;

/// Mean, smallest and largest value of a quantity over a window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Span {
    /// Arithmetic mean over the samples.
    pub mean: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Span {
    /// `None` without a finite value.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Span> {
        let (mut n, mut sum, mut min, mut max) = (0usize, 0.0, f64::INFINITY, f64::NEG_INFINITY);
        for v in values.into_iter().filter(|v| v.is_finite()) {
            n += 1;
            sum += v;
            min = min.min(v);
            max = max.max(v);
        }
        (n > 0).then(|| Span {
            mean: sum / n as f64,
            min,
            max,
        })
    }
}

/// The GPUs over a trial (every sampled GPU together: per-GPU quantities are averaged over
/// GPUs and samples, power and energy summed over GPUs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuSummary {
    /// Where the samples came from (`nvml`, `nvidia-smi`, `fake`), or `none`.
    pub source: String,
    /// Why there are none, or what was missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// GPUs sampled.
    pub gpus: usize,
    /// Their names (one per distinct name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Samples inside the window, over every GPU.
    pub samples: usize,
    /// SM clock, MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz: Option<Span>,
    /// Memory clock, MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_clock_mhz: Option<Span>,
    /// Power of all the GPUs together, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<Span>,
    /// Temperature, °C.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<Span>,
    /// Kernel utilisation, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub util_gpu_pct: Option<Span>,
    /// Memory in use per GPU, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_used_mib: Option<Span>,
    /// Energy all the GPUs drew over the window, J.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// How the energy was found: `counter` (the driver's energy counter) or `power` (the
    /// power samples integrated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_from: Option<String>,
    /// Share of the samples with a throttling reason ([`THROTTLING_MASK`]: power cap,
    /// thermal or hardware slowdown), where reasons were reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_share: Option<f64>,
    /// Share of the samples with each reason, by name (reasons seen only).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reasons: BTreeMap<String, f64>,
    /// Mean SM clock of the busy samples (a kernel ran) over the GPU's highest SM clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_ratio: Option<f64>,
}

/// The server's scrapes over a trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerSummary {
    /// Scrapes inside the window.
    pub scrapes: usize,
    /// Scrapes that failed, over the trial.
    pub failed: usize,
    /// Requests running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<Span>,
    /// Requests waiting in the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Span>,
    /// KV-cache use, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_usage: Option<Span>,
    /// Share of the scrapes with KV use at 98% or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_full_share: Option<f64>,
    /// Preemptions during the trial (the counter's rise; a gauge's largest value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptions: Option<f64>,
    /// Closed-loop points: scrapes at which the client held its limit (≥ 90% of it in
    /// flight while requests were still to be sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_scrapes: Option<usize>,
    /// Mean requests waiting in the engine at those scrapes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_while_held: Option<f64>,
    /// Mean requests running at those scrapes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_while_held: Option<f64>,
}

/// A trial's telemetry in its summary, and the energy metrics of the catalogue.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetrySummary {
    /// The GPUs.
    pub gpu: GpuSummary,
    /// The server's metrics, when they were scraped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerSummary>,
    /// Why the server's metrics were not scraped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_note: Option<String>,
    /// Output tokens over the window per joule the GPUs drew (`output_tokens_per_joule`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_joule: Option<f64>,
    /// Joules per output token (`joules_per_output_token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules_per_output_token: Option<f64>,
}

impl TelemetrySummary {
    /// A catalogue metric of telemetry, by name.
    pub fn metric(&self, name: &str) -> Option<f64> {
        match name {
            "output_tokens_per_joule" => self.output_tokens_per_joule,
            "joules_per_output_token" => self.joules_per_output_token,
            _ => None,
        }
    }
}

/// What summarising a trial's telemetry needs besides the capture.
#[derive(Debug, Clone, Copy)]
pub struct TelemetryWindow<'a> {
    /// The measured requests (instants in ns from the trial's measured start).
    pub records: &'a [RequestRecord],
    /// The trial's window, ns from its start (first send, last end).
    pub window_ns: Option<(u64, u64)>,
    /// Output tokens counted inside the window.
    pub output_tokens: u64,
    /// The concurrency limit of a closed-loop point (`None`: open loop or no limit).
    pub closed_loop_limit: Option<usize>,
}

fn to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The samples of `g` inside `[a, b]` ms, by position.
fn inside(g: &[i64], (a, b): (f64, f64)) -> impl Iterator<Item = usize> + '_ {
    g.iter()
        .enumerate()
        .filter(move |(_, t)| (**t as f64) >= a && (**t as f64) <= b)
        .map(|(i, _)| i)
}

/// Energy of one GPU over `[a, b]` ms: the counter's rise between the first and last sample
/// inside, scaled to the window; else the power samples integrated (trapezoids), scaled the
/// same way. `None` with fewer than two samples.
fn energy(g: &GpuSeries, w: (f64, f64)) -> Option<(f64, &'static str)> {
    let idx: Vec<usize> = inside(&g.t_ms, w).collect();
    let (&first, &last) = (idx.first()?, idx.last()?);
    let span_ms = (g.t_ms[last] - g.t_ms[first]) as f64;
    if span_ms <= 0.0 {
        return None;
    }
    let scale = (w.1 - w.0) / span_ms;
    let counter = idx
        .iter()
        .filter_map(|&i| g.energy_mj[i].map(|e| (i, e)))
        .collect::<Vec<_>>();
    if let (Some(&(i0, e0)), Some(&(i1, e1))) = (counter.first(), counter.last())
        && i1 > i0
        && e1 >= e0
    {
        let span = (g.t_ms[i1] - g.t_ms[i0]) as f64;
        if span > 0.0 {
            return Some(((e1 - e0) as f64 / 1e3 * (w.1 - w.0) / span, "counter"));
        }
    }
    let mut joules = 0.0;
    let mut any = false;
    for pair in idx.windows(2) {
        let (i, j) = (pair[0], pair[1]);
        if let (Some(p0), Some(p1)) = (g.power_w[i], g.power_w[j]) {
            joules += (p0 + p1) / 2.0 * (g.t_ms[j] - g.t_ms[i]) as f64 / 1e3;
            any = true;
        }
    }
    any.then_some((joules * scale, "power"))
}

fn gpu_summary(t: &TrialTelemetry, w: (f64, f64)) -> GpuSummary {
    let mut out = GpuSummary {
        source: t.gpu_source.clone(),
        note: t.gpu_note.clone(),
        gpus: t.devices.len(),
        ..GpuSummary::default()
    };
    for d in &t.devices {
        if !out.names.contains(&d.name) {
            out.names.push(d.name.clone());
        }
    }
    let samples: Vec<(&GpuSeries, usize)> = t
        .gpus
        .iter()
        .flat_map(|g| inside(&g.t_ms, w).map(move |i| (g, i)))
        .collect();
    out.samples = samples.len();
    let f = |pick: fn(&GpuSeries, usize) -> Option<f64>| {
        Span::of(samples.iter().filter_map(|(g, i)| pick(g, *i)))
    };
    out.sm_clock_mhz = f(|g, i| g.sm_clock_mhz[i].map(f64::from));
    out.mem_clock_mhz = f(|g, i| g.mem_clock_mhz[i].map(f64::from));
    out.temperature_c = f(|g, i| g.temperature_c[i].map(f64::from));
    out.util_gpu_pct = f(|g, i| g.util_gpu_pct[i].map(f64::from));
    out.memory_used_mib = f(|g, i| g.memory_used_mib[i].map(|m| m as f64));
    // Power of all GPUs together: per-GPU spans added (the GPUs are sampled together).
    let per_gpu: Vec<Span> = t
        .gpus
        .iter()
        .filter_map(|g| Span::of(inside(&g.t_ms, w).filter_map(|i| g.power_w[i])))
        .collect();
    if !per_gpu.is_empty() {
        out.power_w = Some(Span {
            mean: per_gpu.iter().map(|s| s.mean).sum(),
            min: per_gpu.iter().map(|s| s.min).sum(),
            max: per_gpu.iter().map(|s| s.max).sum(),
        });
    }
    let energies: Vec<(f64, &str)> = t.gpus.iter().filter_map(|g| energy(g, w)).collect();
    if !energies.is_empty() && energies.len() == t.gpus.len() {
        out.energy_j = Some(energies.iter().map(|e| e.0).sum());
        out.energy_from = Some(if energies.iter().all(|e| e.1 == "counter") {
            "counter".to_owned()
        } else {
            "power".to_owned()
        });
    }
    let reasons: Vec<u64> = samples.iter().filter_map(|(g, i)| g.throttle[*i]).collect();
    if !reasons.is_empty() {
        let n = reasons.len() as f64;
        let share = |mask: u64| reasons.iter().filter(|r| **r & mask != 0).count() as f64 / n;
        out.throttled_share = Some(share(THROTTLING_MASK));
        for (bit, name, _) in THROTTLE_REASONS {
            let s = share(bit);
            if s > 0.0 {
                out.reasons.insert(name.to_owned(), s);
            }
        }
    }
    // Busy samples: a kernel ran in the sample period (no utilisation reported: every one).
    let ratios: Vec<f64> = samples
        .iter()
        .filter(|(g, i)| g.util_gpu_pct[*i].is_none_or(|u| u > 0))
        .filter_map(|(g, i)| {
            let max = t.devices.get(g.gpu)?.max_sm_clock_mhz.filter(|m| *m > 0)?;
            Some(f64::from(g.sm_clock_mhz[*i]?) / f64::from(max))
        })
        .collect();
    out.sm_clock_ratio = Span::of(ratios).map(|s| s.mean);
    out
}

/// Requests in flight at `t_ns`, and whether the client was holding its limit then (≥ 90%
/// of it in flight before the last send, as `metrics::concurrency::limit_held_fraction`).
fn held_at(records: &[RequestRecord], limit: usize, t_ns: u64) -> bool {
    // `[send, end)` of a sent request (`metrics::concurrency::interval`).
    let interval = |r: &RequestRecord| r.send_ns.map(|s| (s, r.end_ns.unwrap_or(s).max(s)));
    let need = (limit * 9).div_ceil(10);
    let last_send = records.iter().filter_map(|r| r.send_ns).max().unwrap_or(0);
    if t_ns >= last_send {
        return false;
    }
    let in_flight = records
        .iter()
        .filter_map(interval)
        .filter(|(s, e)| *s <= t_ns && t_ns < *e)
        .count();
    in_flight >= need
}

fn server_summary(
    t: &TrialTelemetry,
    w: (f64, f64),
    win: &TelemetryWindow<'_>,
) -> Option<ServerSummary> {
    let s = t.server.as_ref()?;
    let idx: Vec<usize> = inside(&s.t_ms, w).collect();
    let pick =
        |v: &[Option<f64>]| Span::of(idx.iter().filter_map(|&i| v.get(i).copied().flatten()));
    let kv: Vec<f64> = idx
        .iter()
        .filter_map(|&i| s.kv_usage.get(i).copied().flatten())
        .collect();
    let kv_full_share = (!kv.is_empty())
        .then(|| kv.iter().filter(|k| **k >= 0.98).count() as f64 / kv.len() as f64);
    let preemptions = preemptions(s, w);
    let (mut held, mut waiting, mut running) = (0usize, 0.0, 0.0);
    let mut running_n = 0usize;
    if let Some(limit) = win.closed_loop_limit.filter(|l| *l > 0) {
        for &i in &idx {
            let t_ns = u64::try_from(s.t_ms[i])
                .unwrap_or(0)
                .saturating_mul(1_000_000);
            if !held_at(win.records, limit, t_ns) {
                continue;
            }
            if let Some(q) = s.waiting.get(i).copied().flatten() {
                held += 1;
                waiting += q;
                if let Some(r) = s.running.get(i).copied().flatten() {
                    running += r;
                    running_n += 1;
                }
            }
        }
    }
    let limited = win.closed_loop_limit.is_some();
    Some(ServerSummary {
        scrapes: idx.len(),
        failed: s.failed,
        running: pick(&s.running),
        waiting: pick(&s.waiting),
        kv_usage: pick(&s.kv_usage),
        kv_full_share,
        preemptions,
        held_scrapes: limited.then_some(held),
        waiting_while_held: (held > 0).then(|| waiting / held as f64),
        running_while_held: (running_n > 0).then(|| running / running_n as f64),
    })
}

/// Preemptions during the window `w` (ms): a counter's increase from the last scrape before
/// the window to the last inside it (a fall is a restart: counted from 0 again; a labelled
/// counter served only from its first increment counts from 0 where earlier scrapes lacked
/// it), a gauge's peak. The kind is the profile's (`kinds`); without it a series that never
/// falls is read as a counter.
fn preemptions(s: &super::series::ServerSeries, w: (f64, f64)) -> Option<f64> {
    let kind = s.kinds.get("preemptions").map(String::as_str);
    let seen: Vec<(i64, Option<f64>)> = s
        .t_ms
        .iter()
        .zip(&s.preemptions)
        .map(|(t, p)| (*t, *p))
        .collect();
    let present: Vec<(i64, f64)> = seen
        .iter()
        .filter_map(|(t, p)| p.map(|p| (*t, p)))
        .collect();
    if present.is_empty() {
        return None;
    }
    let monotone = present.windows(2).all(|p| p[1].1 >= p[0].1);
    let counter = match kind {
        Some("counter") => true,
        Some(_) => false,
        None => monotone,
    };
    if !counter {
        return Span::of(present.iter().map(|p| p.1)).map(|s| s.max);
    }
    // The counter's values up to the window's end; absent before its first sample: 0.
    let first = present[0].0;
    let values: Vec<(i64, f64)> = seen
        .iter()
        .filter(|(t, _)| (*t as f64) <= w.1)
        .filter_map(|(t, p)| match p {
            Some(v) => Some((*t, *v)),
            None if kind.is_some() && *t < first => Some((*t, 0.0)),
            None => None,
        })
        .collect();
    let start = values
        .iter()
        .rposition(|(t, _)| (*t as f64) < w.0)
        .unwrap_or(0);
    let mut rise = 0.0;
    for p in values[start..].windows(2) {
        rise += if p[1].1 >= p[0].1 {
            p[1].1 - p[0].1
        } else {
            p[1].1
        };
    }
    Some(rise)
}

/// Summarises one trial's capture over its window.
pub fn summarize_telemetry(t: &TrialTelemetry, win: &TelemetryWindow<'_>) -> TelemetrySummary {
    let w = win
        .window_ns
        .map_or((0.0, 0.0), |(a, b)| (to_ms(a), to_ms(b)));
    let gpu = gpu_summary(t, w);
    let (per_joule, per_token) = match gpu.energy_j {
        Some(e) if e > 0.0 && win.output_tokens > 0 => {
            let n = win.output_tokens as f64;
            (Some(n / e), Some(e / n))
        }
        _ => (None, None),
    };
    TelemetrySummary {
        server: server_summary(t, w, win),
        server_note: t.server_note.clone(),
        gpu,
        output_tokens_per_joule: per_joule,
        joules_per_output_token: per_token,
    }
}

#[cfg(test)]
mod tests {
    use super::super::series::ServerSeries;
    use super::*;

    fn series(kind: Option<&str>, values: &[Option<f64>]) -> ServerSeries {
        ServerSeries {
            kinds: kind
                .map(|k| [("preemptions".to_owned(), k.to_owned())].into())
                .unwrap_or_default(),
            t_ms: (0..values.len() as i64).map(|i| i * 100).collect(),
            preemptions: values.to_vec(),
            ..ServerSeries::default()
        }
    }

    #[test]
    fn a_counter_is_read_as_its_increase_and_a_gauge_as_its_peak() {
        // A counter first served at its first increment (SGLang 0.5.23's labelled
        // `num_retracted_requests_total`): absent, then 3, then 5 — 5 during the window.
        let c = series(Some("counter"), &[None, Some(3.0), Some(5.0)]);
        assert_eq!(preemptions(&c, (50.0, 300.0)), Some(5.0));
        // The last scrape before the window is where the rise starts.
        let c = series(Some("counter"), &[Some(10.0), Some(12.0), Some(15.0)]);
        assert_eq!(preemptions(&c, (50.0, 300.0)), Some(5.0));
        // A gauge that happens never to fall (1, 2, 4) is still a level: its peak 4, not
        // the rise 3 its shape would give as a counter.
        let g = series(Some("gauge"), &[Some(1.0), Some(2.0), Some(4.0)]);
        assert_eq!(preemptions(&g, (50.0, 300.0)), Some(4.0));
        // A counter that falls restarted: counted from 0 again.
        let c = series(Some("counter"), &[Some(4.0), Some(6.0), Some(1.0)]);
        assert_eq!(preemptions(&c, (50.0, 300.0)), Some(3.0));
        // Files without kinds: a series that never falls is a counter, as before.
        let old = series(None, &[Some(1.0), Some(4.0)]);
        assert_eq!(preemptions(&old, (50.0, 300.0)), Some(3.0));
    }
}
