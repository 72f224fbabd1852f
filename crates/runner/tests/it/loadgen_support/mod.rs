//! Small in-process HTTP servers (axum, bound to 127.0.0.1:0) that produce each edge case of
//! a streamed response byte for byte, and count requests in flight on the server side.

#![allow(dead_code)] // each test file uses part of this module

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::Response;
use axum::routing::post;
use servebench_runner::dataset::{Prompt, TrialPrompts};
use servebench_runner::loadgen::{ApiKind, LoadConfig, Target};

/// One step of a scripted response body.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Wait, then write these bytes as one chunk.
    Send(Duration, Vec<u8>),
    /// Wait, then break the connection (the chunked body ends without its terminator).
    Cut(Duration),
}

/// How the server answers every request.
#[derive(Debug, Clone)]
pub(crate) enum Script {
    /// `200 text/event-stream` with these steps.
    Stream(Vec<Step>),
    /// A whole response with this status, content type and body.
    Whole(u16, &'static str, &'static str),
    /// A completion stream of `max_tokens` (from the request) tokens, `ttft` then `gap`
    /// apart, usage at the end.
    Tokens { ttft: Duration, gap: Duration },
}

/// Server-side counters.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
    pub requests: AtomicUsize,
}

struct Guard(Arc<Counters>);

impl Guard {
    fn enter(c: &Arc<Counters>) -> Self {
        c.requests.fetch_add(1, SeqCst);
        let n = c.in_flight.fetch_add(1, SeqCst) + 1;
        c.max_in_flight.fetch_max(n, SeqCst);
        Guard(Arc::clone(c))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, SeqCst);
    }
}

struct Shared {
    script: Script,
    counters: Arc<Counters>,
}

/// A running test server.
pub(crate) struct TestServer {
    pub addr: SocketAddr,
    pub counters: Arc<Counters>,
}

impl TestServer {
    pub(crate) fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub(crate) fn target(&self, api: ApiKind) -> Target {
        Target {
            base_url: self.base_url(),
            api,
            model: "test".into(),
            api_key: None,
            headers: Vec::new(),
            ca_file: None,
        }
    }
}

/// Starts a server on the current runtime.
pub(crate) async fn serve(script: Script) -> TestServer {
    let counters = Arc::new(Counters::default());
    let shared = Arc::new(Shared {
        script,
        counters: Arc::clone(&counters),
    });
    let app = Router::new()
        .route("/v1/completions", post(handler))
        .route("/v1/chat/completions", post(handler))
        .with_state(shared);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("bound address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    TestServer { addr, counters }
}

async fn handler(State(st): State<Arc<Shared>>, body: Bytes) -> Response {
    let guard = Guard::enter(&st.counters);
    let steps = match &st.script {
        Script::Whole(status, ct, text) => {
            drop(guard);
            return Response::builder()
                .status(StatusCode::from_u16(*status).expect("valid status"))
                .header(header::CONTENT_TYPE, *ct)
                .body(Body::from(*text))
                .expect("response");
        }
        Script::Stream(steps) => steps.clone(),
        Script::Tokens { ttft, gap } => {
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let n = v["max_tokens"].as_u64().unwrap_or(1);
            token_steps(n, *ttft, *gap)
        }
    };
    let stream = futures_util::stream::unfold(
        (steps.into_iter(), Some(guard)),
        |(mut it, guard)| async move {
            let step = it.next()?;
            match step {
                Step::Send(d, bytes) => {
                    if !d.is_zero() {
                        tokio::time::sleep(d).await;
                    }
                    Some((Ok::<_, std::io::Error>(Bytes::from(bytes)), (it, guard)))
                }
                Step::Cut(d) => {
                    tokio::time::sleep(d).await;
                    Some((Err(std::io::Error::other("cut")), (it, guard)))
                }
            }
        },
    );
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(stream))
        .expect("response")
}

/// A completions stream: `n` one-token events, a finish, usage, `[DONE]`.
pub(crate) fn token_steps(n: u64, ttft: Duration, gap: Duration) -> Vec<Step> {
    let mut v = Vec::new();
    for k in 0..n {
        let fr = if k + 1 == n { "\"length\"" } else { "null" };
        let ev =
            format!("data: {{\"choices\":[{{\"text\":\" w{k}\",\"finish_reason\":{fr}}}]}}\n\n");
        v.push(Step::Send(if k == 0 { ttft } else { gap }, ev.into_bytes()));
    }
    let usage = format!(
        "data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":3,\"completion_tokens\":{n}}}}}\n\n"
    );
    v.push(Step::Send(Duration::ZERO, usage.into_bytes()));
    v.push(Step::Send(Duration::ZERO, b"data: [DONE]\n\n".to_vec()));
    v
}

pub(crate) fn now(b: &[u8]) -> Step {
    Step::Send(Duration::ZERO, b.to_vec())
}

pub(crate) fn after(ms: u64, b: &[u8]) -> Step {
    Step::Send(Duration::from_millis(ms), b.to_vec())
}

pub(crate) fn prompts(n: usize, max_tokens: u32) -> TrialPrompts {
    TrialPrompts {
        measured: (0..n)
            .map(|i| Prompt::text(format!("prompt {i}"), max_tokens))
            .collect(),
        warmup: (0..4)
            .map(|i| Prompt::text(format!("warm {i}"), max_tokens))
            .collect(),
        send_offsets_ns: None,
        conversations: None,
    }
}

pub(crate) fn config(n: usize) -> LoadConfig {
    let mut c = LoadConfig::new(n);
    c.request_timeout = Duration::from_secs(20);
    c
}

/// Reads one HTTP request (head, then `content-length` bytes) from a raw socket, keeping
/// what follows it in `buf`; false when the peer closed first. For servers that write their
/// answers byte by byte on a plain `TcpStream`.
pub(crate) async fn read_request(sock: &mut tokio::net::TcpStream, buf: &mut Vec<u8>) -> bool {
    use tokio::io::AsyncReadExt;
    let mut chunk = [0u8; 4096];
    let (head_end, len) = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..i]).to_lowercase();
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (i + 4, len);
        }
        match sock.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    while buf.len() < head_end + len {
        match sock.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    buf.drain(..head_end + len);
    true
}
