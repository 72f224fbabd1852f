//! The lean HTTP/1.1 executor against a raw TCP server: body framings other than chunked,
//! keep-alive reuse, and a pooled connection the server has closed in the meantime.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use servebench_runner::dataset::{Prompt, TrialPrompts};
use servebench_runner::loadgen::{ApiKind, LoadConfig, Target, run_trial};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use crate::loadgen_support;
use loadgen_support::read_request;

const SSE: &str = "data: {\"choices\":[{\"text\":\" a\"}]}\n\n\
data: {\"choices\":[{\"text\":\" b\",\"finish_reason\":\"length\"}]}\n\n\
data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n\n\
data: [DONE]\n\n";

/// How the raw server frames its answers.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// `Content-Length`, keep-alive: many requests per connection.
    Length,
    /// No length, `Connection: close`: the body ends when the server closes.
    Close,
    /// `Content-Length` and keep-alive advertised, but the server closes the connection
    /// right after each response (a pooled connection goes stale).
    Sneaky,
    /// An informational `100 Continue` head first, in the same write as the response.
    Continue,
}

/// Serves `mode`; counts accepted connections.
async fn server(mode: Mode) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let conns = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&conns);
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            counter.fetch_add(1, SeqCst);
            tokio::spawn(connection(sock, mode));
        }
    });
    (url, conns)
}

async fn connection(mut sock: TcpStream, mode: Mode) {
    let mut buf = Vec::new();
    loop {
        if !read_request(&mut sock, &mut buf).await {
            return;
        }
        let response = match mode {
            Mode::Length | Mode::Sneaky => format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{SSE}",
                SSE.len()
            ),
            Mode::Continue => format!(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                 content-length: {}\r\n\r\n{SSE}",
                SSE.len()
            ),
            Mode::Close => format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{SSE}"
            ),
        };
        // Split the response to exercise the head/body boundary.
        let (a, b) = response.as_bytes().split_at(response.len() / 3);
        if sock.write_all(a).await.is_err() || sock.write_all(b).await.is_err() {
            return;
        }
        if !matches!(mode, Mode::Length | Mode::Continue) {
            return;
        }
    }
}

async fn trial(url: String, requests: usize) -> servebench_runner::loadgen::TrialOutcome {
    let target = Target {
        base_url: url,
        api: ApiKind::Completions,
        model: "m".into(),
        api_key: None,
        headers: Vec::new(),
        ca_file: None,
    };
    let mut cfg = LoadConfig::new(requests);
    cfg.max_concurrency = Some(1);
    let prompts = TrialPrompts {
        measured: (0..requests)
            .map(|i| Prompt::text(format!("p{i}"), 2))
            .collect(),
        warmup: vec![],
        send_offsets_ns: None,
        conversations: None,
    };
    run_trial(&target, &cfg, &prompts).await.expect("runs")
}

#[tokio::test]
async fn content_length_bodies_reuse_one_connection() {
    let (url, conns) = server(Mode::Length).await;
    let out = trial(url, 5).await;
    assert!(
        out.summary.errors.is_empty(),
        "{:?}",
        out.records[0].error_detail
    );
    assert_eq!(out.summary.all.output_tokens, 10);
    assert_eq!(
        conns.load(SeqCst),
        1,
        "keep-alive: one connection for five requests"
    );
}

#[tokio::test]
async fn close_delimited_bodies_end_at_close() {
    let (url, conns) = server(Mode::Close).await;
    let out = trial(url, 3).await;
    assert!(
        out.summary.errors.is_empty(),
        "{:?}",
        out.records[0].error_detail
    );
    assert_eq!(conns.load(SeqCst), 3, "connection: close is not reused");
}

#[tokio::test]
async fn a_stale_pooled_connection_is_retried_on_a_fresh_one() {
    let (url, conns) = server(Mode::Sneaky).await;
    let out = trial(url, 3).await;
    assert!(
        out.summary.errors.is_empty(),
        "{:?}",
        out.records[1].error_detail
    );
    assert_eq!(out.summary.all.completed, 3);
    assert!(conns.load(SeqCst) >= 3);
}

#[tokio::test]
async fn host_names_try_every_resolved_address() {
    // `localhost` may resolve to ::1 first; the server listens on 127.0.0.1 only.
    let (url, _) = server(Mode::Length).await;
    let out = trial(url.replace("127.0.0.1", "localhost"), 2).await;
    assert!(
        out.summary.errors.is_empty(),
        "{:?}",
        out.records[0].error_detail
    );
}

#[tokio::test]
async fn informational_heads_are_skipped() {
    let (url, conns) = server(Mode::Continue).await;
    let out = trial(url, 2).await;
    assert!(
        out.summary.errors.is_empty(),
        "{:?}",
        out.records[0].error_detail
    );
    assert_eq!(out.summary.all.output_tokens, 4);
    assert_eq!(conns.load(SeqCst), 1);
}
