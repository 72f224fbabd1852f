//! The stream reader on hand-written chunks: events, usage, ends and failures.

use super::*;
use servebench_result::record::Usage;

fn run(chunks: &[&[u8]]) -> RequestRecord {
    let mut rec = RequestRecord::default();
    let mut c = StreamConsumer::new();
    for (i, ch) in chunks.iter().enumerate() {
        if c.on_chunk(i as u64 * 10, ch, &mut rec) == Flow::Stop {
            rec.end_ns = Some(i as u64 * 10);
            return rec;
        }
    }
    c.on_eof(chunks.len() as u64 * 10, &mut rec);
    rec
}

const ROLE: &[u8] =
    b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
const TOK: &[u8] = b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n";
const FIN: &[u8] = b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n";
const USAGE: &[u8] =
    b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n";
const DONE: &[u8] = b"data: [DONE]\n\n";

#[test]
fn a_normal_chat_stream() {
    let rec = run(&[ROLE, TOK, b": ping\n\n", TOK, FIN, USAGE, DONE]);
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    let times: Vec<u64> = rec.events.iter().map(|e| e.t_ns).collect();
    assert_eq!(times, [10, 30], "role-only chunk does not count");
    assert_eq!(
        rec.usage,
        Some(Usage {
            prompt_tokens: 3,
            completion_tokens: 2,
            ..Default::default()
        })
    );
    assert_eq!(rec.finish_reason.as_deref(), Some("length"));
    assert!(!rec.chunk_tokens_from_usage);
    assert_eq!(rec.end_ns, Some(70));
}

#[test]
fn continuous_usage_gives_tokens_per_chunk() {
    let a = b"data: {\"choices\":[{\"text\":\"ab\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n\n";
    let b = b"data: {\"choices\":[{\"text\":\"c\",\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":5}}\n\n";
    let rec = run(&[a, b, DONE]);
    assert!(rec.chunk_tokens_from_usage);
    let toks: Vec<u32> = rec.events.iter().map(|e| e.tokens).collect();
    assert_eq!(toks, [2, 3]);
    assert_eq!(rec.client_output_tokens(), 5);
}

#[test]
fn failures_are_typed() {
    let rec = run(&[TOK, b"data: {\"choices\":[{\"delta\":\n\n"]);
    assert_eq!(rec.error, Some(ErrorKind::MalformedEvent));
    let rec = run(&[TOK, b"data: {\"error\":{\"message\":\"oom\"}}\n\n"]);
    assert_eq!(rec.error, Some(ErrorKind::ServerErrorEvent));
    assert!(rec.error_detail.as_deref().unwrap_or("").contains("oom"));
    let rec = run(&[TOK, b"data: {\"object\":\"error\",\"message\":\"bad\"}\n\n"]);
    assert_eq!(rec.error, Some(ErrorKind::ServerErrorEvent));
    let rec = run(&[TOK, b"event: error\ndata: boom\n\n"]);
    assert_eq!(rec.error, Some(ErrorKind::ServerErrorEvent));
    let rec = run(&[TOK, TOK]);
    assert_eq!(rec.error, Some(ErrorKind::StreamDisconnected));
    let rec = run(&[ROLE, FIN, DONE]);
    assert_eq!(rec.error, Some(ErrorKind::NoContent));
    let rec = run(&[b"{\"error\":{\"message\":\"bad model\"}}"]);
    assert_eq!(rec.error, Some(ErrorKind::ServerErrorEvent));
    let rec = run(&[b"<html>oops</html>"]);
    assert_eq!(rec.error, Some(ErrorKind::MalformedEvent));
}

#[test]
fn a_stream_of_pings_only_is_called_an_event_stream_without_data() {
    // Before: "response body is not an event stream: event: ping", of a body that is
    // one.
    let rec = run(&[b"event: ping\n\n", b": keep-alive\n\nevent: ping\n\n"]);
    assert_eq!(rec.error, Some(ErrorKind::NoContent));
    let d = rec.error_detail.unwrap_or_default();
    assert!(
        d.starts_with("the event stream ended without an event carrying data"),
        "{d}"
    );
    assert!(d.contains("event: ping"), "{d}");
    let rec = run(&[b"<html>nope</html>"]);
    assert_eq!(rec.error, Some(ErrorKind::MalformedEvent));
    let d = rec.error_detail.unwrap_or_default();
    assert!(d.starts_with("response body is not an event stream"), "{d}");
    let rec = run(&[b"event: ping\n\n", TOK, FIN, DONE]);
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
}

