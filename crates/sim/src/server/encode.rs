//! Response bodies and SSE events, shaped like vLLM's.
//!
//! Token events are the hot path: their constant JSON prefix is built once per request and
//! only the token text is escaped and appended per event.

use bytes::{BufMut, Bytes, BytesMut};
use serde::Serialize;
use serde_json::Value;

use super::text::TokenText;
use super::wire::Api;
use crate::engine::{Finish, Timings};

/// The final SSE event of every stream.
pub(crate) const DONE_EVENT: &[u8] = b"data: [DONE]\n\n";

/// Builds every JSON body and SSE event of one response.
#[derive(Debug)]
pub(crate) struct Encoder {
    api: Api,
    id: String,
    created: u64,
    model: String,
    text: TokenText,
    token_prefix: Vec<u8>,
    scratch: String,
}

fn object(api: Api, stream: bool) -> &'static str {
    match (api, stream) {
        (Api::Completions, _) => "text_completion",
        (Api::Chat, true) => "chat.completion.chunk",
        (Api::Chat, false) => "chat.completion",
    }
}

const COMPLETION_SUFFIX: &[u8] = br#","logprobs":null,"finish_reason":null,"stop_reason":null}]}"#;
const CHAT_SUFFIX: &[u8] = br#"},"logprobs":null,"finish_reason":null}]}"#;

/// Appends `s` as a JSON string literal.
fn push_json_str(out: &mut BytesMut, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.put_u8(b'"');
        out.put_slice(s.as_bytes());
        out.put_u8(b'"');
    } else {
        // serde_json escapes every other case correctly.
        let quoted = Value::from(s).to_string();
        out.put_slice(quoted.as_bytes());
    }
}

impl Encoder {
    pub(crate) fn new(api: Api, id: String, created: u64, model: &str, text: TokenText) -> Self {
        let mut prefix = format!(
            r#"data: {{"id":{},"object":"{}","created":{},"model":{},"choices":[{{"index":0,"#,
            Value::from(id.as_str()),
            object(api, true),
            created,
            Value::from(model),
        );
        prefix.push_str(match api {
            Api::Completions => r#""text":"#,
            Api::Chat => r#""delta":{"content":"#,
        });
        Encoder {
            api,
            id,
            created,
            model: model.to_owned(),
            text,
            token_prefix: prefix.into_bytes(),
            scratch: String::with_capacity(16),
        }
    }

    /// Text of token `index`.
    pub(crate) fn token_text(&mut self, index: u32) -> &str {
        self.scratch.clear();
        self.text.push(index, &mut self.scratch);
        &self.scratch
    }

    /// Appends the text of token `index` to `out`.
    pub(crate) fn push_token_text(&self, index: u32, out: &mut String) {
        self.text.push(index, out);
    }

    /// The SSE event of a token that is not the last.
    pub(crate) fn token_event(&mut self, index: u32) -> Bytes {
        let suffix = match self.api {
            Api::Completions => COMPLETION_SUFFIX,
            Api::Chat => CHAT_SUFFIX,
        };
        self.scratch.clear();
        self.text.push(index, &mut self.scratch);
        let mut b = BytesMut::with_capacity(
            self.token_prefix.len() + suffix.len() + self.scratch.len() + 8,
        );
        b.put_slice(&self.token_prefix);
        push_json_str(&mut b, &self.scratch);
        b.put_slice(suffix);
        b.put_slice(b"\n\n");
        b.freeze()
    }

    /// A broken event: the start of a token event, cut inside its JSON.
    pub(crate) fn malformed_event(&self) -> Bytes {
        let mut b = BytesMut::from(&self.token_prefix[..]);
        b.put_slice(b"\"trunc\n\n");
        b.freeze()
    }

