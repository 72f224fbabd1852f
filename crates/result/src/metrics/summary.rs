//! The summary of one trial, derived from its records in one pass: every metric of the
//! catalogue, for all requests and for the steady window, failures by kind, flags, and the
//! latency histograms.
//!
//! Throughputs over a window `[a, b]` count what happened inside it: output tokens by the
//! instant of their event, input tokens at the request's first token (prefill is done by
//! then), requests at their end. Over the whole trial (`a` = first send, `b` = last end) this
//! is simply the totals divided by the duration. Goodput counts the successful requests
//! that meet every given SLO (ttft, tpot, e2e ≤ threshold; a request with one output token
//! has no TPOT and meets the TPOT objective) per second.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::concurrency::{
    Phase, interval, limit_held_fraction, mean_in_flight, peak_within, sweep,
};
use super::derive::{RequestMetrics, derive, itl_gaps};
use super::histograms::{HistogramSet, LatencyHistograms, record_ms};
use super::latency::LatencyStats;
use super::reasoning::ReasoningValues;
use super::sending::{rate_held_fraction, send_rates};
use super::turns::{TurnSummary, turn_summaries};
use crate::record::{ErrorKind, RequestFlag, RequestRecord};

/// Service-level objectives for goodput, in milliseconds; unset ones are not checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Slo {
    /// Time to first token at most this, in ms.
    pub ttft_ms: Option<f64>,
    /// Time per output token at most this, in ms.
    pub tpot_ms: Option<f64>,
    /// End-to-end latency at most this, in ms.
    pub e2e_ms: Option<f64>,
}

/// What summarising needs besides the records.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SummaryOptions {
    /// The trial's concurrency limit, if any.
    pub max_concurrency: Option<usize>,
    /// Every request was due at once (`request_rate: inf`): only the limit paces the load,
    /// so whether the trial held it is recorded (`TrialSummary::limit_held_fraction`).
    pub closed_loop: bool,
    /// The SLOs goodput and attainment count against.
    pub slo: Option<Slo>,
}

/// Metrics over one window of a trial. Latencies in ms, throughputs per second.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowSummary {
    /// `[start, end]` of the window in ns from the trial start.
    pub window_ns: Option<(u64, u64)>,
    /// Length of the window in seconds.
    pub duration_s: Option<f64>,
    /// Requests belonging to the window (all: every request, sent or not).
    pub requests: usize,
    /// Requests of the window that succeeded.
    pub completed: usize,
    /// Requests of the window that failed.
    pub failed: usize,
    /// Output and input tokens counted inside the window.
    pub output_tokens: u64,
    /// Input tokens counted inside the window.
    pub input_tokens: u64,
    /// Output tokens per second.
    pub output_throughput: Option<f64>,
    /// Input and output tokens per second.
    pub total_throughput: Option<f64>,
    /// Completed requests per second.
    pub request_throughput: Option<f64>,
    /// Requests per second that succeeded and met every SLO.
    pub goodput: Option<f64>,
    /// Requests of the window that succeeded and met every SLO (the requests goodput
    /// counts, wherever they ended); `None` without SLOs and in results written before it was
    /// recorded. Over `requests` it is the window's SLO attainment (docs/search.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_met: Option<usize>,
    /// Failed over sent requests.
    pub error_rate: Option<f64>,
    /// Most requests in flight at once.
    pub peak_concurrency: usize,
    /// Time-weighted mean of the requests in flight.
    pub mean_concurrency: Option<f64>,
    /// Time to first token.
    pub ttft: Option<LatencyStats>,
    /// Time per output token.
    pub tpot: Option<LatencyStats>,
    /// Inter-token latency, one value per gap between token events.
    pub itl: Option<LatencyStats>,
    /// Inter-token latency per token (a gap divided by the tokens its event carried).
    pub itl_per_token: Option<LatencyStats>,
    /// End-to-end latency.
    pub e2e: Option<LatencyStats>,
    /// Client-side wait from the scheduled arrival to the send.
    pub queue_time: Option<LatencyStats>,
    /// Time to first reasoning token, over the requests that reasoned (`metrics::reasoning`
    /// has these four); absent when none did, and in results written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfr: Option<LatencyStats>,
    /// Time to first answer token (TTFT for a request without reasoning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfa: Option<LatencyStats>,
    /// Reasoning tokens per request (tokens, not ms); absent when no request reasoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<LatencyStats>,
    /// Answer tokens per request (tokens, not ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_tokens: Option<LatencyStats>,
}

