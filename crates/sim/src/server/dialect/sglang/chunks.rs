//! The streamed chunks and whole bodies of a SGLang response (sources: the parent module).

use bytes::Bytes;

use super::super::chunk::{ChunkShape, Ctx, Tok, counts, done, reason, sse};
use super::super::json::{Obj, arr};
use super::*;

/// The chunks of one SGLang response.
#[derive(Debug)]
pub(crate) struct Shape {
    ctx: Ctx,
    cache_report: bool,
    role_sent: bool,
}

impl Shape {
    pub(crate) fn new(ctx: Ctx, config: &SimConfig) -> Self {
        Shape {
            ctx,
            cache_report: config.wire.cache_report,
            role_sent: false,
        }
    }

    fn head(&self, object: &str) -> Obj {
        Obj::new()
            .f("id", &self.ctx.id)
            .f("object", object)
            .f("created", &self.ctx.created)
            .f("model", &self.ctx.model)
    }

    /// `UsageInfo`; `exclude_none` drops the unset details (the completions usage chunk).
    fn usage(&self, f: &Finish, exclude_none: bool) -> String {
        let (p, c, t) = counts(f);
        let details = self.cache_report.then(|| {
            Obj::new()
                .f("cached_tokens", &f.timings.cached_n.unwrap_or(0))
                .done()
        });
        let o = Obj::new()
            .f("prompt_tokens", &p)
            .f("total_tokens", &t)
            .f("completion_tokens", &c);
        let o = match (details, exclude_none) {
            (Some(d), _) => o.r("prompt_tokens_details", d),
            (None, true) => o,
            (None, false) => o.null("prompt_tokens_details"),
        };
        let o = o.f("reasoning_tokens", &0);
        if exclude_none {
            o.done()
        } else {
            o.null("completion_tokens_details").done()
        }
    }

    fn chat_chunk(&self, delta: String, finish: Option<&Finish>) -> Bytes {
        let choice = Obj::new()
            .f("index", &0)
            .r("delta", delta)
            .null("logprobs")
            .f("finish_reason", &finish.map(reason))
            .null("matched_stop")
            .done();
        sse(&self
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

    fn completion_chunk(&self, text: &str, finish: Option<&Finish>) -> Bytes {
        let choice = Obj::new()
            .f("index", &0)
            .f("text", text)
            .null("logprobs")
            .f("finish_reason", &finish.map(reason))
            .null("matched_stop")
            .done();
        sse(&self
            .head("text_completion")
            .r("choices", arr([choice]))
            .null("usage")
            .done())
    }
}

impl ChunkShape for Shape {
    fn token(&mut self, t: &Tok<'_>, out: &mut Vec<Bytes>) {
        match self.ctx.api {
            Api::Completions => out.push(self.completion_chunk(t.text, None)),
            Api::Chat => {
                self.role_chunk(out);
                let delta = Obj::new()
                    .null("reasoning_content")
                    .f("content", t.text)
                    .done();
                out.push(self.chat_chunk(delta, None));
            }
        }
    }

    fn last(&mut self, t: Option<&Tok<'_>>, f: &Finish, out: &mut Vec<Bytes>) {
        match self.ctx.api {
            Api::Completions => {
                out.push(self.completion_chunk(t.map_or("", |t| t.text), Some(f)));
                if self.ctx.include_usage {
                    out.push(sse(&self
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
                        .head("chat.completion.chunk")
                        .r("choices", "[]")
                        .r("usage", self.usage(f, false))
                        .done()));
                }
            }
        }
        out.push(done());
    }

    fn whole(&self, text: &str, f: &Finish) -> String {
        let (object, choice) = match self.ctx.api {
            Api::Completions => (
                "text_completion",
                Obj::new()
                    .f("index", &0)
                    .f("text", text)
                    .null("logprobs")
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
                            .null("reasoning_content")
                            .null("tool_calls")
                            .done(),
                    )
                    .null("logprobs")
                    .f("finish_reason", reason(f))
                    .null("matched_stop")
                    .done(),
            ),
        };
        self.head(object)
            .r("choices", arr([choice]))
            .r("usage", self.usage(f, false))
            .null("metadata")
            .done()
    }
}
