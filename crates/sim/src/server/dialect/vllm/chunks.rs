//! The streamed chunks and whole bodies of a vLLM response (sources: the parent module).

use bytes::Bytes;

use super::super::chunk::{ChunkShape, Ctx, Tok, counts, done, reason, sse};
use super::super::json::{Obj, arr};
use super::*;

/// The chunks of one vLLM response.
#[derive(Debug)]
pub(crate) struct Shape {
    ctx: Ctx,
    fingerprint: String,
    cache_report: bool,
    role_sent: bool,
}

impl Shape {
    pub(crate) fn new(ctx: Ctx, config: &SimConfig) -> Self {
        Shape {
            ctx,
            fingerprint: fingerprint(config),
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

    fn completion_choice(text: &str, finish: Option<&Finish>) -> String {
        Obj::new()
            .f("index", &0)
            .f("text", text)
            .null("logprobs")
            .f("finish_reason", &finish.map(reason))
            .null("stop_reason")
            .null("prompt_token_ids")
            .null("token_ids")
            .null("weight_versions")
            .done()
    }

    fn usage(&self, f: &Finish) -> String {
        let (p, c, t) = counts(f);
        let details = self.cache_report.then(|| {
            Obj::new()
                .f("cached_tokens", &f.timings.cached_n.unwrap_or(0))
                .done()
        });
        Obj::new()
            .f("prompt_tokens", &p)
            .f("total_tokens", &t)
            .f("completion_tokens", &c)
            .opt_r("prompt_tokens_details", details)
            .done()
    }

    fn usage_chunk(&self, f: &Finish) -> Bytes {
        let object = match self.ctx.api {
            Api::Completions => "text_completion",
            Api::Chat => "chat.completion.chunk",
        };
        sse(&self
            .head(object)
            .r("choices", "[]")
            .r("usage", self.usage(f))
            .f("system_fingerprint", &self.fingerprint)
            .done())
    }

    fn chat_delta(text: &str) -> String {
        Obj::new().f("content", text).done()
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
            .head("chat.completion.chunk")
            .r("choices", arr([choice]))
            .null("prompt_token_ids")
            .null("prompt_text")
            .done()));
    }
}

impl ChunkShape for Shape {
    fn token(&mut self, t: &Tok<'_>, out: &mut Vec<Bytes>) {
        match self.ctx.api {
            Api::Completions => out.push(sse(&self
                .head("text_completion")
                .r("choices", arr([Self::completion_choice(t.text, None)]))
                .null("kv_transfer_params")
                .done())),
            Api::Chat => {
                self.role_chunk(out);
                let choice = Obj::new()
                    .f("index", &0)
                    .r("delta", Self::chat_delta(t.text))
                    .null("logprobs")
                    .null("finish_reason")
                    .null("token_ids")
                    .done();
                out.push(sse(&self
                    .head("chat.completion.chunk")
                    .r("choices", arr([choice]))
                    .null("kv_transfer_params")
                    .done()));
            }
        }
    }

    fn last(&mut self, t: Option<&Tok<'_>>, f: &Finish, out: &mut Vec<Bytes>) {
        let text = t.map_or("", |t| t.text);
        let fp = (!self.ctx.include_usage).then(|| self.fingerprint.clone());
        match self.ctx.api {
            Api::Completions => out.push(sse(&self
                .head("text_completion")
                .r("choices", arr([Self::completion_choice(text, Some(f))]))
                .opt("system_fingerprint", fp)
                .null("kv_transfer_params")
                .done())),
            Api::Chat => {
                self.role_chunk(out);
                let delta = match t {
                    Some(t) => Self::chat_delta(t.text),
                    None => "{}".into(),
                };
                let choice = Obj::new()
                    .f("index", &0)
                    .r("delta", delta)
                    .null("logprobs")
                    .f("finish_reason", reason(f))
                    .null("stop_reason")
                    .null("token_ids")
                    .null("weight_versions")
                    .done();
                out.push(sse(&self
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

    fn whole(&self, text: &str, f: &Finish) -> String {
        let choice = match self.ctx.api {
            Api::Completions => Obj::new()
                .f("index", &0)
                .f("text", text)
                .null("logprobs")
                .f("finish_reason", reason(f))
                .null("stop_reason")
                .done(),
            Api::Chat => Obj::new()
                .f("index", &0)
                .r(
                    "message",
                    Obj::new()
                        .f("role", "assistant")
                        .f("content", text)
                        .null("reasoning")
                        .r("tool_calls", "[]")
                        .done(),
                )
                .null("logprobs")
                .f("finish_reason", reason(f))
                .null("stop_reason")
                .done(),
        };
        let object = match self.ctx.api {
            Api::Completions => "text_completion",
            Api::Chat => "chat.completion",
        };
        self.head(object)
            .r("choices", arr([choice]))
            .f("system_fingerprint", &self.fingerprint)
            .r("usage", self.usage(f))
            .done()
    }
}
