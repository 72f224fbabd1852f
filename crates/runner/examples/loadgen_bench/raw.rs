//! A reference client that does almost nothing: raw HTTP/1.1 over one keep-alive
//! `TcpStream` per worker, the request bytes prebuilt, the first token found by a byte search,
//! the stream's end by the chunked terminator. It shares every cost that is not the load
//! generator's (the simulator's HTTP handling and timer, the kernel, the loopback), so
//! `overhead(load generator) − overhead(raw)` is what the load generator itself adds.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

type BoxError = Box<dyn std::error::Error>;

/// Per request: client TTFT (send → first token bytes read) minus the simulator's
/// `timings.ttft_ms`, in ms.
pub(crate) async fn run(
    addr: SocketAddr,
    bodies: Vec<Bytes>,
    concurrency: usize,
) -> Result<Vec<f64>, BoxError> {
    let requests: Arc<Vec<Vec<u8>>> = Arc::new(
        bodies
            .iter()
            .map(|b| {
                let mut r = format!(
                    "POST /v1/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: \
                     application/json\r\naccept: text/event-stream\r\ncontent-length: {}\r\n\r\n",
                    b.len()
                )
                .into_bytes();
                r.extend_from_slice(b);
                r
            })
            .collect(),
    );
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (requests, next) = (Arc::clone(&requests), Arc::clone(&next));
        workers.push(tokio::spawn(
            async move { worker(addr, &requests, &next).await },
        ));
    }
    let mut out = Vec::new();
    for w in workers {
        out.extend(
            w.await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?,
        );
    }
    Ok(out)
}

async fn worker(
    addr: SocketAddr,
    requests: &[Vec<u8>],
    next: &AtomicUsize,
) -> Result<Vec<f64>, std::io::Error> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let mut buf: Vec<u8> = Vec::with_capacity(64 << 10);
    let mut out = Vec::new();
    loop {
        let i = next.fetch_add(1, Relaxed);
        let Some(req) = requests.get(i) else {
            return Ok(out);
        };
        buf.clear();
        let t0 = Instant::now();
        stream.write_all(req).await?;
        let mut first: Option<Instant> = None;
        let mut scanned: usize = 0;
        loop {
            if stream.read_buf(&mut buf).await? == 0 {
                return Err(std::io::Error::other("connection closed mid-response"));
            }
            if first.is_none() {
                if find(&buf[scanned.saturating_sub(8)..], b"\"text\":\"").is_some() {
                    first = Some(Instant::now());
                }
                scanned = buf.len();
            }
            if buf.ends_with(b"\r\n0\r\n\r\n") {
                break;
            }
        }
        let client_ms = first.map(|f| (f - t0).as_secs_f64() * 1e3);
        if let (Some(c), Some(s)) = (client_ms, number_after(&buf, b"\"ttft_ms\":")) {
            out.push(c - s);
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn number_after(hay: &[u8], key: &[u8]) -> Option<f64> {
    let start = find(hay, key)? + key.len();
    let rest = &hay[start..];
    let end = rest.iter().position(|b| *b == b',' || *b == b'}')?;
    std::str::from_utf8(&rest[..end]).ok()?.trim().parse().ok()
}
