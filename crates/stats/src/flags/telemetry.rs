//! Validity flags from telemetry (docs/statistics-method.md, "Flags from telemetry"): what
//! the GPUs and the engine were doing says a point did not measure what it names.
//!
//! * **server-queued** (re-baseline): at a closed-loop point the engine held requests waiting
//!   while the client held its limit, so the concurrency the engine batched was not the
//!   point's. Per trial, the share of the client's in-flight requests the engine held waiting
//!   (mean waiting over mean running + waiting, at the scrapes where the client held ≥ 90% of
//!   its limit); fires when either arm's median trial reaches [`TelemetryThresholds::queued_share`]
//!   with at least one request waiting on average.
//! * **throttled** (re-baseline): the GPUs' clocks were lowered by a power or thermal limit
//!   (NVML's clock-event reasons) or ran below their highest SM clock, more in one arm than
//!   the other: the arms' median shares of throttled samples differ by
//!   [`TelemetryThresholds::throttled_gap`] and, where the sample counts are known, the arms'
//!   pooled shares differ by [`TelemetryThresholds::throttled_z`] standard errors or more (a
//!   trial of three samples with one capped is 33%, which says nothing); or their median SM
//!   clock over the GPU's highest differs by [`TelemetryThresholds::clock_gap`].
//! * **gpu-busy-at-start** (re-baseline): a server's GPUs held memory or a process before it
//!   started (a server left from the last block), named.
//! * **preempted** (look): preemptions in one arm's trials and not the other's (shares of
//!   trials with a preemption differ by [`TelemetryThresholds::preempted_gap`]).
//! * **kv-full** (look): the median trial of an arm had the KV cache at 98% or more for
//!   [`TelemetryThresholds::kv_full_share`] of its scrapes.
//!
//! Each rule reads plain per-trial evidence ([`TelemetryCheck`], [`StartCheck`]); which
//! verdicts a flag threatens is filled in by the caller (every metric at the point, or every
//! verdict for a start).

use serde::{Deserialize, Serialize};

use super::{Flag, FlagId, FlagLevel, pct_plain};

/// One trial's telemetry, as the rules read it. `None`: not recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TelemetryCheck {
    /// Position of the trial in run order within its arm (0-based), for messages.
    pub trial: usize,
    /// Mean requests the engine held waiting at the scrapes where the client held its limit.
    pub waiting_while_held: Option<f64>,
    /// Mean requests it ran at those scrapes.
    pub running_while_held: Option<f64>,
    /// Share of the trial's GPU samples with a throttling reason.
    pub throttled_share: Option<f64>,
    /// GPU samples of the trial (over every GPU), which the throttled share counts.
    #[serde(default)]
    pub gpu_samples: Option<u64>,
    /// The reasons seen, most frequent first (`sw_power_cap`).
    pub reasons: Vec<String>,
    /// Mean busy SM clock over the GPU's highest.
    pub sm_clock_ratio: Option<f64>,
    /// Preemptions during the trial.
    pub preemptions: Option<f64>,
    /// Share of the scrapes with the KV cache at 98% or more.
    pub kv_full_share: Option<f64>,
}

impl TelemetryCheck {
    /// The share of the client's in-flight requests the engine held waiting.
    pub fn queued_share(&self) -> Option<f64> {
        let w = self.waiting_while_held?;
        let r = self.running_while_held.unwrap_or(0.0);
        (w + r > 0.0).then(|| w / (w + r))
    }
}

/// A server start's GPUs just before it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StartCheck {
    /// The block (server start), 0-based.
    pub block: usize,
    /// The variant it started.
    pub variant: String,
    /// GPU memory in use on its GPUs, MiB, summed.
    pub memory_used_mib: u64,
    /// The processes holding it, in words (`python3 (pid 4242, 8148 MiB on GPU 0)`).
    pub processes: Vec<String>,
}

/// The rules' thresholds; `Default` gives docs/statistics-method.md's values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TelemetryThresholds {
    /// server-queued: share of in-flight requests held waiting (0.1).
    pub queued_share: f64,
    /// throttled: gap between the arms' median shares of throttled samples (0.2).
    pub throttled_gap: f64,
    /// throttled: the pooled shares' difference in standard errors it needs as well (3).
    pub throttled_z: f64,
    /// throttled: gap between the arms' median SM clock over the highest (0.05).
    pub clock_gap: f64,
    /// gpu-busy-at-start: memory in use, MiB, before a start that counts as busy (1024).
    pub busy_memory_mib: u64,
    /// preempted: gap between the arms' shares of trials with a preemption (0.5).
    pub preempted_gap: f64,
    /// kv-full: share of an arm's median trial's scrapes at a full cache (0.1).
    pub kv_full_share: f64,
}

