//! The streamed chunks and whole bodies of a SGLang response (sources: the parent module).

use bytes::Bytes;

use super::*;
use crate::dialect::chunk::{
    Answer, ChunkShape, CountOrder, Ctx, Tok, cached_details, done, reason, sse, usage_counts,
};
use crate::dialect::json::{Obj, arr};
use crate::dialect::logprobs::{self, ChatStyle};

/// The chunks of one SGLang response.
#[derive(Debug)]
pub(crate) struct Shape {
    ctx: Ctx,
    cache_report: bool,
    role_sent: bool,
}

impl Shape {
    pub(crate) fn new(ctx: Ctx, config: &Served) -> Self {
        Shape {
            ctx,
            cache_report: config.wire.cache_report,
            role_sent: false,
        }
    }

    /// `UsageInfo`; `exclude_none` drops the unset details (the completions usage chunk).
    fn usage(&self, f: &Finish, exclude_none: bool) -> String {
        let details = self.cache_report.then(|| cached_details(f));
        let o = usage_counts(f, CountOrder::PromptTotalCompletion);
        let o = match (details, exclude_none) {
            (Some(d), _) => o.r("prompt_tokens_details", d),
            (None, true) => o,
            (None, false) => o.null("prompt_tokens_details"),
        };
        // `reasoning_tokens` at the top, and in `completion_tokens_details` when there
        // are some (protocol.py:221-229, usage_processor.py `calculate_token_usage`).
        let r = self.ctx.reasoning_count(f);
        let o = o.f("reasoning_tokens", &r);
        match (r, exclude_none) {
            (0, true) => o.done(),
            (0, false) => o.null("completion_tokens_details").done(),
            (r, _) => o
                .r(
                    "completion_tokens_details",
                    Obj::new().f("reasoning_tokens", &r).done(),
                )
                .done(),
        }
    }

    fn chat_chunk(&self, delta: String, finish: Option<&Finish>) -> Bytes {
        self.chat_chunk_lp(delta, "null".into(), finish)
    }

    fn chat_chunk_lp(&self, delta: String, lp: String, finish: Option<&Finish>) -> Bytes {
        let choice = Obj::new()
            .f("index", &0)
            .r("delta", delta)
            .r("logprobs", lp)
            .f("finish_reason", &finish.map(reason))
            .null("matched_stop")
            .done();
        sse(&self
            .ctx
            .head("chat.completion.chunk")
            .r("choices", arr([choice]))
            .done())
    }

    fn role_chunk(&mut self, out: &mut Vec<Bytes>) {
        if !self.role_sent {
            self.role_sent = true;
            out.push(self.chat_chunk(
                r#"{"reasoning_content":null,"role":"assistant","content":""}"#.into(),
                None,
            ));
        }
    }

    /// A token's `logprobs`: the legacy object with `text_offset` -1 for completions,
    /// `ChoiceLogprobs` for chat; `null` when not asked for.
    fn logprobs(&self, t: Option<&Tok<'_>>) -> String {
        let scored = t.map(Tok::scored).unwrap_or_default();
        match (self.ctx.logprobs && !scored.is_empty(), self.ctx.api) {
            (false, _) => "null".into(),
            (true, Api::Completions) => logprobs::completion(&scored, None, false),
            (true, Api::Chat) => logprobs::chat(ChatStyle::Sglang, &scored, false),
        }
    }

    fn completion_chunk(&self, t: Option<&Tok<'_>>, finish: Option<&Finish>) -> Bytes {
        let choice = Obj::new()
            .f("index", &0)
            .f("text", t.map_or("", |t| t.text))
            .r("logprobs", self.logprobs(t))
            .f("finish_reason", &finish.map(reason))
            .null("matched_stop");
        // `token_ids` only with `return_token_ids` (protocol.py:546-566 pops it when None).
        let choice = match (self.ctx.token_ids, t) {
            (true, Some(t)) => choice.r("token_ids", format!("[{}]", t.id)),
            (true, None) => choice.r("token_ids", "[]"),
            (false, _) => choice,
        }
        .done();
        sse(&self
            .ctx
            .head("text_completion")
            .r("choices", arr([choice]))
            .null("usage")
            .done())
    }
}

impl ChunkShape for Shape {
    fn token(&mut self, t: &Tok<'_>, out: &mut Vec<Bytes>) {
        match self.ctx.api {
            Api::Completions => out.push(self.completion_chunk(Some(t), None)),
            Api::Chat => {
                self.role_chunk(out);
                // StreamDelta always writes `reasoning_content` and drops unset fields: a
                // reasoning chunk is `{"reasoning_content": …}` (serving_chat.py:973-1000).
                let delta = if self.ctx.reasoning(t.index) {
                    Obj::new().f("reasoning_content", t.text).done()
                } else {
                    Obj::new()
                        .null("reasoning_content")
                        .f("content", t.text)
                        .done()
                };
                out.push(self.chat_chunk_lp(delta, self.logprobs(Some(t)), None));
            }
        }
    }

    fn last(&mut self, t: Option<&Tok<'_>>, f: &Finish, out: &mut Vec<Bytes>) {
        match self.ctx.api {
            Api::Completions => {
                out.push(self.completion_chunk(t, Some(f)));
                if self.ctx.include_usage {
                    out.push(sse(&self
                        .ctx
                        .head("text_completion")
                        .r("choices", "[]")
                        .r("usage", self.usage(f, true))
                        .done()));
                }
            }
            Api::Chat => {
                self.role_chunk(out);
                if let Some(t) = t {
                    self.token(t, out);
                }
                out.push(self.chat_chunk(r#"{"reasoning_content":null}"#.into(), Some(f)));
                if self.ctx.include_usage {
                    out.push(sse(&self
                        .ctx
                        .head("chat.completion.chunk")
                        .r("choices", "[]")
                        .r("usage", self.usage(f, false))
                        .done()));
                }
            }
        }
        out.push(done());
    }

    fn whole(&self, answer: &Answer<'_>, f: &Finish) -> String {
        let text = answer.content;
        let reasoning = (!answer.reasoning.is_empty()).then_some(answer.reasoning);
        let scored = answer.scored();
        let lp = match (self.ctx.logprobs && !scored.is_empty(), self.ctx.api) {
            (false, _) => "null".into(),
            (true, Api::Completions) => logprobs::completion(&scored, None, false),
            (true, Api::Chat) => logprobs::chat(ChatStyle::Sglang, &scored, false),
        };
        let (object, choice) = match self.ctx.api {
            Api::Completions => (
                "text_completion",
                Obj::new()
                    .f("index", &0)
                    .f("text", text)
                    .r("logprobs", &lp)
                    .f("finish_reason", reason(f))
                    .null("matched_stop")
                    .done(),
            ),
            Api::Chat => (
                "chat.completion",
                Obj::new()
                    .f("index", &0)
                    .r(
                        "message",
                        Obj::new()
                            .f("role", "assistant")
                            .f("content", text)
                            .f("reasoning_content", &reasoning)
                            .null("tool_calls")
                            .done(),
                    )
                    .r("logprobs", &lp)
                    .f("finish_reason", reason(f))
                    .null("matched_stop")
                    .done(),
            ),
        };
        self.ctx
            .head(object)
            .r("choices", arr([choice]))
            .r("usage", self.usage(f, false))
            // The weight version the scheduler answered with, `default` unless
            // `--weight-version` (0.5.17 serving_completions.py:594, serving_chat.py:1888;
            // seen in transcripts/0.5.17/completions.http, chat.http).
            .r("metadata", Obj::new().f("weight_version", "default").done())
            .done()
    }
}
