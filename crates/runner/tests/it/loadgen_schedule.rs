//! The trial driver on a paused clock, through a scripted executor: arrival schedules,
//! the concurrency gate, warm-up, timeouts and the trial deadline, checked exactly.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use bytes::Bytes;
use servebench_runner::dataset::{Prompt, TrialPrompts};
use servebench_runner::loadgen::schedule::arrival_offsets;
use servebench_runner::loadgen::{
    ApiKind, Arrival, Clock, ErrorKind, Executor, LoadConfig, RequestRecord, Target, TokenEvent,
    Usage, run_trial_with,
};

const MS: u64 = 1_000_000;

/// Answers after `ttft`, then `tokens` tokens `gap` apart; counts requests in flight.
#[derive(Default)]
struct Scripted {
    ttft: Duration,
    gap: Duration,
    tokens: u32,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    calls: AtomicUsize,
}

struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

impl Executor for Scripted {
    async fn execute(&self, _body: Bytes, rec: &mut RequestRecord, clock: Clock) {
        rec.send_ns = Some(clock.now_ns());
        self.calls.fetch_add(1, SeqCst);
        let n = self.in_flight.fetch_add(1, SeqCst) + 1;
        self.max_in_flight.fetch_max(n, SeqCst);
        let _guard = InFlight(&self.in_flight);
        tokio::time::sleep(self.ttft).await;
        for k in 0..self.tokens {
            if k > 0 {
                tokio::time::sleep(self.gap).await;
            }
            rec.events.push(TokenEvent {
                t_ns: clock.now_ns(),
                tokens: 1,
            });
        }
        rec.usage = Some(Usage {
            prompt_tokens: 1,
            completion_tokens: self.tokens,
            ..Default::default()
        });
        rec.finish_reason = Some("length".into());
        rec.end_ns = Some(clock.now_ns());
    }
}

fn target() -> Target {
    Target {
        base_url: "http://unused".into(),
        api: ApiKind::Completions,
        model: "m".into(),
        api_key: None,
        headers: Vec::new(),
        ca_file: None,
    }
}

fn prompts(n: usize, warmup: usize) -> TrialPrompts {
    TrialPrompts {
        measured: (0..n).map(|i| Prompt::text(format!("p{i}"), 4)).collect(),
        warmup: (0..warmup)
            .map(|i| Prompt::text(format!("w{i}"), 4))
            .collect(),
        send_offsets_ns: None,
        conversations: None,
    }
}

fn scripted(ttft_ms: u64, gap_ms: u64, tokens: u32) -> Arc<Scripted> {
    Arc::new(Scripted {
        ttft: Duration::from_millis(ttft_ms),
        gap: Duration::from_millis(gap_ms),
        tokens,
        ..Default::default()
    })
}

#[tokio::test(start_paused = true)]
async fn unconstrained_requests_are_sent_exactly_on_schedule() {
    for arrival in [
        Arrival::Constant { rate: 10.0 },
        Arrival::Poisson { rate: 20.0 },
        Arrival::Gamma {
            rate: 20.0,
            burstiness: 0.3,
        },
    ] {
        let mut cfg = LoadConfig::new(30);
        cfg.arrival = arrival;
        cfg.seed = 5;
        let exec = scripted(100, 10, 4);
        let out = run_trial_with(exec, &target(), &cfg, &prompts(30, 0))
            .await
            .expect("runs");
        let want = arrival_offsets(&arrival, 30, 5).expect("valid");
        let sent: Vec<u64> = out
            .records
            .iter()
            .map(|r| r.send_ns.expect("sent"))
            .collect();
        let intended: Vec<u64> = out.records.iter().map(|r| r.intended_ns).collect();
        assert_eq!(intended, want, "{arrival:?}");
        // The paused clock only moves on timers: sends land on the schedule exactly (to
        // the millisecond granularity of tokio's timer wheel).
        for (s, w) in sent.iter().zip(&want) {
            assert!(s >= w && s - w < MS, "{arrival:?}: sent {s} for {w}");
        }
        assert_eq!(out.summary.errors.len(), 0);
    }
}

#[tokio::test(start_paused = true)]
async fn the_gate_holds_the_limit_and_queue_time_is_the_wait() {
    // Limit 2, all due at once, each request 100 ms + 3 × 10 ms = 130 ms.
    let exec = scripted(100, 10, 4);
    let mut cfg = LoadConfig::new(6);
    cfg.max_concurrency = Some(2);
    let out = run_trial_with(exec.clone(), &target(), &cfg, &prompts(6, 0))
        .await
        .expect("runs");
    assert_eq!(exec.max_in_flight.load(SeqCst), 2);
    let sends: Vec<u64> = out
        .records
        .iter()
        .map(|r| r.send_ns.expect("sent") / MS)
        .collect();
    assert_eq!(sends, [0, 0, 130, 130, 260, 260]);
    let s = &out.summary;
    assert_eq!(s.metric("peak_concurrency"), Some(2.0));
    assert!(!s.concurrency_limit_exceeded);
    assert_eq!(s.metric("queue_time_max"), Some(260.0));
    assert_eq!(s.metric("ttft_p50"), Some(100.0));
    assert_eq!(s.metric("e2e_max"), Some(130.0));
    assert_eq!(s.metric("tpot_mean"), Some(10.0));
    assert!((s.metric("mean_concurrency").expect("set") - 2.0).abs() < 1e-9);
}

