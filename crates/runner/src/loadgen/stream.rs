//! Turns the bytes of one streamed response into a [`RequestRecord`]: pure, no I/O, fed
//! network chunks with the instant each was read.
//!
//! Token events: a chunk with text, and a chunk without text where the engine's facts say it
//! still carries a token (`servebench_spec::engine::TokenChunks`: vLLM sends one per engine
//! output, `"content": ""` for a token that decodes to nothing); never the usage chunk
//! (`choices: []`), nor a role opener or a finish chunk the engine sends apart.
//!
//! Tokens per event: when the server streams `usage` with every chunk (vLLM's
//! `continuous_usage_stats`), an event's token count is the increase of
//! `usage.completion_tokens`; otherwise each token-bearing event counts 1. The final
//! `usage` is kept as sent; when it disagrees with the per-event sum, the events are left as
//! observed and the metrics layer reconciles (see `servebench_result::metrics::derive`).

use super::chunk::parse_chunk;
use super::sse::{EventType, SseParser};
use servebench_result::record::{
    ErrorKind, ReasoningRecord, RequestRecord, TokenEvent, truncate_utf8,
};
use servebench_spec::engine::TokenChunks;

/// Whether to keep reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading.
    Continue,
    /// A fatal error was recorded: stop reading and drop the connection.
    Stop,
}

/// State of one response stream.
#[derive(Debug)]
pub struct StreamConsumer {
    sse: SseParser,
    st: EventState,
    /// The first bytes of the body, kept until an event is seen, to explain a non-SSE body.
    head: Vec<u8>,
}

#[derive(Debug)]
struct EventState {
    /// Which chunks without text carry a token (the engine's facts for this API).
    chunks: TokenChunks,
    /// A chunk with a choice was seen (the next one is not the opener).
    choice_seen: bool,
    done: bool,
    finish_seen: bool,
    events_seen: u64,
    last_usage_out: Option<u32>,
    /// When the last event carrying `usage` arrived.
    last_usage_ns: Option<u64>,
    /// When the first event carrying answer text arrived.
    first_answer_ns: Option<u64>,
}

const HEAD_BYTES: usize = 512;

/// Largest SSE event (its data and unterminated line) held while it is assembled. A token
/// event is a few hundred bytes; a server that sends more than this without ending the event
/// is broken, and the request fails as `malformed_event` instead of growing without bound.
pub const MAX_EVENT_BYTES: usize = 4 << 20;

impl Default for StreamConsumer {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamConsumer {
    /// A consumer that has seen nothing yet, reading the OpenAI API's stream: only chunks
    /// with text are token events.
    pub fn new() -> Self {
        Self::reading(TokenChunks::OPENAI.chat)
    }

    /// A consumer whose token events are those `chunks` says (the engine's facts for the
    /// API driven).
    pub fn reading(chunks: TokenChunks) -> Self {
        StreamConsumer {
            sse: SseParser::default(),
            st: EventState {
                chunks,
                choice_seen: false,
                done: false,
                finish_seen: false,
                events_seen: 0,
                last_usage_out: None,
                last_usage_ns: None,
                first_answer_ns: None,
            },
            head: Vec::new(),
        }
    }

