//! The streamed chunks and whole bodies of a TensorRT-LLM response (sources: the parent module).

use bytes::Bytes;

use super::*;
use crate::dialect::chunk::{Answer, ChunkShape, Ctx, Tok, counts, done, reason, sse};
use crate::dialect::json::{Obj, arr};
use crate::dialect::logprobs::{self, ChatStyle, Scored};

/// The chunks of one TensorRT-LLM response.
#[derive(Debug)]
pub(crate) struct Shape {
    ctx: Ctx,
    chunks: u64,
    role_sent: bool,
}

impl Shape {
    pub(crate) fn new(ctx: Ctx) -> Self {
        Shape {
            ctx,
            chunks: 0,
            role_sent: false,
        }
    }

    /// A fresh uuid4 hex per chunk, as each `CompletionStreamResponse` gets its own.
    fn next_id(&mut self, prefix: &str) -> String {
        self.chunks += 1;
        let h = splitmix64(self.ctx.created ^ splitmix64(self.chunks ^ hash(&self.ctx.id)));
        format!("{prefix}-{h:016x}{:016x}", splitmix64(h))
    }

    fn usage(f: &Finish) -> String {
        let (p, c, t) = counts(f);
        Obj::new()
            .f("prompt_tokens", &p)
            .f("total_tokens", &t)
            .f("completion_tokens", &c)
            .r(
                "prompt_tokens_details",
                Obj::new()
                    .f("cached_tokens", &f.timings.cached_n.unwrap_or(0))
                    .done(),
            )
            .done()
    }

    fn completion_chunk(&mut self, text: &str, finish: Option<&Finish>) -> Bytes {
        let choice = Obj::new()
            .f("index", &0)
            .f("text", text)
            .null("token_ids")
            .null("logprobs")
            .f("finish_reason", &finish.map(reason))
            .null("stop_reason")
            .null("avg_decoded_tokens_per_iter")
            .done();
        let id = self.next_id("cmpl");
        sse(&Obj::new()
            .f("id", &id)
            .f("object", "text_completion")
            .f("created", &self.ctx.created)
            .f("model", &self.ctx.model)
            .r("choices", arr([choice]))
            .null("usage")
            .done())
    }

    /// Chat `logprobs` of these tokens (`create_logprobs`), when asked for.
    fn logprobs(&self, scored: &[Scored<'_>]) -> Option<String> {
        (self.ctx.logprobs && !scored.is_empty())
            .then(|| logprobs::chat(ChatStyle::OpenAi, scored, false))
    }

    fn chat_chunk(&mut self, delta: String, lp: Option<String>, finish: Option<&Finish>) -> String {
        let choice = Obj::new()
            .f("index", &0)
            .r("delta", delta)
            .opt_r("logprobs", lp)
            .opt("finish_reason", finish.map(reason))
            .done();
        let id = self.next_id("chatcmpl");
        Obj::new()
            .f("id", &id)
            .f("object", "chat.completion.chunk")
            .f("created", &self.ctx.created)
            .f("model", &self.ctx.model)
            .r("choices", arr([choice]))
            .done()
    }

    fn role_chunk(&mut self, out: &mut Vec<Bytes>) {
        if !self.role_sent {
            self.role_sent = true;
            let json = self.chat_chunk(r#"{"role":"assistant"}"#.into(), None, None);
            // `f"data: {…} \n\n"`: a space before the blank line.
            out.push(Bytes::from(format!("data: {json} \n\n")));
        }
    }

    /// `DeltaMessage(content=…, reasoning_content=…)` after the reasoning parser: the
    /// side that got nothing is `""` (`apply_reasoning_parser`).
    fn delta(&self, t: Option<&Tok<'_>>) -> String {
        let (content, reasoning) = match t {
            Some(t) if self.ctx.reasoning(t.index) => ("", t.text),
            Some(t) => (t.text, ""),
            None => ("", ""),
        };
        Obj::new()
            .f("content", content)
            .f("reasoning_content", reasoning)
            .done()
    }

    fn usage_chunk(&mut self, f: &Finish) -> Bytes {
        let id = self.next_id("chatcmpl");
        sse(&Obj::new()
            .f("id", &id)
            .f("object", "chat.completion.chunk")
            .f("created", &self.ctx.created)
            .f("model", &self.ctx.model)
            .r("choices", "[]")
            .r("usage", Self::usage(f))
            .done())
    }
}

fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

impl ChunkShape for Shape {
    fn opening(&mut self, _out: &mut Vec<Bytes>) {}

    fn token(&mut self, t: &Tok<'_>, out: &mut Vec<Bytes>) {
        match self.ctx.api {
            Api::Completions => out.push(self.completion_chunk(t.text, None)),
            Api::Chat => {
                self.role_chunk(out);
                let lp = self.logprobs(&t.scored());
                let json = self.chat_chunk(self.delta(Some(t)), lp, None);
                out.push(sse(&json));
            }
        }
    }

    fn last(&mut self, t: Option<&Tok<'_>>, f: &Finish, out: &mut Vec<Bytes>) {
        let text = t.map_or("", |t| t.text);
        match self.ctx.api {
            Api::Completions => out.push(self.completion_chunk(text, Some(f))),
            Api::Chat => {
                self.role_chunk(out);
                let lp = self.logprobs(&t.map(Tok::scored).unwrap_or_default());
                let json = self.chat_chunk(self.delta(t), lp, Some(f));
                out.push(sse(&json));
            }
        }
        if self.ctx.include_usage {
            out.push(self.usage_chunk(f));
        }
        out.push(done());
    }

    fn whole(&self, answer: &Answer<'_>, f: &Finish) -> String {
        let text = answer.content;
        let (object, choice) = match self.ctx.api {
            Api::Completions => (
                "text_completion",
                Obj::new()
                    .f("index", &0)
                    .f("text", text)
                    .null("token_ids")
                    .null("logprobs")
                    .null("context_logits")
                    .f("finish_reason", reason(f))
                    .null("stop_reason")
                    .null("disaggregated_params")
                    .null("avg_decoded_tokens_per_iter")
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
                            .f("reasoning_content", answer.reasoning)
                            .null("reasoning")
                            .r("tool_calls", "[]")
                            .done(),
                    )
                    .r(
                        "logprobs",
                        self.logprobs(&answer.scored())
                            .unwrap_or_else(|| "null".into()),
                    )
                    .f("finish_reason", reason(f))
                    .null("stop_reason")
                    .null("mm_embedding_handle")
                    .null("disaggregated_params")
                    .null("avg_decoded_tokens_per_iter")
                    .done(),
            ),
        };
        Obj::new()
            .f("id", &self.ctx.id)
            .f("object", object)
            .f("created", &self.ctx.created)
            .f("model", &self.ctx.model)
            .r("choices", arr([choice]))
            .r("usage", Self::usage(f))
            .null("prompt_token_ids")
            .done()
    }
}