impl Default for TelemetryThresholds {
    fn default() -> Self {
        TelemetryThresholds {
            queued_share: 0.1,
            throttled_gap: 0.2,
            throttled_z: 3.0,
            clock_gap: 0.05,
            busy_memory_mib: 1024,
            preempted_gap: 0.5,
            kv_full_share: 0.1,
        }
    }
}

fn median_of(checks: &[TelemetryCheck], f: impl Fn(&TelemetryCheck) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = checks
        .iter()
        .filter_map(f)
        .filter(|x| x.is_finite())
        .collect();
    crate::percentile::median(&v)
}

/// **server-queued** at the point `label` of a closed-loop sweep with limit `limit`.
pub fn server_queued(
    label: &str,
    limit: Option<u32>,
    baseline: &[TelemetryCheck],
    candidate: &[TelemetryCheck],
    th: &TelemetryThresholds,
) -> Option<Flag> {
    let arm = |checks: &[TelemetryCheck]| {
        Some((
            median_of(checks, TelemetryCheck::queued_share)?,
            median_of(checks, |c| c.waiting_while_held)?,
            median_of(checks, |c| c.running_while_held).unwrap_or(0.0),
        ))
    };
    let arms = [("baseline", arm(baseline)), ("candidate", arm(candidate))];
    let hit: Vec<String> = arms
        .iter()
        .filter_map(|(name, a)| {
            let (share, waiting, running) = (*a)?;
            (share >= th.queued_share && waiting >= 1.0).then(|| {
                format!(
                    "{name}: the engine ran {running:.1} and held {waiting:.1} waiting ({} of \
                     the requests in flight)",
                    pct_plain(share)
                )
            })
        })
        .collect();
    if hit.is_empty() {
        return None;
    }
    let lim = limit.map_or_else(|| "its limit".to_owned(), |l| format!("its limit of {l}"));
    Some(Flag::new(
        FlagId::ServerQueued,
        FlagLevel::ReBaseline,
        format!(
            "{label}: while the client held {lim} in flight, {} (median trial): the engine \
             batched fewer requests than the point names, and queued the rest",
            hit.join("; ")
        ),
        "raise the server's limit on running requests to at least the point's concurrency \
         (vLLM --max-num-seqs, SGLang --max-running-requests, llama.cpp --parallel) or give it \
         the KV cache it needs, and re-run; or read this point as the engine's queue, not its batch",
    ))
}

/// **throttled** at `label`: throttling (or a lower SM clock) in one arm more than the other.
pub fn throttled(
    label: &str,
    baseline: &[TelemetryCheck],
    candidate: &[TelemetryCheck],
    th: &TelemetryThresholds,
) -> Option<Flag> {
    let share = |c: &[TelemetryCheck]| median_of(c, |t| t.throttled_share);
    let clock = |c: &[TelemetryCheck]| median_of(c, |t| t.sm_clock_ratio);
    let reasons = |c: &[TelemetryCheck]| {
        let mut r: Vec<&str> = c
            .iter()
            .flat_map(|t| t.reasons.iter().map(String::as_str))
            .collect();
        r.sort_unstable();
        r.dedup();
        if r.is_empty() {
            String::new()
        } else {
            format!(" ({})", r.join(", "))
        }
    };
    let mut why = Vec::new();
    if let (Some(b), Some(c)) = (share(baseline), share(candidate))
        && (b - c).abs() >= th.throttled_gap
        && pooled_z(baseline, candidate).is_none_or(|z| z >= th.throttled_z)
    {
        why.push(format!(
            "throttled in {} of the baseline's GPU samples{} and {} of the candidate's{} \
             (median trial)",
            pct_plain(b),
            reasons(baseline),
            pct_plain(c),
            reasons(candidate)
        ));
    }
    if let (Some(b), Some(c)) = (clock(baseline), clock(candidate))
        && (b - c).abs() >= th.clock_gap
    {
        why.push(format!(
            "the SM clock ran at {} of its highest in the baseline and {} in the candidate \
             (median trial)",
            pct_plain(b),
            pct_plain(c)
        ));
    }
    if why.is_empty() {
        return None;
    }
    Some(Flag::new(
        FlagId::Throttled,
        FlagLevel::ReBaseline,
        format!(
            "{label}: {}: the arms did not run on equally fast GPUs",
            why.join("; ")
        ),
        "check cooling and power limits (nvidia-smi -q -d PERFORMANCE), let the GPUs cool \
         between blocks (trials.cooldown) and re-run interleaved; a variant that draws more \
         power may throttle itself, which is then part of its result",
    ))
}

