//! Peak memory of the per-request path for many requests: synthetic records (as the load
//! generator fills them: instants, one token event per token, usage, server timings) are
//! summarised by `metrics::summarize`, moved into sidecar lines and appended to a sidecar
//! file by the result store (`append_requests`, the sidecar half of the `save_trial` that
//! `servebench run` calls after every trial; the result file's rewrite is left out) — and
//! dropped before the next trial. Prints the process's peak RSS (getrusage `ru_maxrss`).
//!
//! ```text
//! record_memory REQUESTS_PER_TRIAL TRIALS TOKENS_PER_REQUEST
//! ```
//!
//! `bench/record-memory.sh` runs it for 10k, 100k and 1M requests in one trial, and 1M
//! requests as 100 trials of 10k (a long run), each in its own process.

use std::time::Instant;

use nix::sys::resource::{UsageWho, getrusage};
use servebench_result::metrics::{SummaryOptions, summarize};
use servebench_result::record::{RequestRecord, ServerTimings, TokenEvent, Usage};
use servebench_result::{RequestLine, ResultStore};

fn arg(i: usize, default: u64) -> u64 {
    std::env::args()
        .nth(i)
        .and_then(|a| a.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn peak_rss_mib() -> f64 {
    getrusage(UsageWho::RUSAGE_SELF).map_or(f64::NAN, |u| u.max_rss() as f64 / 1024.0)
}

/// Request `i` of a trial at concurrency 64: 2 ms apart, first token after 20 ms, then one
/// token every 10 ms (with a little deterministic spread).
fn record(i: u64, tokens: u32) -> RequestRecord {
    let send = i * 2_000_000;
    let mut events = Vec::with_capacity(tokens as usize);
    let mut t = send + 20_000_000 + (i % 7) * 100_000;
    for k in 0..tokens {
        events.push(TokenEvent { t_ns: t, tokens: 1 });
        t += 10_000_000 + u64::from(k % 5) * 50_000;
    }
    let end = t;
    RequestRecord {
        index: i as u32,
        prompt_index: i as u32,
        intended_ns: send,
        send_ns: Some(send),
        headers_ns: Some(send + 1_000_000),
        events,
        end_ns: Some(end),
        max_tokens: tokens,
        output_target: Some(tokens),
        expected_input_tokens: Some(512),
        input_tokens_exact: true,
        usage: Some(Usage {
            prompt_tokens: 512,
            completion_tokens: tokens,
            ..Default::default()
        }),
        chunk_tokens_from_usage: false,
        finish_reason: Some("length".into()),
        finish_reason_sent: None,
        content_held_back: false,
        reasoning: None,
        error: None,
        error_detail: None,
        server_timings: Some(ServerTimings {
            prompt_n: Some(512),
            ttft_ms: Some(19.0),
            predicted_n: Some(u64::from(tokens)),
            ..Default::default()
        }),
        turn: None,
        images: 0,
        answer: None,
    }
}

fn main() {
    let per_trial = arg(1, 10_000);
    let trials = arg(2, 1);
    let tokens = arg(3, 128) as u32;
    let dir = tempfile::tempdir().expect("temporary folder");
    let store = ResultStore::new(dir.path(), "memory");
    let started = Instant::now();
    let before = peak_rss_mib();
    let mut sidecar_bytes = 0;
    for trial in 0..trials {
        let records: Vec<RequestRecord> = (0..per_trial).map(|i| record(i, tokens)).collect();
        let summary = summarize(
            &records,
            &SummaryOptions {
                max_concurrency: Some(64),
                closed_loop: true,
                slo: None,
            },
        );
        assert_eq!(summary.all.completed as u64, per_trial);
        let lines: Vec<RequestLine> = records
            .into_iter()
            .map(|record| {
                RequestLine::new(trial as usize, "a".into(), trial as u32, 0, false, record)
            })
            .collect();
        store.append_requests(&lines).expect("sidecar append");
        drop(lines);
        sidecar_bytes = std::fs::metadata(&store.requests_path).map_or(0, |m| m.len());
        // Keep the sidecar from filling the disk on long runs: only its growth matters here.
        if trial + 1 < trials {
            std::fs::write(&store.requests_path, b"").expect("truncate sidecar");
        }
    }
    let total = per_trial * trials;
    let peak = peak_rss_mib();
    println!(
        "requests {total:>9} ({trials} trial(s) of {per_trial}), {tokens} tokens each: peak RSS {peak:8.1} MiB \
         (at start {before:.1} MiB; {:.0} bytes per request of one trial), last trial's sidecar {:.1} MiB, {:.1} s",
        (peak - before) * 1024.0 * 1024.0 / per_trial as f64,
        sidecar_bytes as f64 / (1024.0 * 1024.0),
        started.elapsed().as_secs_f64()
    );
}
