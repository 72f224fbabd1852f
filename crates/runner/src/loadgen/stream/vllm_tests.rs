//! vLLM 0.26.0's real chat stream (crates/engines/src/vllm/transcripts/0.26.0/
//! chat-stream.http, recorded on an H100) through the stream reader and the metrics.
//!
//! Between its text chunks it sends `"delta": {"content": ""}`: each is a token whose text
//! decodes to nothing (`chat-stream-logprobs.http` shows it as `<unk>`, with a logprob).
//! 0.26.0 sends a chunk for every engine output, empty text included, skipping only an
//! empty one before the first token (entrypoints/openai/chat_completion/serving.py:594-619).
//! The reader counts the chunks that carry text as token events, and the usage's 8
//! completion tokens as the output; the metrics reconcile the two (2 tokens an event).

use super::*;
use servebench_result::metrics::{derive, itl_gaps};

const MS: u64 = 1_000_000;

/// The transcript's events, one a millisecond from a request sent at 0.
fn replay() -> RequestRecord {
    let path = format!(
        "{}/../engines/src/vllm/transcripts/0.26.0/chat-stream.http",
        env!("CARGO_MANIFEST_DIR")
    );
    let http = std::fs::read_to_string(&path).expect(&path);
    let (_, body) = http.split_once("\r\n\r\n").expect("headers, then the body");
    let mut rec = RequestRecord {
        send_ns: Some(0),
        ..RequestRecord::default()
    };
    let mut c = StreamConsumer::new();
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
fn vllm_0_26_0s_chat_stream_counts_the_usage_tokens_and_text_chunks() {
    let rec = replay();
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(rec.finish_reason.as_deref(), Some("length"));
    // Events: the chunks with text (2nd, 4th, 6th and 8th event), not the role chunk and
    // not the empty-text tokens between them.
    let at: Vec<u64> = rec.events.iter().map(|e| e.t_ns / MS).collect();
    assert_eq!(at, [2, 4, 6, 8]);
    let m = derive(&rec);
    assert_eq!(m.n_out, Some(8));
    assert!(m.reconciled, "8 tokens over 4 events");
    assert_eq!(m.ttft_ms, Some(2.0));
    // TPOT from usage: (8 - 2) ms over 7 gaps between 8 tokens.
    assert_eq!(m.tpot_ms, Some(6.0 / 7.0));
    // Each ITL sample spans two tokens (a text chunk and the empty one before it): its gap
    // per token is the chunk spacing.
    let gaps: Vec<(f64, f64)> = itl_gaps(&rec, &m).collect();
    assert_eq!(gaps, [(2.0, 1.0); 3]);
}
