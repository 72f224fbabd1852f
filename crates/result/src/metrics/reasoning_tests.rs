//! The reasoning metrics of hand-built records (`metrics::reasoning`).

use super::derive::derive;
use crate::record::{
    CompletionTokensDetails, ReasoningRecord, RequestFlag, RequestRecord, TokenEvent, Usage,
};

/// Sent at 0; `n` events 1 ms apart from 10 ms; the first `think` carry reasoning.
fn rec(n: u64, think: u32, usage_out: u32, usage_reasoning: Option<u32>) -> RequestRecord {
    RequestRecord {
        send_ns: Some(0),
        events: (0..n)
            .map(|i| TokenEvent {
                t_ns: (10 + i) * 1_000_000,
                tokens: 1,
            })
            .collect(),
        end_ns: Some((11 + n) * 1_000_000),
        usage: Some(Usage {
            prompt_tokens: 4,
            completion_tokens: usage_out,
            completion_tokens_details: usage_reasoning.map(|r| CompletionTokensDetails {
                reasoning_tokens: Some(r),
            }),
            ..Default::default()
        }),
        reasoning: (think > 0).then(|| ReasoningRecord {
            first_ns: 10_000_000,
            tokens: think,
            answer_ns: (u64::from(think) < n).then(|| (10 + u64::from(think)) * 1_000_000),
        }),
        ..Default::default()
    }
}

#[test]
fn times_and_counts_of_a_reasoning_request() {
    let m = derive(&rec(10, 6, 10, Some(6)));
    assert_eq!(m.ttft_ms, Some(10.0));
    assert_eq!(m.ttfr_ms, Some(10.0));
    assert_eq!(m.ttfa_ms, Some(16.0));
    assert_eq!((m.reasoning_tokens, m.answer_tokens), (Some(6), Some(4)));
    assert!(m.flags.is_empty(), "{:?}", m.flags);
}

#[test]
fn without_reasoning_ttfa_is_ttft_and_ttfr_is_absent() {
    let m = derive(&rec(5, 0, 5, None));
    assert_eq!(m.ttfr_ms, None);
    assert_eq!(m.ttfa_ms, m.ttft_ms);
    assert_eq!((m.reasoning_tokens, m.answer_tokens), (Some(0), Some(5)));
    assert!(m.flags.is_empty());
}

#[test]
fn usage_wins_within_tolerance_and_disagreements_are_flagged() {
    // SGLang counts the think-end token (0.5.23, srt/managers/schedule_batch.py:2254,
    // `update_reasoning_tokens`, `position + 1`), which the stream does not show: 1 more
    // than the stream, no flag.
    let m = derive(&rec(10, 6, 10, Some(7)));
    assert_eq!(m.reasoning_tokens, Some(7));
    assert_eq!(m.answer_tokens, Some(3));
    assert!(m.flags.is_empty());
    // Far apart: usage still wins, flagged.
    let m = derive(&rec(40, 20, 40, Some(30)));
    assert_eq!(m.reasoning_tokens, Some(30));
    assert_eq!(m.flags, [RequestFlag::ReasoningCountMismatch]);
    // The server says 0 of a stream that reasoned (a vLLM parser without a count):
    // the stream wins, flagged.
    let m = derive(&rec(10, 6, 10, Some(0)));
    assert_eq!(m.reasoning_tokens, Some(6));
    assert_eq!(m.flags, [RequestFlag::ReasoningCountMismatch]);
    // The server counts reasoning the stream never showed apart (no reasoning parser
    // on the answer's side): the server's count, flagged, TTFA is TTFT.
    let m = derive(&rec(10, 0, 10, Some(6)));
    assert_eq!((m.reasoning_tokens, m.answer_tokens), (Some(6), Some(4)));
    assert_eq!(m.ttfa_ms, m.ttft_ms);
    assert_eq!(m.flags, [RequestFlag::ReasoningCountMismatch]);
}

#[test]
fn packed_events_scale_the_stream_count_and_reasoning_only_has_no_ttfa() {
    // 10 events, usage 20 tokens: each event carried 2 on average.
    let m = derive(&rec(10, 4, 20, None));
    assert!(m.reconciled);
    assert_eq!((m.reasoning_tokens, m.answer_tokens), (Some(8), Some(12)));
    let m = derive(&rec(5, 5, 5, None));
    assert_eq!(m.ttfa_ms, None, "ended still reasoning");
    assert_eq!((m.reasoning_tokens, m.answer_tokens), (Some(5), Some(0)));
}
