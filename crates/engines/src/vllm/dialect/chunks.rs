//! The streamed chunks and whole bodies of a vLLM response (sources: the parent module).

use bytes::Bytes;

use super::*;
use crate::dialect::chunk::{
    Answer, ChunkShape, CountOrder, Ctx, Tok, cached_details, done, reason, sse, usage_counts,
};
use crate::dialect::json::{Obj, arr};
use crate::dialect::logprobs::{self, ChatStyle};
use crate::dialect::rng::{mix3, unit};

/// The chunks of one vLLM response.
#[derive(Debug)]
pub(crate) struct Shape {
    ctx: Ctx,
    fingerprint: String,
    cache_report: bool,
    role_sent: bool,
    /// Characters of text sent so far (the completions `text_offset`).
    offset: i64,
    /// `--empty-text-rate`, and the seed its draw is made from.
    empty_text: (f64, u64),
}

/// Salt of the `--empty-text-rate` draw.
const EMPTY_TEXT: u64 = 0x454d_5054;

impl Shape {
    pub(crate) fn new(ctx: Ctx, config: &Served) -> Self {
        Shape {
            ctx,
            fingerprint: fingerprint(config),
            cache_report: config.wire.cache_report,
            role_sent: false,
            offset: 0,
            empty_text: (config.wire.empty_text_rate, config.seed),
        }
    }

    /// `t` as sent: with empty text where `--empty-text-rate` draws it a token that decodes
    /// to nothing. 0.26.0 still sends its chunk (chat_completion/serving.py:594-619,
    /// completion/serving.py:374-420), as `chat-stream.http` shows.
    fn shown<'a>(&self, t: &Tok<'a>) -> Tok<'a> {
        let (rate, seed) = self.empty_text;
        let draw = mix3(seed, u64::from(t.id), u64::from(t.index) ^ EMPTY_TEXT);
        if rate > 0.0 && unit(draw) < rate {
            Tok { text: "", ..*t }
        } else {
            *t
        }
    }

    /// `logprobs` of a token: the legacy object for completions (offsets advance by the
    /// tokens reported), OpenAI's for chat; `null` when not asked for.
    fn logprobs(&mut self, t: Option<&Tok<'_>>) -> String {
        let scored = t.map(Tok::scored).unwrap_or_default();
        if !self.ctx.logprobs || scored.is_empty() {
            return "null".into();
        }
        match self.ctx.api {
            Api::Completions => {
                let lp = logprobs::completion(&scored, Some(self.offset), self.ctx.tokens_as_ids);
                self.offset += scored
                    .iter()
                    .map(|s| s.text.chars().count() as i64)
                    .sum::<i64>();
                lp
            }
            Api::Chat => logprobs::chat(ChatStyle::OpenAi, &scored, self.ctx.tokens_as_ids),
        }
    }

    /// `token_ids` with `return_token_ids`, else `null`.
    fn token_ids(&self, t: Option<&Tok<'_>>) -> String {
        match (self.ctx.token_ids, t) {
            (true, Some(t)) => format!("[{}]", t.id),
            (true, None) => "[]".into(),
            (false, _) => "null".into(),
        }
    }

    fn completion_choice(&mut self, t: Option<&Tok<'_>>, finish: Option<&Finish>) -> String {
        let lp = self.logprobs(t);
        Obj::new()
            .f("index", &0)
            .f("text", t.map_or("", |t| t.text))
            .r("logprobs", lp)
            .f("finish_reason", &finish.map(reason))
            .null("stop_reason")
            .null("prompt_token_ids")
            .r("token_ids", self.token_ids(t))
            // 0.33.0 only (completion/protocol.py:743); 0.26.0 has no such field.
            .null("weight_versions")
            .done()
    }

    /// `UsageInfo`: the usage chunk's with `exclude_none` (no unset details), a whole
    /// body's with `prompt_tokens_details: null` (seen in transcripts/0.26.0/completions.http).
    fn usage(&self, f: &Finish, exclude_none: bool) -> String {
        let details = self.cache_report.then(|| cached_details(f));
        // With a reasoning parser, `completion_tokens_details.reasoning_tokens` is always
        // reported (openai/chat_completion/serving.py:165,862-876).
        let reasoning = (self.ctx.api == Api::Chat && self.ctx.reasoning_tokens > 0).then(|| {
            Obj::new()
                .f("reasoning_tokens", &self.ctx.reasoning_count(f))
                .done()
        });
        usage_counts(f, CountOrder::PromptTotalCompletion)
            .opt_r(
                "prompt_tokens_details",
                details.or((!exclude_none).then(|| "null".into())),
            )
            .opt_r("completion_tokens_details", reasoning)
            .done()
    }

    fn usage_chunk(&self, f: &Finish) -> Bytes {
        let object = match self.ctx.api {
            Api::Completions => "text_completion",
            Api::Chat => "chat.completion.chunk",
        };
        sse(&self
            .ctx
            .head(object)
            .r("choices", "[]")
            .r("usage", self.usage(f, true))
            .f("system_fingerprint", &self.fingerprint)
            .done())
    }

    /// `{"content"}`, or `{"reasoning"}` for a reasoning token (vLLM's delta field,
    /// generate/base/protocol.py:356-367).
    fn chat_delta(&self, t: &Tok<'_>) -> String {
        let field = if self.ctx.reasoning(t.index) {
            "reasoning"
        } else {
            "content"
        };
        Obj::new().f(field, t.text).done()
    }

    /// The first chat chunk, `{"role":"assistant","content":""}`, once.
    fn role_chunk(&mut self, out: &mut Vec<Bytes>) {
        if self.role_sent {
            return;
        }
        self.role_sent = true;
        let choice = Obj::new()
            .f("index", &0)
            .r("delta", r#"{"role":"assistant","content":""}"#)
            .null("logprobs")
            .null("finish_reason")
            .done();
        out.push(sse(&self
            .ctx
            .head("chat.completion.chunk")
            .r("choices", arr([choice]))
            .null("prompt_token_ids")
            .null("prompt_text")
            .done()));
    }
}