    fn body<'a, C: Serialize>(&'a self, stream: bool, choices: C) -> Body<'a, C> {
        Body {
            id: &self.id,
            object: object(self.api, stream),
            created: self.created,
            model: &self.model,
            choices,
            usage: None,
            timings: None,
        }
    }

    /// vLLM's first chat chunk: the assistant role with empty content.
    pub(crate) fn role_event(&self) -> Bytes {
        let delta = Delta {
            role: Some("assistant"),
            content: "",
        };
        sse(&self.body(true, [Choice::chunk(self.api, delta, None)]))
    }

    /// The event of the last token: its text, `finish_reason` and the server `timings`.
    pub(crate) fn final_token_event(&mut self, index: u32, finish: &Finish) -> Bytes {
        let text = self.token_text(index).to_owned();
        self.final_event(&text, finish)
    }

    /// The finish event with `text` (empty when the stream's text was held back).
    pub(crate) fn final_event(&self, text: &str, finish: &Finish) -> Bytes {
        let delta = Delta {
            role: None,
            content: text,
        };
        let mut body = self.body(true, [Choice::chunk(self.api, delta, Some(finish))]);
        body.timings = Some(finish.timings);
        sse(&body)
    }

    /// The usage chunk sent when `stream_options.include_usage` is set (empty `choices`).
    pub(crate) fn usage_event(&self, timings: &Timings) -> Bytes {
        let mut body = self.body(true, [(); 0]);
        body.usage = Some(Usage::of(timings));
        body.timings = Some(*timings);
        sse(&body)
    }

    /// The whole non-streamed response.
    pub(crate) fn full_response(&self, text: &str, finish: &Finish) -> String {
        let mut choice = Choice::chunk(
            self.api,
            Delta {
                role: None,
                content: text,
            },
            Some(finish),
        );
        if self.api == Api::Chat {
            choice.delta = None;
            choice.message = Some(Delta {
                role: Some("assistant"),
                content: text,
            });
        }
        let mut body = self.body(false, [choice]);
        body.usage = Some(Usage::of(&finish.timings));
        body.timings = Some(finish.timings);
        serde_json::to_string(&body).unwrap_or_default()
    }
}

/// A response body or stream chunk, fields in vLLM's order.
#[derive(Debug, Serialize)]
struct Body<'a, C> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: C,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timings: Option<Timings>,
}

#[derive(Debug, Serialize)]
struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    content: &'a str,
}

#[derive(Debug, Serialize)]
struct Choice<'a> {
    index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta: Option<Delta<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Delta<'a>>,
    logprobs: Option<()>,
    finish_reason: Option<&'static str>,
    /// vLLM sends `stop_reason` with completion chunks and with finished chat chunks.
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_reason: Option<Option<()>>,
}

impl<'a> Choice<'a> {
    /// A completion choice (`text`) or a chat chunk choice (`delta`).
    fn chunk(api: Api, delta: Delta<'a>, finish: Option<&Finish>) -> Self {
        let finish_reason = finish.map(|f| f.reason.as_str());
        match api {
            Api::Completions => Choice {
                index: 0,
                text: Some(delta.content),
                delta: None,
                message: None,
                logprobs: None,
                finish_reason,
                stop_reason: Some(None),
            },
            Api::Chat => Choice {
                index: 0,
                text: None,
                delta: Some(delta),
                message: None,
                logprobs: None,
                finish_reason,
                stop_reason: finish.map(|_| None),
            },
        }
    }
}

#[derive(Debug, Serialize)]
struct Usage {
    prompt_tokens: u32,
    total_tokens: u64,
    completion_tokens: u32,
    /// vLLM's and OpenAI's place for cached prompt tokens (with a prefix cache only).
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Debug, Serialize)]
struct PromptTokensDetails {
    cached_tokens: u32,
}

impl Usage {
    fn of(t: &Timings) -> Self {
        Usage {
            prompt_tokens: t.prompt_n,
            total_tokens: u64::from(t.prompt_n) + u64::from(t.predicted_n),
            completion_tokens: t.predicted_n,
            prompt_tokens_details: t
                .cached_n
                .map(|cached_tokens| PromptTokensDetails { cached_tokens }),
        }
    }
}

