//! One request on one connection: write it, read the response head, then the body — chunked,
//! by length or to the close — feeding each read's bytes to the SSE parser with the read's
//! arrival instant, and say whether the connection can be reused.

use std::time::Duration;

use servebench_result::record::{ErrorKind, RequestRecord};

use super::codec::{self, ChunkedDecoder, Framing, Head, parse_head};
use super::stamp::Received;
use super::{Conn, MAX_ERROR_BODY, ReadCounts, Tally};
use crate::loadgen::client::Clock;
use crate::loadgen::stream::{Flow, StreamConsumer};
use servebench_engines::TokenChunks;

pub(super) enum Outcome {
    /// The request finished (well or not); the connection if it can be reused.
    Done(Option<Conn>),
    /// Nothing was received before the connection failed.
    StaleConnection,
}

/// The instant data read now arrived: the clock now, less the kernel-reported age, and never
/// before `floor` (the previous instant of the same response).
fn arrival(clock: Clock, age: Option<Duration>, floor: u64) -> u64 {
    let age = age.map_or(0, |a| u64::try_from(a.as_nanos()).unwrap_or(u64::MAX));
    clock.now_ns().saturating_sub(age).max(floor)
}

pub(super) async fn exchange(
    mut conn: Conn,
    req: &[u8],
    rec: &mut RequestRecord,
    clock: Clock,
    reads: &ReadCounts,
    chunks: TokenChunks,
) -> Outcome {
    let mut tally = Tally::new(reads);
    // t_send: just before the request is written, so connection set-up (a new connection, or
    // SYN retries when a listen backlog overflows) is client queue time, not TTFT.
    rec.send_ns = Some(clock.now_ns());
    if conn.sock.write_all(req).await.is_err() {
        return Outcome::StaleConnection;
    }
    // Response head.
    let mut head_buf: Vec<u8> = Vec::new();
    // Parse what has arrived before reading more: after an informational (1xx) head the
    // final head may already be in the buffer.
    let mut received = false;
    let mut head_age = None;
    let (head, body_start) = loop {
        match parse_head(&head_buf) {
            Ok(Some((h, n))) if h.status < 200 => {
                head_buf.drain(..n);
                continue;
            }
            Ok(Some(found)) => break found,
            Ok(None) => {}
            Err(e) => return fail(rec, clock, ErrorKind::MalformedEvent, e.to_string()),
        }
        match conn.read(&mut tally).await {
            Ok(Received { n: 0, .. }) | Err(_) if !received => return Outcome::StaleConnection,
            Ok(Received { n: 0, .. }) => {
                let msg = "connection closed in the response head".to_owned();
                return fail(rec, clock, ErrorKind::Transport, msg);
            }
            Err(e) => return fail(rec, clock, ErrorKind::Transport, e.to_string()),
            Ok(got) => (received, head_age) = (true, got.age),
        }
        head_buf.extend_from_slice(conn.data());
    };
    let head_ns = arrival(clock, head_age, rec.send_ns.unwrap_or(0));
    rec.headers_ns = Some(head_ns);
    let json = head
        .content_type
        .as_deref()
        .is_some_and(|c| c.starts_with("application/json"));
    let mut body = Body::new(&head);
    if !(200..300).contains(&head.status) || json {
        let mut text = Vec::new();
        let keep = |text: &mut Vec<u8>, d: &[u8]| {
            let room = MAX_ERROR_BODY.saturating_sub(text.len());
            text.extend_from_slice(&d[..d.len().min(room)]);
        };
        let mut ok = body
            .feed(&head_buf[body_start..], |d| keep(&mut text, d))
            .is_ok();
        while ok && !body.done && text.len() < MAX_ERROR_BODY {
            match conn.read(&mut tally).await {
                Ok(Received { n: 0, .. }) | Err(_) => break,
                Ok(_) => ok = body.feed(conn.data(), |d| keep(&mut text, d)).is_ok(),
            }
        }
        rec.end_ns = Some(clock.now_ns());
        let text = String::from_utf8_lossy(&text).into_owned();
        let kind = if !(200..300).contains(&head.status) {
            ErrorKind::Http {
                status: head.status,
            }
        } else if text.contains("\"error\"") {
            ErrorKind::ServerErrorEvent
        } else {
            ErrorKind::MalformedEvent
        };
        rec.fail(kind, text);
        return Outcome::Done(None);
    }
    // Streamed body: one read, one instant (the kernel's arrival stamp where there is one,
    // else a clock reading), then decode and parse in place.
    let mut consumer = StreamConsumer::reading(chunks);
    let t = head_ns;
    let mut flow = Flow::Continue;
    if let Err(e) = body.feed(&head_buf[body_start..], |d| {
        flow = consume(&mut consumer, t, d, rec, flow)
    }) {
        return fail(rec, clock, ErrorKind::MalformedEvent, e.to_string());
    }
    drop(head_buf);
    let mut last = t;
    while flow == Flow::Continue && !body.done {
        match conn.read(&mut tally).await {
            Ok(Received { n: 0, .. }) => {
                body.eof();
                if !body.done {
                    let msg = "connection closed before the end of the body".to_owned();
                    return fail(rec, clock, ErrorKind::StreamDisconnected, msg);
                }
            }
            Ok(got) => {
                let t = arrival(clock, got.age, last);
                last = t;
                let data = conn.data();
                if let Err(e) = body.feed(data, |d| flow = consume(&mut consumer, t, d, rec, flow))
                {
                    return fail(rec, clock, ErrorKind::StreamDisconnected, e.to_string());
                }
            }
            Err(e) => return fail(rec, clock, ErrorKind::StreamDisconnected, e.to_string()),
        }
    }
    if flow == Flow::Stop {
        rec.end_ns.get_or_insert(clock.now_ns());
        return Outcome::Done(None);
    }
    consumer.on_eof(clock.now_ns(), rec);
    Outcome::Done(head.keep_alive.then_some(conn))
}