/// The arms' pooled throttled shares' difference over its standard error (two proportions,
/// the pooled share under "no difference"); `None` where a trial's sample count is unknown
/// (results written before it was kept), `Some(0)` where no sample differs.
fn pooled_z(baseline: &[TelemetryCheck], candidate: &[TelemetryCheck]) -> Option<f64> {
    let pool = |c: &[TelemetryCheck]| -> Option<(f64, f64)> {
        let mut hit = 0.0;
        let mut n = 0.0;
        for t in c.iter().filter(|t| t.throttled_share.is_some()) {
            let k = t.gpu_samples? as f64;
            hit += t.throttled_share.unwrap_or(0.0) * k;
            n += k;
        }
        Some((hit, n))
    };
    let ((hb, nb), (hc, nc)) = (pool(baseline)?, pool(candidate)?);
    if nb <= 0.0 || nc <= 0.0 {
        return Some(0.0);
    }
    let p = (hb + hc) / (nb + nc);
    let se = (p * (1.0 - p) * (1.0 / nb + 1.0 / nc)).sqrt();
    if se <= 0.0 {
        return Some(if (hb / nb - hc / nc).abs() > 0.0 {
            f64::INFINITY
        } else {
            0.0
        });
    }
    Some((hb / nb - hc / nc).abs() / se)
}

/// **gpu-busy-at-start**: server starts whose GPUs were not free.
pub fn gpu_busy_at_start(starts: &[StartCheck], th: &TelemetryThresholds) -> Option<Flag> {
    let busy: Vec<&StartCheck> = starts
        .iter()
        .filter(|s| !s.processes.is_empty() || s.memory_used_mib >= th.busy_memory_mib)
        .collect();
    if busy.is_empty() {
        return None;
    }
    let words: Vec<String> = busy
        .iter()
        .map(|s| {
            let who = if s.processes.is_empty() {
                "no process listed".to_owned()
            } else {
                s.processes.join(", ")
            };
            format!(
                "block {} ({}): {} MiB in use, {who}",
                s.block + 1,
                s.variant,
                s.memory_used_mib
            )
        })
        .collect();
    Some(Flag::new(
        FlagId::GpuBusyAtStart,
        FlagLevel::ReBaseline,
        format!(
            "{} of {} server starts found their GPUs in use: {}",
            busy.len(),
            starts.len(),
            words.join("; ")
        ),
        "stop what holds the GPUs (a server left from an earlier run: `servebench run` stops \
         its own; check `nvidia-smi`) and re-run",
    ))
}

/// **preempted** at `label`: preemptions in one arm's trials, not the other's.
pub fn preempted(
    label: &str,
    baseline: &[TelemetryCheck],
    candidate: &[TelemetryCheck],
    th: &TelemetryThresholds,
) -> Option<Flag> {
    let share = |c: &[TelemetryCheck]| {
        let v: Vec<f64> = c.iter().filter_map(|t| t.preemptions).collect();
        (!v.is_empty()).then(|| v.iter().filter(|p| **p > 0.0).count() as f64 / v.len() as f64)
    };
    let total = |c: &[TelemetryCheck]| c.iter().filter_map(|t| t.preemptions).sum::<f64>();
    let (b, c) = (share(baseline)?, share(candidate)?);
    if (b - c).abs() < th.preempted_gap {
        return None;
    }
    Some(Flag::new(
        FlagId::Preempted,
        FlagLevel::Look,
        format!(
            "{label}: the engine preempted requests in {} of the baseline's trials ({:.0} in \
             all) and {} of the candidate's ({:.0}): one arm recomputed requests it had \
             evicted from the KV cache",
            pct_plain(b),
            total(baseline),
            pct_plain(c),
            total(candidate)
        ),
        "the difference may come from preemption rather than the change itself: give the \
         server more KV cache or fewer running requests to compare without it",
    ))
}