/// Token counts and their sources over the measured requests.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct TokenAccounting {
    /// Σ `usage.completion_tokens` of successful requests that had usage.
    pub usage_output_tokens: u64,
    /// Σ of the client's per-event counts over the same requests (the discrepancy with
    /// `usage_output_tokens` is the client-side check).
    pub client_output_tokens_with_usage: u64,
    /// Σ client counts of successful requests without usage (used for their N_out).
    pub client_output_tokens_without_usage: u64,
    /// Successful requests whose server sent no `usage`.
    pub requests_without_usage: usize,
    /// Requests whose per-event counts were reconciled with usage (mean tokens per event).
    pub reconciled_requests: usize,
    /// Requests whose output length was checked against a fixed target (90–110%).
    pub output_length_checked: usize,
    /// Σ prompt tokens the server took from its prefix cache, over the successful requests
    /// whose server reported it (`RequestRecord::cached_prompt_tokens`); absent when none
    /// did, and in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_prompt_tokens: Option<u64>,
    /// Σ prompt tokens of those same requests: the denominator of the hit ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_reported_prompt_tokens: Option<u64>,
    /// Requests that carried images: their input tokens are the server's
    /// `usage.prompt_tokens` only (no local count knows an image's tokens). Absent when
    /// none did.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub image_requests: usize,
}

impl TokenAccounting {
    /// The prefix-cache hit ratio: cached over all prompt tokens of the requests whose
    /// server reported cached tokens; `None` when none did.
    pub fn cache_hit_ratio(&self) -> Option<f64> {
        let total = self.cache_reported_prompt_tokens?;
        (total > 0).then(|| self.cached_prompt_tokens.unwrap_or(0) as f64 / total as f64)
    }
}