fn sse<T: Serialize>(v: &T) -> Bytes {
    let mut b = BytesMut::with_capacity(384);
    b.put_slice(b"data: ");
    b.put_slice(serde_json::to_string(v).unwrap_or_default().as_bytes());
    b.put_slice(b"\n\n");
    b.freeze()
}

/// Builds the streamed token events of `/v1/completions` exactly as the simulator sends
/// them, for a benchmark's bare reference server to stream identical bytes.
#[derive(Debug)]
pub struct CompletionChunkEncoder(Encoder);

impl CompletionChunkEncoder {
    /// An encoder for one response with this id, model name and text seed.
    pub fn new(id: &str, model: &str, text_seed: u64) -> Self {
        CompletionChunkEncoder(Encoder::new(
            Api::Completions,
            id.to_owned(),
            0,
            model,
            TokenText::sampled(text_seed),
        ))
    }

    /// The `data: {...}\n\n` event of token `index` (not the last one).
    pub fn token_event(&mut self, index: u32) -> Bytes {
        self.0.token_event(index)
    }

    /// The closing `data: [DONE]\n\n` event.
    pub fn done_event() -> Bytes {
        Bytes::from_static(DONE_EVENT)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::engine::FinishReason;

    fn parse_event(b: &Bytes) -> Value {
        let s = std::str::from_utf8(b).unwrap_or_default();
        let json = s
            .strip_prefix("data: ")
            .and_then(|s| s.strip_suffix("\n\n"))
            .unwrap_or_default();
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {s}"))
    }

    fn finish() -> Finish {
        Finish {
            reason: FinishReason::Length,
            timings: Timings {
                queue_ms: 1.0,
                prompt_n: 3,
                prompt_ms: 2.0,
                ttft_ms: 3.0,
                predicted_n: 2,
                predicted_ms: 4.0,
                predicted_per_token_ms: Some(4.0),
                e2e_ms: 7.0,
                cached_n: None,
            },
        }
    }

    #[test]
    fn token_events_are_valid_vllm_shaped_json() {
        let mut e = Encoder::new(
            Api::Completions,
            "cmpl-1".into(),
            5,
            "m\"odel",
            TokenText::sampled(1),
        );
        let v = parse_event(&e.token_event(0));
        assert_eq!(v["object"], "text_completion");
        assert_eq!(v["model"], "m\"odel");
        assert_eq!(v["choices"][0]["finish_reason"], Value::Null);
        let text = v["choices"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert_eq!(text, e.token_text(0));

        let mut c = Encoder::new(
            Api::Chat,
            "chatcmpl-1".into(),
            5,
            "m",
            TokenText::sampled(1),
        );
        let v = parse_event(&c.token_event(3));
        assert_eq!(v["object"], "chat.completion.chunk");
        assert!(v["choices"][0]["delta"]["content"].is_string());
        let r = parse_event(&c.role_event());
        assert_eq!(r["choices"][0]["delta"]["role"], "assistant");
        let f = parse_event(&c.final_token_event(1, &finish()));
        assert_eq!(f["choices"][0]["finish_reason"], "length");
        assert_eq!(f["timings"]["predicted_n"], 2);
        let u = parse_event(&c.usage_event(&finish().timings));
        assert_eq!(u["usage"]["total_tokens"], 5);
        assert_eq!(u["choices"], json!([]));
    }

    #[test]
    fn the_malformed_event_does_not_parse() {
        let e = Encoder::new(Api::Completions, "x".into(), 5, "m", TokenText::sampled(1));
        let b = e.malformed_event();
        let s = std::str::from_utf8(&b).unwrap_or_default();
        assert!(s.starts_with("data: {") && s.ends_with("\n\n"));
        assert!(serde_json::from_str::<Value>(&s[6..]).is_err());
    }
}