/// **kv-full** at `label`: the KV cache at its cap for much of an arm's median trial.
pub fn kv_full(
    label: &str,
    baseline: &[TelemetryCheck],
    candidate: &[TelemetryCheck],
    th: &TelemetryThresholds,
) -> Option<Flag> {
    let arms = [
        ("baseline", median_of(baseline, |t| t.kv_full_share)),
        ("candidate", median_of(candidate, |t| t.kv_full_share)),
    ];
    let hit: Vec<String> = arms
        .iter()
        .filter_map(|(n, s)| {
            let s = (*s)?;
            (s >= th.kv_full_share).then(|| format!("{n} {}", pct_plain(s)))
        })
        .collect();
    if hit.is_empty() {
        return None;
    }
    Some(Flag::new(
        FlagId::KvFull,
        FlagLevel::Look,
        format!(
            "{label}: the KV cache was at 98% or more of its capacity for {} of the scrapes \
             (median trial): the engine was bounded by KV memory, not its batch limit",
            hit.join(", ")
        ),
        "read the point as KV-bound; give the server more KV cache (vLLM \
         --gpu-memory-utilization, SGLang --mem-fraction-static) to measure beyond it",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(w: f64, r: f64) -> TelemetryCheck {
        TelemetryCheck {
            waiting_while_held: Some(w),
            running_while_held: Some(r),
            ..TelemetryCheck::default()
        }
    }

    #[test]
    fn server_queued_fires_on_a_queue_and_not_on_a_transient_request() {
        let th = TelemetryThresholds::default();
        // max-num-seqs 8 at c=32 (the simulator): 8 running, 23.4 waiting.
        let q = vec![queued(23.4, 8.0); 3];
        let f = server_queued("c=32", Some(32), &q, &q, &th).expect("fires");
        assert_eq!(
            (f.id, f.level),
            (FlagId::ServerQueued, FlagLevel::ReBaseline)
        );
        assert!(f.evidence.contains("74.5%"), "{}", f.evidence);
        // A request between arrival and admission now and then.
        let clean = vec![queued(0.05, 31.9); 3];
        assert!(server_queued("c=32", Some(32), &clean, &clean, &th).is_none());
        assert!(server_queued("c=32", Some(32), &[], &[], &th).is_none());
    }

    #[test]
    fn throttled_compares_the_arms() {
        let th = TelemetryThresholds::default();
        let t = |share: f64, clock: f64| TelemetryCheck {
            throttled_share: Some(share),
            sm_clock_ratio: Some(clock),
            reasons: if share > 0.0 {
                vec!["sw_power_cap".into()]
            } else {
                vec![]
            },
            ..TelemetryCheck::default()
        };
        // Both arms power-capped alike: no flag.
        assert!(throttled("c=1", &[t(0.6, 0.9)], &[t(0.62, 0.9)], &th).is_none());
        let f = throttled("c=1", &[t(0.0, 1.0)], &[t(0.9, 0.76)], &th).expect("fires");
        assert!(f.evidence.contains("sw_power_cap"), "{}", f.evidence);
        assert!(f.evidence.contains("SM clock"), "{}", f.evidence);
    }

    #[test]
    fn a_few_capped_samples_in_short_trials_are_not_throttling() {
        // The calibration's false alarm (bench/calibrate-telemetry.py, scenario busy): trials
        // of 4 samples, one capped in two of the candidate's three, a median of 25% against 0%.
        let th = TelemetryThresholds::default();
        let t = |share: f64, n: u64| TelemetryCheck {
            throttled_share: Some(share),
            gpu_samples: Some(n),
            sm_clock_ratio: Some(0.99),
            ..TelemetryCheck::default()
        };
        let base = [t(0.0, 4), t(0.0, 4), t(0.0, 4)];
        assert!(throttled("c=16", &base, &[t(0.25, 4), t(0.25, 4), t(0.0, 4)], &th).is_none());
        // The same shares over 60 samples a trial are throttling.
        let base = [t(0.0, 60), t(0.0, 60), t(0.0, 60)];
        let cand = [t(0.25, 60), t(0.25, 60), t(0.0, 60)];
        assert!(throttled("c=16", &base, &cand, &th).is_some());
        // Without sample counts (older results) the median gap decides alone.
        let old = |share: f64| TelemetryCheck {
            gpu_samples: None,
            ..t(share, 0)
        };
        assert!(throttled("c=16", &vec![old(0.0); 3], &vec![old(0.25); 3], &th).is_some());
    }

    #[test]
    fn a_busy_start_is_named() {
        let th = TelemetryThresholds::default();
        let free = StartCheck {
            block: 0,
            variant: "a".into(),
            memory_used_mib: 0,
            processes: vec![],
        };
        assert!(gpu_busy_at_start(std::slice::from_ref(&free), &th).is_none());
        let busy = StartCheck {
            block: 1,
            variant: "b".into(),
            memory_used_mib: 8148,
            processes: vec!["python3 (pid 429, 8148 MiB on GPU 0)".into()],
        };
        let f = gpu_busy_at_start(&[free, busy], &th).expect("fires");
        assert!(f.evidence.contains("python3 (pid 429"), "{}", f.evidence);
        assert!(f.evidence.contains("1 of 2"), "{}", f.evidence);
    }

    #[test]
    fn preempted_and_kv_full_read_their_evidence() {
        let th = TelemetryThresholds::default();
        let p = |n: f64| TelemetryCheck {
            preemptions: Some(n),
            kv_full_share: Some(if n > 0.0 { 0.4 } else { 0.0 }),
            ..TelemetryCheck::default()
        };
        assert!(preempted("c=8", &vec![p(0.0); 3], &vec![p(0.0); 3], &th).is_none());
        let f = preempted("c=8", &vec![p(0.0); 3], &vec![p(12.0); 3], &th).expect("fires");
        assert_eq!(f.level, FlagLevel::Look);
        assert!(kv_full("c=8", &vec![p(0.0); 3], &vec![p(0.0); 3], &th).is_none());
        assert!(kv_full("c=8", &vec![p(0.0); 3], &vec![p(5.0); 3], &th).is_some());
    }
}
