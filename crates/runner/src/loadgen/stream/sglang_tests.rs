//! SGLang 0.5.17's real streams (crates/engines/src/sglang/transcripts/0.5.17/, recorded on an
//! H100) through the stream reader and the metrics.
//!
//! The chat stream has 4 text chunks for 8 completion tokens: 0.5.17 sends no chunk for a
//! step whose text delta is empty (entrypoints/openai/serving_chat.py:750-766, `if delta:`),
//! and every other token of the weightless model decodes to nothing. The completions stream
//! has a chunk for each of its 8 tokens. The reader counts the chunks with text as token
//! events and the usage's completion tokens as the output.

use super::*;
use servebench_engines::{Engine, profile};
use servebench_result::metrics::{derive, itl_gaps};

const MS: u64 = 1_000_000;

/// The events of `name`, one a millisecond from a request sent at 0, read by SGLang's rule.
fn replay(name: &str) -> RequestRecord {
    let path = format!(
        "{}/../engines/src/sglang/transcripts/0.5.17/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let http = std::fs::read_to_string(&path).expect(&path);
    let (_, body) = http.split_once("\r\n\r\n").expect("headers, then the body");
    let mut rec = RequestRecord {
        send_ns: Some(0),
        ..RequestRecord::default()
    };
    // SGLang's own rule of which chunks carry a token (its facts.rs), chat or completions.
    let chat = name.starts_with("chat");
    let mut c = StreamConsumer::reading(
        profile(Engine::Sglang)
            .expect("a profile")
            .stream
            .token_chunks
            .api(chat),
    );
    let mut t = 0;
    for event in body.split_inclusive("\n\n") {
        t += MS;
        if c.on_chunk(t, event.as_bytes(), &mut rec) == Flow::Stop {
            rec.end_ns = Some(t);
            return rec;
        }
    }
    c.on_eof(t + MS, &mut rec);
    rec
}

#[test]
fn sglang_0_5_17s_chat_stream_counts_the_usage_tokens_and_text_chunks() {
    let rec = replay("chat-stream.http");
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(rec.finish_reason.as_deref(), Some("length"));
    // Events: the 4 chunks with text (2nd to 5th event), not the role-only opener (its
    // `content: ""`), the finish chunk's `{"reasoning_content": null}` or the usage chunk.
    let at: Vec<u64> = rec.events.iter().map(|e| e.t_ns / MS).collect();
    assert_eq!(at, [2, 3, 4, 5]);
    let m = derive(&rec);
    assert_eq!(m.n_out, Some(8));
    assert_eq!(m.n_in, Some(31));
    assert!(m.reconciled, "8 tokens over 4 events");
    assert_eq!(m.ttft_ms, Some(2.0));
    // TPOT from usage: the last text chunk (5 ms) less the first (2 ms), over the 7 gaps
    // between 8 tokens; the finish chunk carries no text and is not a token's arrival.
    assert_eq!(m.tpot_ms, Some(3.0 / 7.0));
    // Each ITL sample spans two tokens: 1 ms between chunks, half of it a token.
    let gaps: Vec<(f64, f64)> = itl_gaps(&rec, &m).collect();
    assert_eq!(gaps, [(1.0, 0.5); 3]);
}

#[test]
fn sglang_0_5_17s_completions_stream_has_a_chunk_a_token() {
    let rec = replay("completions-stream.http");
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(rec.finish_reason.as_deref(), Some("length"));
    // Eight text chunks, the finish on the last; then the usage chunk (`choices: []`) and
    // `[DONE]` (10th event).
    let at: Vec<u64> = rec.events.iter().map(|e| e.t_ns / MS).collect();
    assert_eq!(at, [1, 2, 3, 4, 5, 6, 7, 8]);
    let m = derive(&rec);
    assert_eq!((m.n_in, m.n_out), (Some(20), Some(8)));
    // One token an event, as usage says: nothing to reconcile.
    assert!(!m.reconciled);
    assert_eq!(m.ttft_ms, Some(1.0));
    assert_eq!(m.tpot_ms, Some(7.0 / 7.0));
    let gaps: Vec<(f64, f64)> = itl_gaps(&rec, &m).collect();
    assert_eq!(gaps, [(1.0, 1.0); 7]);
}