    /// Feeds one network chunk read at `t_ns`.
    pub fn on_chunk(&mut self, t_ns: u64, chunk: &[u8], rec: &mut RequestRecord) -> Flow {
        if self.st.events_seen == 0 && self.head.len() < HEAD_BYTES {
            let take = (HEAD_BYTES - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
        }
        let st = &mut self.st;
        let before = rec.events.len();
        self.sse
            .feed(chunk, |ev| st.on_event(t_ns, ev.kind, ev.data, rec));
        super::progress::add_tokens(&rec.events[before..]);
        if rec.error.is_none() && self.sse.pending_bytes() > MAX_EVENT_BYTES {
            rec.fail(
                ErrorKind::MalformedEvent,
                format!(
                    "an SSE event exceeded {MAX_EVENT_BYTES} bytes without ending ({} bytes held)",
                    self.sse.pending_bytes()
                ),
            );
        }
        if rec.error.is_some() {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    /// The body ended cleanly at `t_ns`: decides success or the failure kind.
    pub fn on_eof(&mut self, t_ns: u64, rec: &mut RequestRecord) {
        let st = &mut self.st;
        self.sse
            .finish(|ev| st.on_event(t_ns, ev.kind, ev.data, rec));
        rec.end_ns = Some(t_ns);
        if rec.error.is_some() {
            return;
        }
        if self.st.events_seen == 0 {
            let mut head = String::from_utf8_lossy(&self.head).into_owned();
            truncate_utf8(&mut head, HEAD_BYTES);
            let (kind, detail) = if head.contains("\"error\"") {
                (
                    ErrorKind::ServerErrorEvent,
                    "response body is not an event stream",
                )
            } else if head.trim().is_empty() {
                (ErrorKind::NoContent, "response body is not an event stream")
            } else if is_sse_framing(&head) {
                (
                    ErrorKind::NoContent,
                    "the event stream ended without an event carrying data (only comments, \
                     keep-alives or events of a type servebench does not read, such as \
                     `event: ping`)",
                )
            } else {
                (
                    ErrorKind::MalformedEvent,
                    "response body is not an event stream",
                )
            };
            rec.fail(kind, format!("{detail}: {head}"));
        } else if !self.st.done && !self.st.finish_seen {
            rec.fail(
                ErrorKind::StreamDisconnected,
                "stream ended before [DONE] or finish_reason",
            );
        } else if rec.events.is_empty() {
            match (rec.usage, self.st.last_usage_ns) {
                // No content chunk, but usage counts tokens generated (transformers serve's
                // streaming detokenizer can hold back incomplete bytes to the end): counted,
                // its tokens arriving with the final chunk, and flagged.
                (Some(u), Some(t)) if u.completion_tokens > 0 => {
                    rec.events.push(TokenEvent {
                        t_ns: t,
                        tokens: u.completion_tokens,
                    });
                    rec.content_held_back = true;
                }
                _ => rec.fail(ErrorKind::NoContent, "stream finished without any token"),
            }
        }
    }
}

/// Whether every line of `head` but a cut last one is an SSE field or comment (`event:`,
/// `data:`, `id:`, `retry:`, `:`): an event stream, though one with no event to read.
fn is_sse_framing(head: &str) -> bool {
    let mut lines: Vec<&str> = head.lines().collect();
    if !head.ends_with('\n') && lines.len() > 1 {
        lines.pop();
    }
    lines.iter().all(|l| {
        let l = l.trim_end_matches('\r');
        l.is_empty()
            || l.starts_with(':')
            || ["event", "data", "id", "retry"].iter().any(|f| {
                l.strip_prefix(f)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
            })
    })
}

impl EventState {
    /// Whether a chunk with a choice carries a token: one with text always; one without, as
    /// the engine's facts say (not the role opener; the finish chunk where it carries the
    /// last token; any other where the engine sends a chunk per token whatever its text).
    fn carries_token(&mut self, chunk: &super::chunk::ChunkInfo<'_>) -> bool {
        if !chunk.choice {
            return false;
        }
        let first = !std::mem::replace(&mut self.choice_seen, true);
        if chunk.content() {
            true
        } else if first && self.chunks.opener {
            false
        } else if chunk.finish_reason.is_some() {
            self.chunks.finish
        } else {
            self.chunks.textless
        }
    }

    /// Keeps where reasoning and the answer began, and the reasoning's tokens: an event
    /// carrying reasoning only counts as reasoning; one carrying both is where the answer
    /// begins (docs/metrics.md, "Reasoning and answer").
    fn on_reasoning(
        &mut self,
        t_ns: u64,
        reasoning: bool,
        answer: bool,
        tokens: u32,
        rec: &mut RequestRecord,
    ) {
        if answer && self.first_answer_ns.is_none() {
            self.first_answer_ns = Some(t_ns);
        }
        if reasoning && rec.reasoning.is_none() {
            rec.reasoning = Some(ReasoningRecord {
                first_ns: t_ns,
                ..Default::default()
            });
        }
        if let Some(r) = rec.reasoning.as_mut() {
            if reasoning && !answer {
                r.tokens = r.tokens.saturating_add(tokens);
            }
            r.answer_ns = self.first_answer_ns;
        }
    }

    fn on_event(&mut self, t_ns: u64, kind: EventType, data: &[u8], rec: &mut RequestRecord) {
        self.events_seen += 1;
        if rec.error.is_some() {
            return;
        }
        match kind {
            EventType::Message => {}
            EventType::Error => {
                rec.fail(ErrorKind::ServerErrorEvent, String::from_utf8_lossy(data));
                return;
            }
            EventType::Other => return,
        }
        if data.trim_ascii() == b"[DONE]" {
            self.done = true;
            return;
        }
        let chunk = match parse_chunk(data) {
            Ok(c) => c,
            Err(e) => {
                let mut d = format!("{e}: ");
                d.push_str(&String::from_utf8_lossy(data));
                rec.fail(ErrorKind::MalformedEvent, d);
                return;
            }
        };
        if chunk.content()
            && let Some(answer) = rec.answer.as_mut()
        {
            super::chunk::append_text(data, answer);
        }
        if let Some(err) = chunk.error {
            rec.fail(ErrorKind::ServerErrorEvent, error_message(&err));
            return;
        }
        if chunk.error_object {
            rec.fail(ErrorKind::ServerErrorEvent, String::from_utf8_lossy(data));
            return;
        }
        if self.carries_token(&chunk) {
            let tokens = match chunk.usage {
                Some(u) => {
                    rec.chunk_tokens_from_usage = true;
                    let prev = self.last_usage_out.unwrap_or(0);
                    u.completion_tokens.saturating_sub(prev).max(1)
                }
                None => 1,
            };
            rec.events.push(TokenEvent { t_ns, tokens });
            self.on_reasoning(t_ns, chunk.reasoning, chunk.answer, tokens, rec);
        }
        if let Some(u) = chunk.usage {
            self.last_usage_out = Some(u.completion_tokens);
            self.last_usage_ns = Some(t_ns);
            rec.usage = Some(u);
        }
        if let Some(fr) = chunk.finish_reason {
            self.finish_seen = true;
            if rec.finish_reason.as_deref() != Some(&*fr) {
                rec.finish_reason = Some(fr.into_owned());
            }
        }
        if chunk.timings.is_some() {
            rec.server_timings = chunk.timings;
        }
    }
}

/// The words of a streamed `error` member: its `message` (`{"error": {"message": …}}`, TGI's
/// and vLLM's shape) or the string itself (`{"error": "…"}`), else the JSON as sent.
fn error_message(err: &serde_json::Value) -> String {
    match err {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(o) => match o.get("message").and_then(|m| m.as_str()) {
            Some(m) => m.to_owned(),
            None => err.to_string(),
        },
        _ => err.to_string(),
    }
}

#[cfg(test)]
mod reasoning_tests;

#[cfg(test)]
mod vllm_tests;

#[cfg(test)]
mod engines_tests;

#[cfg(test)]
mod tests {
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
}
