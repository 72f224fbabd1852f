//! The streaming response path on arbitrary bytes: SSE framing (`SseParser`), the JSON of
//! each event (`parse_chunk`) and the per-request record (`StreamConsumer`).
//!
//! Beyond "no panic", one property: SSE framing does not depend on how the bytes were split
//! into network chunks. The input's first byte seeds the split points; the events of the
//! split feed must equal those of the whole feed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use servebench_runner::loadgen::RequestRecord;
use servebench_runner::loadgen::sse::{EventType, SseParser};
use servebench_runner::loadgen::stream::{Flow, StreamConsumer};

fn events(chunks: &[&[u8]]) -> Vec<(EventType, Vec<u8>)> {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    for c in chunks {
        p.feed(c, |e| out.push((e.kind, e.data.to_vec())));
    }
    p.finish(|e| out.push((e.kind, e.data.to_vec())));
    out
}

/// Splits `body` at pseudo-random points drawn from `seed` (1 to 64 bytes apart).
fn split(seed: u8, body: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut state = u32::from(seed) | 1;
    let mut rest = body;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let n = ((state % 64) as usize + 1).min(rest.len());
        let (a, b) = rest.split_at(n);
        out.push(a);
        rest = b;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, body)) = data.split_first() else {
        return;
    };
    let chunks = split(seed, body);
    let whole = events(&[body]);
    let pieces = events(&chunks);
    assert_eq!(whole, pieces, "framing depends on the chunk split");

    let mut rec = RequestRecord::default();
    let mut consumer = StreamConsumer::new();
    let mut stopped = false;
    for (i, c) in chunks.iter().enumerate() {
        if consumer.on_chunk(i as u64, c, &mut rec) == Flow::Stop {
            stopped = true;
            break;
        }
    }
    if !stopped {
        consumer.on_eof(chunks.len() as u64, &mut rec);
        // A request either failed with a typed kind, or produced at least one token.
        assert!(
            rec.error.is_some() || !rec.events.is_empty(),
            "a successful request without tokens"
        );
    } else {
        assert!(rec.error.is_some(), "stopped without an error");
    }
    // Event instants never go backwards; details are bounded.
    assert!(rec.events.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
    assert!(rec.error_detail.as_ref().is_none_or(|d| d.len() <= 512));
});
