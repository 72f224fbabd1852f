//! The streamed chunks and whole bodies of a generation response, in one engine's shape.
//!
//! The stream (`server::stream`) decides when something is sent (a token, the end, a held
//! back text); a [`ChunkShape`] decides what the bytes look like for its engine.

use std::fmt::Debug;

use bytes::Bytes;

use super::logprobs::Scored;
use crate::dialect::finish::{Finish, FinishReason};
use crate::dialect::json::Obj;
use crate::dialect::request::Api;
use crate::dialect::text::TokenLogprobs;

/// What every chunk of one response shares.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// Completions or chat.
    pub api: Api,
    /// The response id (engines that send one).
    pub id: String,
    /// Unix seconds.
    pub created: u64,
    /// The model name the engine puts in its chunks (some echo the request's).
    pub model: String,
    /// `stream_options.include_usage` as the engine reads it.
    pub include_usage: bool,
    /// The first this-many tokens of a chat answer are reasoning (`--reasoning-tokens`).
    pub reasoning_tokens: u32,
    /// Log-probabilities were asked for (and the engine answers them).
    pub logprobs: bool,
    /// Log-probabilities name tokens `token_id:N` (vLLM).
    pub tokens_as_ids: bool,
    /// Chunks carry their token ids (vLLM, SGLang `return_token_ids`).
    pub token_ids: bool,
}

impl Ctx {
    /// A response's first fields, `id`, `object`, `created`, `model`, as the pydantic
    /// response types of vLLM, SGLang and TensorRT-LLM write them; the rest follow.
    pub fn head(&self, object: &str) -> Obj {
        Obj::new()
            .f("id", &self.id)
            .f("object", object)
            .f("created", &self.created)
            .f("model", &self.model)
    }

    /// True when token `index` belongs to the reasoning of a chat answer.
    pub fn reasoning(&self, index: u32) -> bool {
        self.api == Api::Chat && index < self.reasoning_tokens
    }

    /// Reasoning tokens among the `f.timings.predicted_n` generated.
    pub fn reasoning_count(&self, f: &Finish) -> u32 {
        match self.api {
            Api::Chat => self.reasoning_tokens.min(f.timings.predicted_n),
            Api::Completions => 0,
        }
    }
}

/// The text of a whole (non-streamed) answer.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    /// The reasoning (chat with `--reasoning-tokens`; empty otherwise).
    pub reasoning: &'a str,
    /// The answer.
    pub content: &'a str,
    /// Every token with its log-probabilities, when asked for.
    pub scored: &'a [Owned],
}

/// A generated token and its log-probabilities, kept for a whole answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Owned {
    /// Its token id.
    pub id: u32,
    /// Its text.
    pub text: String,
    /// Its log-probabilities and alternatives.
    pub lp: TokenLogprobs,
}

impl Owned {
    /// Borrowed, as the logprob writers take it.
    pub fn scored(&self) -> Scored<'_> {
        Scored {
            id: self.id,
            text: &self.text,
            lp: &self.lp,
        }
    }
}

impl Answer<'_> {
    /// The scored tokens (empty when log-probabilities were not asked for).
    pub fn scored(&self) -> Vec<Scored<'_>> {
        self.scored.iter().map(Owned::scored).collect()
    }
}

/// One generated token.
#[derive(Debug, Clone, Copy)]
pub struct Tok<'a> {
    /// Its position in the output, from 0.
    pub index: u32,
    /// Its id.
    pub id: u32,
    /// Its text, a leading space and a vocabulary word.
    pub text: &'a str,
    /// Its log-probabilities, when asked for.
    pub lp: Option<&'a TokenLogprobs>,
}

impl<'a> Tok<'a> {
    /// The token as a one-token list for the log-probability builders; empty without them.
    pub fn scored(&self) -> Vec<Scored<'a>> {
        self.lp
            .map(|lp| Scored {
                id: self.id,
                text: self.text,
                lp,
            })
            .into_iter()
            .collect()
    }
}

/// One engine's streamed chunks and whole bodies.
pub trait ChunkShape: Send + Debug {
    /// Events sent as soon as the response starts, before any token.
    fn opening(&mut self, _out: &mut Vec<Bytes>) {}