#[tokio::test(start_paused = true)]
async fn warmup_runs_first_under_the_same_limit_and_is_excluded() {
    let exec = scripted(50, 10, 2);
    let mut cfg = LoadConfig::new(4);
    cfg.max_concurrency = Some(1);
    cfg.warmup_requests = 3;
    let out = run_trial_with(exec.clone(), &target(), &cfg, &prompts(4, 2))
        .await
        .expect("runs");
    assert_eq!(exec.calls.load(SeqCst), 7);
    assert_eq!(exec.max_in_flight.load(SeqCst), 1);
    assert_eq!(out.warmup_records.len(), 3, "warm-up prompts are cycled");
    assert_eq!(out.records.len(), 4);
    assert_eq!(out.summary.all.requests, 4);
    // The measured phase's clock starts after the warm-up: its first send is at 0.
    assert_eq!(out.records[0].send_ns, Some(0));
}

#[tokio::test(start_paused = true)]
async fn a_stalled_request_is_cut_at_its_timeout() {
    let exec = scripted(10_000, 10, 2);
    let mut cfg = LoadConfig::new(2);
    cfg.request_timeout = Duration::from_secs(1);
    cfg.max_concurrency = Some(1);
    let out = run_trial_with(exec.clone(), &target(), &cfg, &prompts(2, 0))
        .await
        .expect("runs");
    for r in &out.records {
        assert_eq!(r.error, Some(ErrorKind::Timeout));
        assert_eq!(
            r.end_ns.expect("end") - r.send_ns.expect("sent"),
            1_000 * MS
        );
    }
    assert_eq!(
        out.records[1].send_ns,
        Some(1_000 * MS),
        "the permit came back at the cut"
    );
    assert_eq!(exec.in_flight.load(SeqCst), 0);
    assert_eq!(out.summary.errors.get(&ErrorKind::Timeout), Some(&2));
    assert_eq!(out.summary.metric("error_rate"), Some(1.0));
}

#[tokio::test(start_paused = true)]
async fn the_trial_deadline_cuts_in_flight_and_unsent_requests() {
    // One request per second, each 800 ms; deadline 3.5 s: requests at 0, 1, 2 complete,
    // the one at 3 s is cut at 3.5 s, the rest are never sent.
    let exec = scripted(800, 0, 1);
    let mut cfg = LoadConfig::new(10);
    cfg.arrival = Arrival::Constant { rate: 1.0 };
    cfg.trial_deadline = Some(Duration::from_millis(3_500));
    let out = run_trial_with(exec, &target(), &cfg, &prompts(10, 0))
        .await
        .expect("runs");
    assert_eq!(out.records.len(), 10);
    let kinds: Vec<Option<ErrorKind>> = out.records.iter().map(|r| r.error).collect();
    assert_eq!(kinds[..3], [None, None, None]);
    assert_eq!(kinds[3], Some(ErrorKind::TrialDeadline));
    assert!(kinds[4..].iter().all(|k| *k == Some(ErrorKind::NotSent)));
    assert!(out.records[4..].iter().all(|r| r.send_ns.is_none()));
    assert_eq!(out.summary.errors.get(&ErrorKind::NotSent), Some(&6));
}

#[tokio::test(start_paused = true)]
async fn bad_inputs_are_typed_errors_not_panics() {
    let exec = scripted(1, 1, 1);
    let mut cfg = LoadConfig::new(3);
    cfg.arrival = Arrival::Poisson { rate: -1.0 };
    let err = run_trial_with(exec.clone(), &target(), &cfg, &prompts(3, 0))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("inf"), "{err}");
    let cfg = LoadConfig::new(5);
    let err = run_trial_with(exec.clone(), &target(), &cfg, &prompts(3, 0))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("5 prompts"), "{err}");
    let mut cfg = LoadConfig::new(1);
    cfg.warmup_requests = 1;
    assert!(
        run_trial_with(exec, &target(), &cfg, &prompts(1, 0))
            .await
            .is_err()
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_a_trial_stops_its_requests() {
    let exec = scripted(10_000, 10, 2);
    let cfg = LoadConfig::new(4);
    let (t, p) = (target(), prompts(4, 0));
    let trial = run_trial_with(exec.clone(), &t, &cfg, &p);
    // Interrupted after 1 s: every request is in flight, then the trial is dropped.
    assert!(
        tokio::time::timeout(Duration::from_secs(1), trial)
            .await
            .is_err()
    );
    tokio::task::yield_now().await;
    assert_eq!(exec.calls.load(SeqCst), 4);
    assert_eq!(
        exec.in_flight.load(SeqCst),
        0,
        "aborted tasks released their requests"
    );
}
