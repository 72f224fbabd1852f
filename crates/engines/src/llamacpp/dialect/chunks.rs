//! The streamed chunks and whole bodies of a llama.cpp response (sources: the parent module).

use bytes::Bytes;

use super::*;
use crate::dialect::chunk::{
    Answer, ChunkShape, CountOrder, Ctx, Tok, cached_details, done, reason, sse, usage_counts,
};
use crate::dialect::json::{Obj, arr};
use crate::dialect::logprobs;

/// The chunks of one llama.cpp response.
#[derive(Debug)]
pub(crate) struct Shape {
    ctx: Ctx,
    fingerprint: String,
    first: bool,
}

impl Shape {
    pub(crate) fn new(ctx: Ctx, config: &Served) -> Self {
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
        Self::chat_choice_lp(delta, None, finish)
    }

    /// A chat choice; the probabilities of the step ride on its last delta, appended
    /// after it (server-task.cpp:1144-1150).
    fn chat_choice_lp(delta: &str, lp: Option<String>, finish: Option<&Finish>) -> String {
        arr([Obj::new()
            .f("finish_reason", &finish.map(reason))
            .f("index", &0)
            .r("delta", delta)
            .opt_r("logprobs", lp)
            .done()])
    }

    /// `logprobs` `{"content": […]}` when asked for (`n_probs`), else `null`.
    fn logprobs(&self, t: Option<&Tok<'_>>) -> Option<String> {
        let scored = t.map(Tok::scored).unwrap_or_default();
        (self.ctx.logprobs && !scored.is_empty()).then(|| logprobs::llama(&scored))
    }

    fn completion_choice(text: &str, lp: Option<String>, finish: Option<&Finish>) -> String {
        arr([Obj::new()
            .f("text", text)
            .f("index", &0)
            .r("logprobs", lp.unwrap_or_else(|| "null".into()))
            .f("finish_reason", &finish.map(reason))
            .done()])
    }
}

/// `usage` of an OpenAI-compatible result (server-task.cpp:365-372).
fn usage(f: &Finish) -> String {
    usage_counts(f, CountOrder::CompletionPromptTotal)
        .r("prompt_tokens_details", cached_details(f))
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
                .r(
                    "choices",
                    Self::completion_choice(t.text, self.logprobs(Some(t)), None),
                )
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
                // A diff's reasoning goes to `reasoning_content` (server-chat.cpp:621-628).
                let field = if self.ctx.reasoning(t.index) {
                    "reasoning_content"
                } else {
                    "content"
                };
                let delta = Obj::new().f(field, t.text).done();
                let choice = Self::chat_choice_lp(&delta, self.logprobs(Some(t)), None);
                out.push(sse(&self.chat(choice).done()));
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
                .r("choices", Self::completion_choice("", None, Some(f)))
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

    fn whole(&self, answer: &Answer<'_>, f: &Finish) -> String {
        let text = answer.content;
        let scored = answer.scored();
        let lp = (self.ctx.logprobs && !scored.is_empty()).then(|| logprobs::llama(&scored));
        let (choices, object) = match self.ctx.api {
            Api::Completions => (
                Self::completion_choice(text, lp, Some(f)),
                "text_completion",
            ),
            Api::Chat => (
                arr([Obj::new()
                    .f("finish_reason", reason(f))
                    .f("index", &0)
                    .r(
                        "message",
                        Obj::new()
                            .f("role", "assistant")
                            .f("content", text)
                            .opt(
                                "reasoning_content",
                                (!answer.reasoning.is_empty()).then_some(answer.reasoning),
                            )
                            .done(),
                    )
                    .opt_r("logprobs", lp)
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