    /// The events of a token that is not the last.
    fn token(&mut self, t: &Tok<'_>, out: &mut Vec<Bytes>);

    /// The events of the last token (`None` when its text was held back) and of the end of
    /// the stream: finish, usage, the end marker.
    fn last(&mut self, t: Option<&Tok<'_>>, f: &Finish, out: &mut Vec<Bytes>);

    /// The non-streamed body.
    fn whole(&self, answer: &Answer<'_>, f: &Finish) -> String;

    /// The events a generation error after the stream began sends (the
    /// `--stream-error-rate` fault), the last of them ending the stream; `None` where the
    /// engine then closes the connection with nothing said (TensorRT-LLM's chat). By default
    /// the OpenAI-style `{"error": {"message", "type": "server_error"}}` and `[DONE]`.
    fn failure(&mut self, message: &str) -> Option<Vec<Bytes>> {
        Some(error_events(message))
    }

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
pub fn sse(json: &str) -> Bytes {
    let mut b = Vec::with_capacity(json.len() + 8);
    b.extend_from_slice(b"data: ");
    b.extend_from_slice(json.as_bytes());
    b.extend_from_slice(b"\n\n");
    Bytes::from(b)
}

/// `{"error": {"message": …, "type": "server_error"}}` and `[DONE]`: a generation error
/// after the stream began, as OpenAI-style servers send it.
pub fn error_events(message: &str) -> Vec<Bytes> {
    let err = crate::dialect::json::Obj::new()
        .f("message", message)
        .f("type", "server_error")
        .done();
    vec![sse(&Obj::new().r("error", err).done()), done()]
}

/// The final SSE event of an OpenAI-style stream.
pub const DONE_EVENT: &[u8] = b"data: [DONE]\n\n";

/// `data: [DONE]\n\n`.
pub fn done() -> Bytes {
    Bytes::from_static(DONE_EVENT)
}

/// The OpenAI finish reason.
pub fn reason(f: &Finish) -> &'static str {
    f.reason.as_str()
}

/// Prompt, completion and total tokens of a finished request.
pub fn counts(f: &Finish) -> (u32, u32, u64) {
    let p = f.timings.prompt_n;
    let c = f.timings.predicted_n;
    (p, c, u64::from(p) + u64::from(c))
}

/// The order an engine's usage object writes its three counts in (its usage type's fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountOrder {
    /// `prompt_tokens`, `total_tokens`, `completion_tokens`: the pydantic `UsageInfo` of vLLM,
    /// SGLang and TensorRT-LLM.
    PromptTotalCompletion,
    /// `completion_tokens`, `prompt_tokens`, `total_tokens`: openai's `CompletionUsage`
    /// (transformers serve) and llama.cpp's (server-task.cpp:365-372).
    CompletionPromptTotal,
    /// `prompt_tokens`, `completion_tokens`, `total_tokens`: TGI's `Usage`.
    PromptCompletionTotal,
}

/// A usage object of a finished request begun with its three counts in the engine's
/// `order`; the engine's further fields follow.
pub fn usage_counts(f: &Finish, order: CountOrder) -> Obj {
    let (p, c, t) = counts(f);
    let o = Obj::new();
    match order {
        CountOrder::PromptTotalCompletion => o
            .f("prompt_tokens", &p)
            .f("total_tokens", &t)
            .f("completion_tokens", &c),
        CountOrder::CompletionPromptTotal => o
            .f("completion_tokens", &c)
            .f("prompt_tokens", &p)
            .f("total_tokens", &t),
        CountOrder::PromptCompletionTotal => o
            .f("prompt_tokens", &p)
            .f("completion_tokens", &c)
            .f("total_tokens", &t),
    }
}

/// `prompt_tokens_details`: `{"cached_tokens": N}`, the prompt tokens found in the cache.
pub fn cached_details(f: &Finish) -> String {
    Obj::new()
        .f("cached_tokens", &f.timings.cached_n.unwrap_or(0))
        .done()
}

/// True when the request stopped at its `max_tokens`.
pub fn hit_length(f: &Finish) -> bool {
    f.reason == FinishReason::Length
}
