//! The concurrency limit is hard: requests in flight never exceed it, warm-up included,
//! measured on the server side (an in-process server counting from request receipt to the
//! end of its response body) and on the client side (the sweep line over [send, end)).

use crate::loadgen_support;

use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use loadgen_support::{Script, config, prompts, serve};
use servebench_runner::loadgen::{ApiKind, Transport, run_trial};

async fn check_limit(limit: usize, requests: usize, ttft_ms: u64) {
    check_limit_with(limit, requests, ttft_ms, Transport::Lean).await;
}

async fn check_limit_with(limit: usize, requests: usize, ttft_ms: u64, transport: Transport) {
    let server = serve(Script::Tokens {
        ttft: Duration::from_millis(ttft_ms),
        gap: Duration::from_millis(1),
    })
    .await;
    let mut cfg = config(requests);
    cfg.max_concurrency = Some(limit);
    cfg.warmup_requests = 2 * limit.min(8);
    cfg.transport = transport;
    let out = run_trial(
        &server.target(ApiKind::Completions),
        &cfg,
        &prompts(requests, 4),
    )
    .await
    .expect("runs");
    let s = &out.summary;
    assert!(s.errors.is_empty(), "limit {limit}: {:?}", s.errors);
    assert_eq!(s.all.completed, requests);
    let server_peak = server.counters.max_in_flight.load(SeqCst);
    assert_eq!(server_peak, limit, "server-side peak at limit {limit}");
    assert_eq!(
        s.all.peak_concurrency, limit,
        "client-side peak at limit {limit}"
    );
    assert!(!s.concurrency_limit_exceeded);
    assert_eq!(
        server.counters.requests.load(SeqCst),
        requests + cfg.warmup_requests
    );
    assert_eq!(server.counters.in_flight.load(SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_1() {
    check_limit(1, 12, 5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_10() {
    check_limit(10, 60, 50).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_10_reqwest() {
    check_limit_with(10, 60, 50, Transport::Reqwest).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_1024() {
    // Long enough a first token that all 1024 connections are open before any finishes.
    let _ = servebench_runner::loadgen::raise_open_file_limit();
    check_limit(1024, 2048, 2500).await;
}
