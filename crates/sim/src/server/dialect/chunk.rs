//! The streamed chunks and whole bodies of a generation response, in one engine's shape.
//!
//! The stream (`server::stream`) decides when something is sent (a token, the end, a held
//! back text); a [`ChunkShape`] decides what the bytes look like for its engine.

use std::fmt::Debug;

use bytes::Bytes;

use crate::engine::{Finish, FinishReason};
use crate::server::wire::Api;

/// What every chunk of one response shares.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    /// Completions or chat.
    pub(crate) api: Api,
    /// The response id (engines that send one).
    pub(crate) id: String,
    /// Unix seconds.
    pub(crate) created: u64,
    /// The model name the engine puts in its chunks (some echo the request's).
    pub(crate) model: String,
    /// `stream_options.include_usage` as the engine reads it.
    pub(crate) include_usage: bool,
}

/// One generated token.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tok<'a> {
    /// Its text, a leading space and a vocabulary word.
    pub(crate) text: &'a str,
}

/// One engine's streamed chunks and whole bodies.
pub(crate) trait ChunkShape: Send + Debug {
    /// Events sent as soon as the response starts, before any token.
    fn opening(&mut self, _out: &mut Vec<Bytes>) {}

    /// The events of a token that is not the last.
    fn token(&mut self, t: &Tok<'_>, out: &mut Vec<Bytes>);

    /// The events of the last token (`None` when its text was held back) and of the end of
    /// the stream: finish, usage, the end marker.
    fn last(&mut self, t: Option<&Tok<'_>>, f: &Finish, out: &mut Vec<Bytes>);

    /// The non-streamed body.
    fn whole(&self, text: &str, f: &Finish) -> String;

    /// An event whose JSON is cut short (the `--malformed-rate` fault): the first half of a
    /// token event, and a blank line.
    fn malformed(&mut self, t: &Tok<'_>) -> Bytes {
        let mut events = Vec::new();
        self.token(t, &mut events);
        let first = events.into_iter().next().unwrap_or_default();
        let mut cut = first[..first.len() / 2].to_vec();
        cut.extend_from_slice(b"\n\n");
        Bytes::from(cut)
    }
}

/// `data: {json}\n\n`.
pub(crate) fn sse(json: &str) -> Bytes {
    let mut b = Vec::with_capacity(json.len() + 8);
    b.extend_from_slice(b"data: ");
    b.extend_from_slice(json.as_bytes());
    b.extend_from_slice(b"\n\n");
    Bytes::from(b)
}

/// `data: [DONE]\n\n`.
pub(crate) fn done() -> Bytes {
    Bytes::from_static(super::super::encode::DONE_EVENT)
}

/// The OpenAI finish reason.
pub(crate) fn reason(f: &Finish) -> &'static str {
    f.reason.as_str()
}

/// Prompt, completion and total tokens of a finished request.
pub(crate) fn counts(f: &Finish) -> (u32, u32, u64) {
    let p = f.timings.prompt_n;
    let c = f.timings.predicted_n;
    (p, c, u64::from(p) + u64::from(c))
}

/// True when the request stopped at its `max_tokens`.
pub(crate) fn hit_length(f: &Finish) -> bool {
    f.reason == FinishReason::Length
}
