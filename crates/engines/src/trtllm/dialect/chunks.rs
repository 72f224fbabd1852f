//! The streamed chunks and whole bodies of a TensorRT-LLM response (sources: the parent module).

use bytes::Bytes;

use super::*;
use crate::dialect::chunk::{
    Answer, ChunkShape, CountOrder, Ctx, Tok, cached_details, done, reason, sse, usage_counts,
};
use crate::dialect::json::{Obj, arr};
use crate::dialect::logprobs::{self, ChatStyle, Scored};

/// The chunks of one TensorRT-LLM response.
#[derive(Debug)]
pub(crate) struct Shape {
    ctx: Ctx,
    role_sent: bool,
}

impl Shape {
    pub(crate) fn new(ctx: Ctx) -> Self {
        Shape {
            ctx,
            role_sent: false,
        }
    }

    /// The stream's one id, `{prefix}-{request id}`, that every chunk of it carries
    /// (postprocess_handlers.py `_ensure_stream_metadata`: "cmpl" for completions,
    /// "chatcmpl" for chat; the executor's request id is an integer).
    fn stream_id(&self) -> String {
        let prefix = match self.ctx.api {
            Api::Completions => "cmpl",
            Api::Chat => "chatcmpl",
        };
        let n = splitmix64(self.ctx.created ^ hash(&self.ctx.id)) % 1_000_000_000;
        format!("{prefix}-{n}")
    }

    fn usage(f: &Finish) -> String {
        usage_counts(f, CountOrder::PromptTotalCompletion)
            .r("prompt_tokens_details", cached_details(f))
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
        let id = self.stream_id();
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
        let id = self.stream_id();
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

    /// The final usage chunk: a `CompletionStreamResponse` for completions, a
    /// `ChatCompletionStreamResponse` for chat, with the stream's id and no choice
    /// (postprocess_handlers.py `completion_stream_post_processor`,
    /// `chat_stream_post_processor`).
    fn usage_chunk(&mut self, f: &Finish) -> Bytes {
        let id = self.stream_id();
        let object = match self.ctx.api {
            Api::Completions => "text_completion",
            Api::Chat => "chat.completion.chunk",
        };
        sse(&Obj::new()
            .f("id", &id)
            .f("object", object)
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

    /// openai_server.py (newest): `completion_generator` answers a generation error with
    /// `{"error": {"message", "type": "server_error", "code": null, "param": null}}` and
    /// `[DONE]`; `chat_stream_generator` re-raises, and the connection closes mid-body.
    fn failure(&mut self, message: &str) -> Option<Vec<Bytes>> {
        match self.ctx.api {
            Api::Chat => None,
            Api::Completions => {
                let err = Obj::new()
                    .f("message", message)
                    .f("type", "server_error")
                    .null("code")
                    .null("param")
                    .done();
                Some(vec![sse(&Obj::new().r("error", err).done()), done()])
            }
        }
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
        self.ctx
            .head(object)
            .r("choices", arr([choice]))
            .r("usage", Self::usage(f))
            .null("prompt_token_ids")
            .done()
    }
}
