//! A minimal HTTP/1.1 streaming client that counts SSE events on raw sockets, so the
//! client is never the bottleneck: no HTTP library, no JSON parsing, one pass per byte, and
//! each connection reads at most once a millisecond (the socket buffer holds what arrives
//! meanwhile), so the client makes a few large reads instead of one small read per event.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const EVENT: &[u8] = b"data: ";
const DONE: &[u8] = b"[DONE]";
/// Bytes after `[DONE]` up to the end of the response: "\n\n", chunk CRLF, "0\r\n\r\n".
const TAIL_AFTER_DONE: usize = 9;
/// Pause between two reads of one connection.
const READ_INTERVAL: Duration = Duration::from_millis(1);

/// Streams `tokens`-token completions on `conns` connections; counts events between the
/// end of `warmup` and `warmup + secs`. Returns (events, seconds).
pub(crate) async fn run(
    addr: SocketAddr,
    conns: usize,
    tokens: u32,
    warmup: Duration,
    secs: Duration,
) -> (u64, f64) {
    let events = Arc::new(AtomicU64::new(0));
    for _ in 0..conns {
        let events = Arc::clone(&events);
        tokio::spawn(async move {
            if let Err(e) = connection(addr, tokens, &events).await {
                eprintln!("client connection failed: {e}");
            }
        });
    }
    tokio::time::sleep(warmup).await;
    let (c0, t0) = (events.load(Relaxed), Instant::now());
    tokio::time::sleep(secs).await;
    let (c1, dt) = (events.load(Relaxed), t0.elapsed().as_secs_f64());
    (c1 - c0, dt)
}

async fn connection(addr: SocketAddr, tokens: u32, events: &AtomicU64) -> std::io::Result<()> {
    let mut tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let body = format!(
        r#"{{"model":"sim-model","prompt":"hello world","max_tokens":{tokens},"stream":true,"ignore_eos":true}}"#
    );
    let request = format!(
        "POST /v1/completions HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        tcp.write_all(request.as_bytes()).await?;
        let (mut ev, mut done) = (0usize, 0usize);
        let mut tail: Option<usize> = None;
        'response: loop {
            let n = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut buf))
                .await
                .map_err(|_| std::io::Error::other("no data for 10 s"))??;
            if n == 0 {
                return Err(std::io::Error::other("server closed the connection"));
            }
            let mut counted = 0;
            for (i, &b) in buf[..n].iter().enumerate() {
                if let Some(left) = tail.as_mut() {
                    *left -= 1;
                    if *left == 0 {
                        debug_assert_eq!(i + 1, n, "no pipelining: nothing follows a response");
                        events.fetch_add(counted, Relaxed);
                        break 'response;
                    }
                    continue;
                }
                ev = if b == EVENT[ev] {
                    ev + 1
                } else {
                    usize::from(b == EVENT[0])
                };
                if ev == EVENT.len() {
                    ev = 0;
                    counted += 1;
                }
                done = if b == DONE[done] {
                    done + 1
                } else {
                    usize::from(b == DONE[0])
                };
                if done == DONE.len() {
                    tail = Some(TAIL_AFTER_DONE);
                }
            }
            events.fetch_add(counted, Relaxed);
            tokio::time::sleep(READ_INTERVAL).await;
        }
    }
}