/// The summary of one trial (measured requests only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrialSummary {
    /// Every measured request.
    pub all: WindowSummary,
    /// Requests neither in the ramp-up nor in the drain (see `metrics::concurrency`).
    pub steady: WindowSummary,
    /// The trial's concurrency limit, if any.
    pub max_concurrency: Option<usize>,
    /// Closed-loop trials with a limit: the share of the trial during which the client held
    /// at least 90% of the limit in flight while requests were still waiting to be sent
    /// (`metrics::concurrency::limit_held_fraction`). Under one half, the point is flagged
    /// `load-not-sustained` by `compare`. Absent for open-loop trials, imported results and
    /// files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_held_fraction: Option<f64>,
    /// Open-loop trials (a numeric request rate): the rate the client achieved over the rate
    /// its schedule asked, `(last − first intended send) / (last − first actual send)` over
    /// the requests sent. Below 1 when the client fell behind its schedule (a busy load
    /// generator, or a concurrency limit holding requests back); a capacity search counts a
    /// trial under 0.98 as invalid (docs/search.md). Absent for closed-loop trials and in
    /// files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_held_fraction: Option<f64>,
    /// Open-loop trials (a numeric rate or a replayed trace): how late each send was
    /// against its schedule, `send_ns − intended_ns` in ms, over the requests sent. A
    /// client that keeps up has a p99 of a few ms at most (docs/workloads.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lateness: Option<LatencyStats>,
    /// Open-loop trials: the send rate the schedule asked for and the one achieved, in
    /// requests/s over the first to the last send ((n − 1) / span of intended, resp. actual,
    /// send times); `compare` flags a trial whose achieved rate is under 98% of the scheduled
    /// one (`invalid-trial`). Absent for closed-loop trials and older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_rate: Option<f64>,
    /// See `scheduled_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_rate: Option<f64>,
    /// `multi_turn` trials: per turn index (0 = every conversation's first turn), its
    /// requests, TTFT and mean prompt length as the server counted it (the history grows, so
    /// later turns have longer prompts). Empty for other datasets and older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<TurnSummary>,
    /// Peak in-flight above the limit. Always false unless the load generator has a bug.
    pub concurrency_limit_exceeded: bool,
    /// Failed requests by kind.
    pub errors: BTreeMap<ErrorKind, usize>,
    /// Non-fatal flags by kind (`no_usage`, `short_output`, `long_output`,
    /// `input_length_mismatch`); the requests still count as completed.
    pub flags: BTreeMap<RequestFlag, usize>,
    /// The requests flagged `input_length_mismatch`: the prompt length sent and the server's
    /// count of it (medians over those requests). Absent when none was flagged, and in files
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_mismatch: Option<InputMismatch>,
    /// The share of the successful requests' token events that arrived in one read with
    /// another event of the same request (so they carry the same receive instant and their
    /// ITL gap is 0; docs/metrics.md, "ITL and batched events"). Absent without token
    /// events, and in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batched_event_share: Option<f64>,
    /// Token counts and where they came from.
    pub tokens: TokenAccounting,
    /// Client TTFT minus the server's own TTFT, where the server reports one.
    pub ttft_overhead: Option<LatencyStats>,
    /// The latency histograms, serialised.
    pub histograms: LatencyHistograms,
    /// How percentiles were computed (the estimator's name).
    pub percentile_method: String,
    /// Metrics as another tool reported them (imported results only), by catalogue name;
    /// read when the window has no value of its own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reported: BTreeMap<String, f64>,
    /// What the GPUs and the server were doing during the trial (`spec.telemetry`): spans,
    /// energy, throttling, the engine's queue; absent without telemetry and in results
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<crate::telemetry::TelemetrySummary>,
    /// The memory-bound decode ceiling of the trial and the share of it its output
    /// throughput reached (`spec.model_facts`; docs/gpu.md, "The physical limit").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_ceiling: Option<crate::telemetry::DecodeCeiling>,
}

/// The prompt lengths of the requests flagged `input_length_mismatch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InputMismatch {
    /// Tokens sent (the dataset's exact count), median over the flagged requests.
    pub sent_tokens: u64,
    /// Tokens the server counted (`usage.prompt_tokens`), median over the flagged requests.
    pub counted_tokens: u64,
}

/// Events of `r` that share their receive instant with a neighbouring event of `r`.
fn batched_events(r: &RequestRecord) -> usize {
    let e = &r.events;
    (0..e.len())
        .filter(|&i| {
            (i > 0 && e[i - 1].t_ns == e[i].t_ns) || (i + 1 < e.len() && e[i + 1].t_ns == e[i].t_ns)
        })
        .count()
}

