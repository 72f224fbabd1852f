//! The streamed chunks and whole bodies of a llama.cpp response (sources: the parent module).

use bytes::Bytes;

use super::super::chunk::{ChunkShape, Ctx, Tok, counts, done, reason, sse};
use super::super::json::{Obj, arr};
use super::*;

/// The chunks of one llama.cpp response.
#[derive(Debug)]
pub(crate) struct Shape {
    ctx: Ctx,
    fingerprint: String,
    first: bool,
}

impl Shape {
    pub(crate) fn new(ctx: Ctx, config: &SimConfig) -> Self {
        Shape {
            ctx,
            fingerprint: build_info(config),
            first: true,
        }
    }

    fn chat(&self, choices: String) -> Obj {
        Obj::new()
            .r("choices", choices)
            .f("created", &self.ctx.created)
            .f("id", &self.ctx.id)
            .f("model", &self.ctx.model)
            .f("system_fingerprint", &self.fingerprint)
            .f("object", "chat.completion.chunk")
    }

    fn chat_choice(delta: &str, finish: Option<&Finish>) -> String {
        arr([Obj::new()
            .f("finish_reason", &finish.map(reason))
            .f("index", &0)
            .r("delta", delta)
            .done()])
    }

    fn completion_choice(text: &str, finish: Option<&Finish>) -> String {
        arr([Obj::new()
            .f("text", text)
            .f("index", &0)
            .null("logprobs")
            .f("finish_reason", &finish.map(reason))
            .done()])
    }
}

/// `usage` of an OpenAI-compatible result (server-task.cpp:365-372).
fn usage(f: &Finish) -> String {
    let (p, c, t) = counts(f);
    Obj::new()
        .f("completion_tokens", &c)
        .f("prompt_tokens", &p)
        .f("total_tokens", &t)
        .r(
            "prompt_tokens_details",
            Obj::new()
                .f("cached_tokens", &f.timings.cached_n.unwrap_or(0))
                .done(),
        )
        .done()
}

/// `timings` (server-common.cpp:84-104): prompt figures count the processed (uncached)
/// prompt tokens; generation rates count decode steps, the first token being free.
pub(crate) fn timings(t: &Timings) -> String {
    let cached = t.cached_n.unwrap_or(0);
    let prompt_n = t.prompt_n.saturating_sub(cached);
    let steps = t.predicted_n.saturating_sub(1);
    let per = |ms: f64, n: u32| if n > 0 { ms / f64::from(n) } else { 0.0 };
    let rate = |ms: f64, n: u32| {
        if ms > 0.0 {
            1e3 / ms * f64::from(n)
        } else {
            0.0
        }
    };
    Obj::new()
        .f("cache_n", &cached)
        .f("prompt_n", &prompt_n)
        .f("prompt_ms", &t.prompt_ms)
        .f("prompt_per_token_ms", &per(t.prompt_ms, prompt_n))
        .f("prompt_per_second", &rate(t.prompt_ms, prompt_n))
        .f("predicted_n", &t.predicted_n)
        .f("predicted_ms", &t.predicted_ms)
        .f("predicted_per_token_ms", &per(t.predicted_ms, steps))
        .f("predicted_per_second", &rate(t.predicted_ms, steps))
        .done()
}

impl ChunkShape for Shape {
    fn token(&mut self, t: &Tok<'_>, out: &mut Vec<Bytes>) {
        match self.ctx.api {
            Api::Completions => out.push(sse(&Obj::new()
                .r("choices", Self::completion_choice(t.text, None))
                .f("created", &self.ctx.created)
                .f("model", &self.ctx.model)
                .f("system_fingerprint", &self.fingerprint)
                .f("object", "text_completion")
                .f("id", &self.ctx.id)
                .done())),
            Api::Chat => {
                if self.first {
                    self.first = false;
                    let role = Self::chat_choice(r#"{"role":"assistant","content":null}"#, None);
                    out.push(sse(&self.chat(role).done()));
                }
                let delta = Obj::new().f("content", t.text).done();
                out.push(sse(&self.chat(Self::chat_choice(&delta, None)).done()));
            }
        }
    }

    fn last(&mut self, t: Option<&Tok<'_>>, f: &Finish, out: &mut Vec<Bytes>) {
        if let Some(t) = t {
            self.token(t, out);
        } else if self.ctx.api == Api::Chat && self.first {
            self.first = false;
            let role = Self::chat_choice(r#"{"role":"assistant","content":null}"#, None);
            out.push(sse(&self.chat(role).done()));
        }
        let tm = timings(&f.timings);
        match self.ctx.api {
            Api::Completions => out.push(sse(&Obj::new()
                .r("choices", Self::completion_choice("", Some(f)))
                .f("created", &self.ctx.created)
                .f("model", &self.ctx.model)
                .f("system_fingerprint", &self.fingerprint)
                .f("object", "text_completion")
                .r("usage", usage(f))
                .f("id", &self.ctx.id)
                .r("timings", tm)
                .done())),
            Api::Chat => {
                let finish = self.chat(Self::chat_choice("{}", Some(f)));
                if self.ctx.include_usage {
                    out.push(sse(&finish.done()));
                    out.push(sse(&self
                        .chat("[]".into())
                        .r("usage", usage(f))
                        .r("timings", tm)
                        .done()));
                } else {
                    out.push(sse(&finish.r("timings", tm).done()));
                }
            }
        }
        out.push(done());
    }

    fn whole(&self, text: &str, f: &Finish) -> String {
        let (choices, object) = match self.ctx.api {
            Api::Completions => (Self::completion_choice(text, Some(f)), "text_completion"),
            Api::Chat => (
                arr([Obj::new()
                    .f("finish_reason", reason(f))
                    .f("index", &0)
                    .r(
                        "message",
                        Obj::new().f("role", "assistant").f("content", text).done(),
                    )
                    .done()]),
                "chat.completion",
            ),
        };
        Obj::new()
            .r("choices", choices)
            .f("created", &self.ctx.created)
            .f("model", &self.ctx.model)
            .f("system_fingerprint", &self.fingerprint)
            .f("object", object)
            .r("usage", usage(f))
            .f("id", &self.ctx.id)
            .r("timings", timings(&f.timings))
            .done()
    }
}
