//! Turns the bytes of one streamed response into a [`RequestRecord`]: pure, no I/O, fed
//! network chunks with the instant each was read.
//!
//! Token events: a chunk with text, and a chunk without text where the engine's facts say it
//! still carries a token (`servebench_engines::TokenChunks`: vLLM sends one per engine
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
use servebench_engines::TokenChunks;
use servebench_result::record::{
    ErrorKind, ReasoningRecord, RequestRecord, TokenEvent, truncate_utf8,
};

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
mod sglang_tests;

#[cfg(test)]
mod vllm_tests;

#[cfg(test)]
mod engines_tests;

#[cfg(test)]
mod tests;