fn consume(
    c: &mut StreamConsumer,
    t: u64,
    data: &[u8],
    rec: &mut RequestRecord,
    flow: Flow,
) -> Flow {
    match flow {
        Flow::Stop => Flow::Stop,
        Flow::Continue => c.on_chunk(t, data, rec),
    }
}

fn fail(rec: &mut RequestRecord, clock: Clock, kind: ErrorKind, detail: String) -> Outcome {
    rec.end_ns = Some(clock.now_ns());
    rec.fail(kind, detail);
    Outcome::Done(None)
}

/// The body of one response, whatever its framing.
struct Body {
    framing: Framing,
    chunked: ChunkedDecoder,
    left: u64,
    done: bool,
}

impl Body {
    fn new(head: &Head) -> Self {
        let left = match head.framing {
            Framing::Length(n) => n,
            _ => 0,
        };
        Body {
            framing: head.framing,
            chunked: ChunkedDecoder::default(),
            left,
            done: matches!(head.framing, Framing::Length(0)),
        }
    }

    fn feed(
        &mut self,
        input: &[u8],
        on_data: impl FnMut(&[u8]),
    ) -> Result<(), codec::FramingError> {
        let mut on_data = on_data;
        match self.framing {
            Framing::Chunked => {
                self.chunked.feed(input, on_data)?;
                self.done = self.chunked.is_done();
            }
            Framing::Length(_) => {
                let n = input
                    .len()
                    .min(usize::try_from(self.left).unwrap_or(usize::MAX));
                if n > 0 {
                    on_data(&input[..n]);
                }
                self.left -= n as u64;
                self.done = self.left == 0;
            }
            Framing::Close => {
                if !input.is_empty() {
                    on_data(input);
                }
            }
        }
        Ok(())
    }

    /// The server closed the connection: the end of a close-delimited body.
    fn eof(&mut self) {
        if self.framing == Framing::Close {
            self.done = true;
        }
    }
}