#[test]
fn an_event_that_never_ends_is_cut_at_the_bound() {
    let mut rec = RequestRecord::default();
    let mut c = StreamConsumer::new();
    assert_eq!(c.on_chunk(0, TOK, &mut rec), Flow::Continue);
    let filler = vec![b'x'; 64 << 10];
    assert_eq!(
        c.on_chunk(1, b"data: {\"choices\":\"", &mut rec),
        Flow::Continue
    );
    let mut fed = 0;
    let flow = loop {
        let f = c.on_chunk(2, &filler, &mut rec);
        fed += filler.len();
        if f == Flow::Stop || fed > 2 * MAX_EVENT_BYTES {
            break f;
        }
    };
    assert_eq!(flow, Flow::Stop);
    assert!(
        fed <= MAX_EVENT_BYTES + filler.len(),
        "stopped at the bound"
    );
    assert_eq!(rec.error, Some(ErrorKind::MalformedEvent));
    assert!(
        rec.error_detail
            .as_deref()
            .unwrap_or("")
            .contains("exceeded")
    );
    // Many long data lines of one event count together.
    let mut rec = RequestRecord::default();
    let mut c = StreamConsumer::new();
    let mut line = b"data: ".to_vec();
    line.extend_from_slice(&filler);
    line.push(b'\n');
    let flow = (0..100).map(|_| c.on_chunk(0, &line, &mut rec)).last();
    assert_eq!(flow, Some(Flow::Stop));
    assert_eq!(rec.error, Some(ErrorKind::MalformedEvent));
}

#[test]
fn an_empty_finish_reason_does_not_hide_a_cut_stream() {
    // TGI db931fcf (router/src/server.rs:857-875): `"finish_reason": ""` on every
    // completions chunk but the last; a stream cut after such chunks is disconnected.
    let mid: &[u8] = b"data: {\"object\":\"text_completion\",\"id\":\"\",\"created\":1,\"model\":\"m\",\"system_fingerprint\":\"3.3.7-native\",\"choices\":[{\"index\":0,\"text\":\" a\",\"logprobs\":null,\"finish_reason\":\"\"}]}\n\n";
    let rec = run(&[mid, mid]);
    assert_eq!(rec.error, Some(ErrorKind::StreamDisconnected));
    let last: &[u8] = b"data: {\"object\":\"text_completion\",\"id\":\"\",\"created\":1,\"model\":\"m\",\"system_fingerprint\":\"3.3.7-native\",\"choices\":[{\"index\":0,\"text\":\".\",\"logprobs\":null,\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":3,\"total_tokens\":7}}\n\n";
    let rec = run(&[mid, mid, last, DONE]);
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(rec.finish_reason.as_deref(), Some("length"));
    assert_eq!(rec.events.len(), 3);
}

#[test]
fn a_stream_without_done_ends_normally_after_a_finish_reason() {
    // transformers serve 5.24.0 (cli/serving/chat_completion.py) sends no `[DONE]`; its
    // final chunk has the finish reason and usage.
    let fin_usage: &[u8] = b"data: {\"id\":\"req\",\"choices\":[{\"delta\":{},\"finish_reason\":\"length\",\"index\":0}],\"created\":1,\"model\":\"m\",\"object\":\"chat.completion.chunk\",\"usage\":{\"completion_tokens\":2,\"prompt_tokens\":5,\"total_tokens\":7}}\n\n";
    let rec = run(&[ROLE, TOK, TOK, fin_usage]);
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert_eq!(rec.events.len(), 2);
}

#[test]
fn a_stream_with_usage_but_no_content_chunk_is_counted_not_failed() {
    // Seen on an H200 with transformers serve 5.17.0 (--continuous-batching, a byte-level
    // BPE tokenizer): `{"delta":{"role":"assistant"}}`, then
    // `{"delta":{},"finish_reason":"length","usage":{…}}` with the full count.
    let role: &[u8] = b"data: {\"id\":\"r\",\"choices\":[{\"delta\":{\"role\":\"assistant\"},\"index\":0}],\"created\":1,\"model\":\"m\",\"object\":\"chat.completion.chunk\"}\n\n";
    let fin: &[u8] = b"data: {\"id\":\"r\",\"choices\":[{\"delta\":{},\"finish_reason\":\"length\",\"index\":0}],\"created\":1,\"model\":\"m\",\"object\":\"chat.completion.chunk\",\"usage\":{\"completion_tokens\":6,\"prompt_tokens\":12,\"total_tokens\":18}}\n\n";
    let rec = run(&[role, fin]);
    assert_eq!(rec.error, None, "{:?}", rec.error_detail);
    assert!(rec.content_held_back);
    assert_eq!(
        rec.events,
        [TokenEvent {
            t_ns: 10,
            tokens: 6
        }]
    );
    // Usage saying nothing was generated stays a failure.
    let fin0: &[u8] = b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"completion_tokens\":0,\"prompt_tokens\":12}}\n\n";
    let rec = run(&[role, fin0]);
    assert_eq!(rec.error, Some(ErrorKind::NoContent));
    assert!(!rec.content_held_back);
}

#[test]
fn missing_usage_is_not_an_error_here() {
    let rec = run(&[TOK, FIN, DONE]);
    assert_eq!(rec.error, None);
    assert_eq!(rec.usage, None, "never filled from the requested length");
    assert_eq!(rec.client_output_tokens(), 1);
}