impl ChunkShape for Shape {
    fn token(&mut self, t: &Tok<'_>, out: &mut Vec<Bytes>) {
        let t = &self.shown(t);
        match self.ctx.api {
            Api::Completions => {
                let choice = self.completion_choice(Some(t), None);
                out.push(sse(&self
                    .ctx
                    .head("text_completion")
                    .r("choices", arr([choice]))
                    // 0.33.0 only (completion/serving.py:463); not in 0.26.0's chunks.
                    .null("kv_transfer_params")
                    .done()));
            }
            Api::Chat => {
                self.role_chunk(out);
                let lp = self.logprobs(Some(t));
                let choice = Obj::new()
                    .f("index", &0)
                    .r("delta", self.chat_delta(t))
                    .r("logprobs", lp)
                    .null("finish_reason")
                    .r("token_ids", self.token_ids(Some(t)))
                    .done();
                out.push(sse(&self
                    .ctx
                    .head("chat.completion.chunk")
                    .r("choices", arr([choice]))
                    // 0.33.0 only (chat_completion/serving.py:821); not in 0.26.0's chunks.
                    .null("kv_transfer_params")
                    .done()));
            }
        }
    }

    fn last(&mut self, t: Option<&Tok<'_>>, f: &Finish, out: &mut Vec<Bytes>) {
        let shown = t.map(|t| self.shown(t));
        let t = shown.as_ref();
        let fp = (!self.ctx.include_usage).then(|| self.fingerprint.clone());
        match self.ctx.api {
            Api::Completions => {
                let choice = self.completion_choice(t, Some(f));
                out.push(sse(&self
                    .ctx
                    .head("text_completion")
                    .r("choices", arr([choice]))
                    .opt("system_fingerprint", fp)
                    .null("kv_transfer_params")
                    .done()));
            }
            Api::Chat => {
                self.role_chunk(out);
                let delta = match t {
                    Some(t) => self.chat_delta(t),
                    None => "{}".into(),
                };
                let lp = self.logprobs(t);
                let choice = Obj::new()
                    .f("index", &0)
                    .r("delta", delta)
                    .r("logprobs", lp)
                    .f("finish_reason", reason(f))
                    .null("stop_reason")
                    .r("token_ids", self.token_ids(t))
                    // 0.33.0 only (chat_completion/protocol.py:181).
                    .null("weight_versions")
                    .done();
                out.push(sse(&self
                    .ctx
                    .head("chat.completion.chunk")
                    .r("choices", arr([choice]))
                    .opt("system_fingerprint", fp)
                    .null("kv_transfer_params")
                    .done()));
            }
        }
        if self.ctx.include_usage {
            out.push(self.usage_chunk(f));
        }
        out.push(done());
    }

    fn whole(&self, answer: &Answer<'_>, f: &Finish) -> String {
        let text = answer.content;
        let reasoning = (!answer.reasoning.is_empty()).then_some(answer.reasoning);
        let scored = answer.scored();
        let as_ids = self.ctx.tokens_as_ids;
        let lp = match (self.ctx.logprobs && !scored.is_empty(), self.ctx.api) {
            (false, _) => "null".into(),
            (true, Api::Completions) => logprobs::completion(&scored, Some(0), as_ids),
            (true, Api::Chat) => logprobs::chat(ChatStyle::OpenAi, &scored, as_ids),
        };
        // Every optional field written, `null` when unset (seen in transcripts/0.26.0/
        // completions.http, chat.http; 0.33.0 completion/protocol.py:675-722, chat_completion/
        // protocol.py:76-165), and 0.33.0's own: `weight_versions`, the message's
        // `tool_calls: []` (0.26.0 writes no `tool_calls` without tools).
        let choice = match self.ctx.api {
            Api::Completions => Obj::new()
                .f("index", &0)
                .f("text", text)
                .r("logprobs", lp)
                .f("finish_reason", reason(f))
                .null("stop_reason")
                .r("token_ids", self.token_ids(None))
                .null("prompt_logprobs")
                .null("prompt_token_ids")
                .null("routed_experts")
                .null("weight_versions")
                .done(),
            Api::Chat => Obj::new()
                .f("index", &0)
                .r(
                    "message",
                    Obj::new()
                        .f("role", "assistant")
                        .f("content", text)
                        .null("refusal")
                        .null("annotations")
                        .null("audio")
                        .null("function_call")
                        .r("tool_calls", "[]")
                        .f("reasoning", &reasoning)
                        .done(),
                )
                .r("logprobs", lp)
                .f("finish_reason", reason(f))
                .null("stop_reason")
                .r("token_ids", self.token_ids(None))
                .null("routed_experts")
                .null("weight_versions")
                .done(),
        };
        let body = self
            .ctx
            .head(match self.ctx.api {
                Api::Completions => "text_completion",
                Api::Chat => "chat.completion",
            })
            .r("choices", arr([choice]))
            .null("service_tier")
            .f("system_fingerprint", &self.fingerprint)
            .r("usage", self.usage(f, false));
        let body = match self.ctx.api {
            Api::Completions => body,
            Api::Chat => body
                .null("prompt_logprobs")
                .null("prompt_token_ids")
                .null("prompt_text"),
        };
        body.null("kv_transfer_params")
            .null("ec_transfer_params")
            .null("metrics")
            .done()
    }
}
