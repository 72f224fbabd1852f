//! vLLM 0.26.0's real streams (crates/engines/src/vllm/transcripts/0.26.0/, recorded on an
//! H100) through the stream reader, read by vLLM's facts, and the metrics.
//!
//! Between its text chunks the chat stream sends `"delta": {"content": ""}`: each is a token
//! whose text decodes to nothing (`chat-stream-logprobs.http` shows it as `<unk>`, with a
//! logprob). 0.26.0 sends a chunk for every engine output, empty text included, the finish
//! reason on the last one (entrypoints/openai/chat_completion/serving.py:594-619, 694-722),
//! so the profile's `token_chunks` counts every chunk with a choice but the role opener as a
//! token event; usage gives N_out.

use super::*;
use servebench_engines::{Engine, profile};
use servebench_result::metrics::{derive, itl_gaps};

const MS: u64 = 1_000_000;

/// The transcript's events, one a millisecond from a request sent at 0, read by vLLM's
/// facts for the chat API.
fn replay(file: &str) -> RequestRecord {
    let path = format!(
        "{}/../engines/src/vllm/transcripts/0.26.0/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let http = std::fs::read_to_string(&path).expect(&path);
    let (_, body) = http.split_once("\r\n\r\n").expect("headers, then the body");
    let vllm = profile(Engine::Vllm).expect("vllm");
    let chat = file.starts_with("chat");
    replay_body(
        body,
        StreamConsumer::reading(vllm.stream.token_chunks.api(chat)),
    )
}

/// `body`'s events through `c`, one a millisecond.
pub(super) fn replay_body(body: &str, mut c: StreamConsumer) -> RequestRecord {
    let mut rec = RequestRecord {
        send_ns: Some(0),
        ..RequestRecord::default()
    };
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

fn at_ms(rec: &RequestRecord) -> Vec<u64> {
    rec.events.iter().map(|e| e.t_ns / MS).collect()
}

#[test]
fn vllm_0_26_0s_empty_text_chunks_are_token_events() {
    let rec = replay("chat-stream.http");
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(rec.finish_reason.as_deref(), Some("length"));
    // Events: every chunk after the role opener (1st event) up to the finish (8th), the
    // empty-text ones (3rd, 5th, 7th) included; not the usage chunk (9th). Before, only the
    // four with text: [2, 4, 6, 8].
    assert_eq!(at_ms(&rec), [2, 3, 4, 5, 6, 7, 8]);
    let m = derive(&rec);
    // Usage counts 8 tokens for 7 chunks: one engine output carried two (outputs merge when
    // the server falls behind, v1/engine/output_processor.py:62-72).
    assert_eq!(m.n_out, Some(8));
    assert!(m.reconciled, "8 tokens over 7 events");
    assert_eq!(m.ttft_ms, Some(2.0));
    // TPOT from usage: (8 - 2) ms over 7 gaps between 8 tokens.
    assert_eq!(m.tpot_ms, Some(6.0 / 7.0));
    // ITL: one sample per chunk gap, each of the 1 ms spacing (8/7 tokens an event).
    let gaps: Vec<(f64, f64)> = itl_gaps(&rec, &m).collect();
    assert_eq!(gaps.len(), 6);
    assert!(gaps.iter().all(|&(g, _)| g == 1.0), "{gaps:?}");
}

#[test]
fn vllm_0_26_0s_finish_chunk_carries_the_last_token_without_text() {
    // The logprobs stream shows each chunk's token: the last, `<unk>`, comes with the finish
    // reason and `"content": ""`.
    let rec = replay("chat-stream-logprobs.http");
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(at_ms(&rec), [2, 3, 4, 5, 6, 7, 8, 9]);
    let m = derive(&rec);
    assert_eq!(m.n_out, Some(8));
    assert!(!m.reconciled, "one event a token, as usage counts");
    assert_eq!(m.ttft_ms, Some(2.0));
}

#[test]
fn vllm_0_26_0s_completions_stream_has_one_event_a_chunk() {
    // Every chunk has text; the finish reason rides on the 8th; usage comes apart.
    for file in [
        "completions-stream.http",
        "completions-stream-no-usage.http",
    ] {
        let rec = replay(file);
        assert_eq!(rec.error, None, "{file}: {:?}", rec.error_detail);
        assert_eq!(at_ms(&rec), [1, 2, 3, 4, 5, 6, 7, 8], "{file}");
    }
}

#[test]
fn a_first_token_that_decodes_to_nothing_starts_ttft() {
    // chat-stream.http with its first text chunk taken out: the reply then starts with a
    // token whose text is empty, as 0.26.0 sends one (serving.py:594-619). TTFT is that
    // chunk's arrival, not the next chunk with text.
    let path = format!(
        "{}/../engines/src/vllm/transcripts/0.26.0/chat-stream.http",
        env!("CARGO_MANIFEST_DIR")
    );
    let http = std::fs::read_to_string(&path).expect(&path);
    let (_, body) = http.split_once("\r\n\r\n").expect("body");
    let mut events: Vec<&str> = body.split_inclusive("\n\n").collect();
    assert!(
        events[1].contains("\"content\":\" miwhoban\""),
        "{}",
        events[1]
    );
    events.remove(1);
    let vllm = profile(Engine::Vllm).expect("vllm");
    let rec = replay_body(
        &events.concat(),
        StreamConsumer::reading(vllm.stream.token_chunks.chat),
    );
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert!(events[1].contains("\"content\":\"\""), "{}", events[1]);
    assert_eq!(
        derive(&rec).ttft_ms,
        Some(2.0),
        "the empty-text chunk at 2 ms"
    );
    // Read as the OpenAI API's stream (only chunks with text), TTFT would be 3 ms.
    let openai = replay_body(&events.concat(), StreamConsumer::new());
    assert_eq!(derive(&openai).ttft_ms, Some(3.0));
}