fn median(mut v: Vec<u64>) -> Option<u64> {
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

/// Summarises the measured records of one trial.
pub fn summarize(records: &[RequestRecord], opts: &SummaryOptions) -> TrialSummary {
    let metrics: Vec<RequestMetrics> = records.iter().map(derive).collect();
    let sw = sweep(records, opts.max_concurrency);

    let mut errors = BTreeMap::new();
    let mut flags = BTreeMap::new();
    let (mut sent, mut counted) = (Vec::new(), Vec::new());
    let (mut events, mut batched) = (0usize, 0usize);
    let mut tokens = TokenAccounting::default();
    let mut hist = HistogramSet::default();
    let mut overhead = Vec::new();
    for (r, m) in records.iter().zip(&metrics) {
        if let Some(e) = m.failure {
            *errors.entry(e).or_insert(0) += 1;
            continue;
        }
        for f in &m.flags {
            *flags.entry(*f).or_insert(0) += 1;
            if *f == RequestFlag::InputLengthMismatch
                && let (Some(exp), Some(u)) = (r.expected_input_tokens, r.usage)
            {
                sent.push(u64::from(exp));
                counted.push(u64::from(u.prompt_tokens));
            }
        }
        events += r.events.len();
        batched += batched_events(r);
        let client = r.client_output_tokens();
        match r.usage {
            Some(u) => {
                tokens.usage_output_tokens += u64::from(u.completion_tokens);
                tokens.client_output_tokens_with_usage += client;
            }
            None => {
                tokens.requests_without_usage += 1;
                tokens.client_output_tokens_without_usage += client;
            }
        }
        tokens.reconciled_requests += usize::from(m.reconciled);
        if let Some((cached, prompt)) = r.cached_prompt_tokens() {
            *tokens.cached_prompt_tokens.get_or_insert(0) += cached;
            *tokens.cache_reported_prompt_tokens.get_or_insert(0) += prompt;
        }
        tokens.output_length_checked += usize::from(r.output_target.is_some());
        tokens.image_requests += usize::from(r.images > 0);
        let hs = [
            (&mut hist.ttft, m.ttft_ms),
            (&mut hist.tpot, m.tpot_ms),
            (&mut hist.e2e, m.e2e_ms),
            (&mut hist.ttfr, m.ttfr_ms),
            (&mut hist.ttfa, m.ttfa_ms),
        ];
        for (h, v) in hs {
            if let Some(v) = v {
                record_ms(h, v);
            }
        }
        for (v, _) in itl_gaps(r, m) {
            record_ms(&mut hist.itl, v);
        }
        overhead.extend(m.ttft_overhead_ms);
    }

    let first_send = records.iter().filter_map(|r| r.send_ns).min();
    let last_end = records
        .iter()
        .filter_map(|r| interval(r).map(|i| i.1))
        .max();
    let all_bounds = first_send.zip(last_end).filter(|(a, b)| b > a);
    let ctx = Ctx {
        records,
        metrics: &metrics,
        slo: opts.slo,
    };
    let mut all = ctx.window(|_| true, all_bounds);
    all.peak_concurrency = sw.peak;
    let mut steady = ctx.window(|i| sw.phases[i] == Phase::Steady, sw.steady_window);
    steady.peak_concurrency = match sw.steady_window {
        Some(w) => peak_within(records, w),
        None => 0,
    };

    TrialSummary {
        all,
        steady,
        max_concurrency: opts.max_concurrency,
        limit_held_fraction: if opts.closed_loop {
            limit_held_fraction(records, opts.max_concurrency)
        } else {
            None
        },
        rate_held_fraction: if opts.closed_loop {
            None
        } else {
            rate_held_fraction(records)
        },
        send_lateness: if opts.closed_loop {
            None
        } else {
            LatencyStats::from_values(
                records
                    .iter()
                    .filter_map(|r| {
                        r.send_ns
                            .map(|s| s.saturating_sub(r.intended_ns) as f64 / 1e6)
                    })
                    .collect(),
            )
        },
        scheduled_rate: send_rates(records, opts.closed_loop).map(|r| r.0),
        achieved_rate: send_rates(records, opts.closed_loop).map(|r| r.1),
        turns: turn_summaries(records, &metrics),
        concurrency_limit_exceeded: opts.max_concurrency.is_some_and(|l| sw.peak > l),
        errors,
        flags,
        input_mismatch: median(sent)
            .zip(median(counted))
            .map(|(sent_tokens, counted_tokens)| InputMismatch {
                sent_tokens,
                counted_tokens,
            }),
        batched_event_share: (events > 0).then(|| batched as f64 / events as f64),
        tokens,
        ttft_overhead: LatencyStats::from_values(overhead),
        histograms: hist.encode(),
        percentile_method: "linear interpolation (Hyndman-Fan 7, numpy default) over exact values"
            .to_owned(),
        reported: BTreeMap::new(),
        telemetry: None,
        decode_ceiling: None,
    }
}

struct Ctx<'a> {
    records: &'a [RequestRecord],
    metrics: &'a [RequestMetrics],
    slo: Option<Slo>,
}

impl Ctx<'_> {
    fn window(&self, member: impl Fn(usize) -> bool, bounds: Option<(u64, u64)>) -> WindowSummary {
        let mut s = WindowSummary {
            window_ns: bounds,
            ..Default::default()
        };
        let (mut ttft, mut tpot, mut e2e, mut queue) = (vec![], vec![], vec![], vec![]);
        let (mut itl, mut itl_tok) = (vec![], vec![]);
        let mut reasoning = ReasoningValues::default();
        let members = self
            .records
            .iter()
            .zip(self.metrics)
            .enumerate()
            .filter(|(i, _)| member(*i));
        let mut met = 0;
        for (_, (r, m)) in members {
            s.requests += 1;
            queue.extend(m.queue_ms);
            if m.failure.is_some() {
                s.failed += 1;
                continue;
            }
            s.completed += 1;
            met += usize::from(self.slo.is_some_and(|slo| meets(m, &slo)));
            ttft.extend(m.ttft_ms);
            tpot.extend(m.tpot_ms);
            e2e.extend(m.e2e_ms);
            reasoning.add(m.ttfr_ms, m.ttfa_ms, m.reasoning_tokens, m.answer_tokens);
            for (gap, per_token) in itl_gaps(r, m) {
                itl.push(gap);
                itl_tok.push(per_token);
            }
        }
        s.ttft = LatencyStats::from_values(ttft);
        s.tpot = LatencyStats::from_values(tpot);
        s.e2e = LatencyStats::from_values(e2e);
        s.queue_time = LatencyStats::from_values(queue);
        s.itl = LatencyStats::from_values(itl);
        s.itl_per_token = LatencyStats::from_values(itl_tok);
        [s.ttfr, s.ttfa, s.reasoning_tokens, s.answer_tokens] = reasoning.stats();
        s.error_rate = (s.requests > 0).then(|| s.failed as f64 / s.requests as f64);
        s.slo_met = self.slo.map(|_| met);

        let Some((a, b)) = bounds else { return s };
        let dur = (b - a) as f64 / 1e9;
        s.duration_s = Some(dur);
        let inside = |t: u64| a <= t && t <= b;
        let (mut out_tok, mut in_tok, mut done, mut good) = (0.0_f64, 0u64, 0usize, 0usize);
        for (r, m) in self.records.iter().zip(self.metrics) {
            if m.failure.is_some() {
                continue;
            }
            let per_event = m
                .reconciled
                .then(|| m.n_out.unwrap_or(0) as f64 / r.events.len() as f64);
            for e in r.events.iter().filter(|e| inside(e.t_ns)) {
                out_tok += per_event.unwrap_or(f64::from(e.tokens));
            }
            if r.events.first().is_some_and(|e| inside(e.t_ns)) {
                in_tok += m.n_in.unwrap_or(0);
            }
            if r.end_ns.is_some_and(inside) {
                done += 1;
                good += usize::from(self.slo.is_some_and(|slo| meets(m, &slo)));
            }
        }
        s.output_tokens = out_tok.round() as u64;
        s.input_tokens = in_tok;
        s.output_throughput = Some(out_tok / dur);
        s.total_throughput = Some((out_tok + in_tok as f64) / dur);
        s.request_throughput = Some(done as f64 / dur);
        s.goodput = self.slo.map(|_| good as f64 / dur);
        s.mean_concurrency = mean_in_flight(self.records, (a, b));
        s
    }
}

fn meets(m: &RequestMetrics, slo: &Slo) -> bool {
    let ok = |v: Option<f64>, limit: Option<f64>| match (v, limit) {
        (_, None) | (None, Some(_)) => true,
        (Some(v), Some(l)) => v <= l,
    };
    m.ttft_ms.is_some()
        && ok(m.ttft_ms, slo.ttft_ms)
        && ok(m.tpot_ms, slo.tpot_ms)
        && ok(m.e2e_ms, slo.e2e_ms)
}

impl TrialSummary {
    /// SLO attainment over all measured requests: the share that succeeded and met every
    /// SLO (failed requests count as missing). `None` without SLOs, without requests, or in
    /// results written before `slo_met` was recorded.
    pub fn attainment(&self) -> Option<f64> {
        let met = self.all.slo_met?;
        (self.all.requests > 0).then(|| met as f64 / self.all.requests as f64)
    }
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}
