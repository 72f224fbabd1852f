//! The JSON of one streamed event, parsed narrowly.
//!
//! Only what the metrics need is read: whether any choice carries a token (non-empty
//! `text`, `delta.content`, `delta.reasoning_content`/`reasoning`, or `delta.tool_calls`)
//! and whether that token is reasoning or answer,
//! `finish_reason`, `usage`, the server's `timings`, and `error`. Strings are not copied:
//! the content fields are reduced to "non-empty?" while deserialising, and `finish_reason`
//! borrows from the event (it is copied once per request, by the caller). Unknown fields
//! (`id`, `model`, `logprobs`, …) are skipped without allocating.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use servebench_result::record::{ServerTimings, Usage};

/// What one event said.
#[derive(Debug, Default)]
pub struct ChunkInfo<'a> {
    /// A choice carried reasoning text (`delta.reasoning_content`, SGLang's, llama.cpp's and
    /// transformers' field, or `delta.reasoning`, vLLM's; both are read for every engine).
    pub reasoning: bool,
    /// A choice carried answer text: `text`, `delta.content` or `delta.tool_calls`.
    pub answer: bool,
    /// The event has at least one choice (`"choices": []`, the usage chunk's, has none).
    pub choice: bool,
    /// The choice's finish reason, when it ended (an empty string is none).
    pub finish_reason: Option<Cow<'a, str>>,
    /// The `usage` member, when present.
    pub usage: Option<Usage>,
    /// The server's `timings` member (llama.cpp, the simulator), when present.
    pub timings: Option<ServerTimings>,
    /// The `error` member, when present and not `null`.
    pub error: Option<serde_json::Value>,
    /// The event is itself an error object (`"object": "error"`, as older vLLM versions
    /// stream errors).
    pub error_object: bool,
}

impl ChunkInfo<'_> {
    /// At least one choice carried a token, reasoning or answer. A role-only delta
    /// (`{"role":"assistant"}` or `"content": ""`) does not.
    pub fn content(&self) -> bool {
        self.reasoning || self.answer
    }
}

/// Parses one event's data.
pub fn parse_chunk(data: &[u8]) -> Result<ChunkInfo<'_>, serde_json::Error> {
    let raw: RawChunk<'_> = serde_json::from_slice(data)?;
    Ok(ChunkInfo {
        reasoning: raw.choices.reasoning,
        answer: raw.choices.answer,
        choice: raw.choices.any,
        finish_reason: raw.choices.finish_reason,
        usage: raw.usage,
        timings: raw.timings.as_ref().and_then(timings_from_json),
        error: raw.error.filter(|e| !e.is_null()),
        error_object: raw.object.0,
    })
}

#[derive(Deserialize)]
struct RawChunk<'a> {
    #[serde(default, borrow)]
    choices: Choices<'a>,
    #[serde(default)]
    usage: Option<Usage>,
    // Parsed leniently below (numbers may be ints or floats); sent once per request.
    #[serde(default)]
    timings: Option<serde_json::Value>,
    #[serde(default)]
    error: Option<serde_json::Value>,
    #[serde(default)]
    object: IsError,
}

/// The `choices` array folded into one summary without allocating a `Vec`.
#[derive(Default)]
struct Choices<'a> {
    any: bool,
    reasoning: bool,
    answer: bool,
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    text: NonEmpty,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: NonEmpty,
    #[serde(default)]
    reasoning_content: NonEmpty,
    #[serde(default)]
    reasoning: NonEmpty,
    #[serde(default)]
    tool_calls: NonEmpty,
}

impl<'de: 'a, 'a> Deserialize<'de> for Choices<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Choices<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of choices")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Choices::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Choices::default();
                while let Some(c) = seq.next_element::<Choice<'a>>()? {
                    out.any = true;
                    let delta = c.delta.unwrap_or_default();
                    out.answer |= c.text.0 || delta.content.0 || delta.tool_calls.0;
                    out.reasoning |= delta.reasoning_content.0 || delta.reasoning.0;
                    // TGI sends `"finish_reason": ""` on every completions chunk but the
                    // last: an empty reason is no finish.
                    if c.finish_reason.as_deref().is_some_and(|r| !r.is_empty()) {
                        out.finish_reason = c.finish_reason;
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A field reduced to "does it carry anything": a non-empty string, array or object.
/// `null`, `""`, `[]`, numbers and booleans do not.
#[derive(Default)]
struct NonEmpty(bool);

impl<'de> Deserialize<'de> for NonEmpty {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NonEmpty;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, array, object or null")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<NonEmpty, E> {
                Ok(NonEmpty(!s.is_empty()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_none<E: de::Error>(self) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<NonEmpty, E> {
                Ok(NonEmpty(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NonEmpty, A::Error> {
                let mut any = false;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    any = true;
                }
                Ok(NonEmpty(any))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NonEmpty, A::Error> {
                let mut any = false;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    any = true;
                }
                Ok(NonEmpty(any))
            }
        }
        d.deserialize_any(V)
    }
}

/// `"object"` reduced to "is it `error`" without copying the string.
#[derive(Default)]
struct IsError(bool);

impl<'de> Deserialize<'de> for IsError {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IsError;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or null")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<IsError, E> {
                Ok(IsError(s == "error"))
            }
            fn visit_unit<E: de::Error>(self) -> Result<IsError, E> {
                Ok(IsError(false))
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads llama.cpp-style and simulator `timings`, accepting ints or floats for every field.
fn timings_from_json(v: &serde_json::Value) -> Option<ServerTimings> {
    let obj = v.as_object()?;
    let f = |k: &str| obj.get(k).and_then(serde_json::Value::as_f64);
    let n = |k: &str| f(k).filter(|x| *x >= 0.0).map(|x| x.round() as u64);
    Some(ServerTimings {
        prompt_n: n("prompt_n"),
        prompt_ms: f("prompt_ms"),
        predicted_n: n("predicted_n"),
        predicted_ms: f("predicted_ms"),
        predicted_per_token_ms: f("predicted_per_token_ms"),
        queue_ms: f("queue_ms"),
        ttft_ms: f("ttft_ms"),
        e2e_ms: f("e2e_ms"),
        cache_n: n("cache_n"),
    })
}

/// Appends the text an event carries (`text`, or `delta.content`, of every choice) to
/// `out`: the answer a conversation carries into its next turn. Only called when a request
/// asks for its answer, so the hot path never copies strings.
pub(crate) fn append_text(data: &[u8], out: &mut String) {
    #[derive(Deserialize)]
    struct Ev {
        #[serde(default)]
        choices: Vec<Ch>,
    }
    #[derive(Deserialize)]
    struct Ch {
        #[serde(default)]
        text: Option<String>,
        #[serde(default)]
        delta: Option<De>,
    }
    #[derive(Deserialize)]
    struct De {
        #[serde(default)]
        content: Option<String>,
    }
    if let Ok(ev) = serde_json::from_slice::<Ev>(data) {
        for c in ev.choices {
            if let Some(t) = c.text {
                out.push_str(&t);
            }
            if let Some(t) = c.delta.and_then(|d| d.content) {
                out.push_str(&t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_text_and_finish_reason() {
        let c = parse_chunk(br#"{"id":"x","choices":[{"index":0,"text":" hi","logprobs":null,"finish_reason":null}],"usage":null}"#).expect("ok");
        assert!(c.content());
        assert!(c.finish_reason.is_none() && c.usage.is_none());
        let c = parse_chunk(br#"{"choices":[{"text":"","finish_reason":"length"}]}"#).expect("ok");
        assert!(!c.content());
        assert_eq!(c.finish_reason.as_deref(), Some("length"));
    }

    #[test]
    fn role_only_and_empty_content_do_not_count() {
        for s in [
            &br#"{"choices":[{"delta":{"role":"assistant"}}]}"#[..],
            br#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#,
            br#"{"choices":[{"delta":{"content":null,"tool_calls":[]}}]}"#,
            br#"{"choices":[]}"#,
            br#"{"choices":null}"#,
        ] {
            assert!(
                !parse_chunk(s).expect("parses").content(),
                "{}",
                String::from_utf8_lossy(s)
            );
        }
    }

    #[test]
    fn content_reasoning_and_tool_calls_count() {
        for s in [
            &br#"{"choices":[{"delta":{"content":"a\nb \u00e9"}}]}"#[..],
            br#"{"choices":[{"delta":{"reasoning_content":"think"}}]}"#,
            br#"{"choices":[{"delta":{"reasoning":"think"}}]}"#,
            br#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}]}"#,
        ] {
            assert!(
                parse_chunk(s).expect("parses").content(),
                "{}",
                String::from_utf8_lossy(s)
            );
        }
    }

    #[test]
    fn cached_prompt_tokens_from_usage_and_timings() {
        let c = parse_chunk(br#"{"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":32}},"timings":{"prompt_n":8,"cache_n":32}}"#).expect("ok");
        let u = c.usage.expect("usage");
        assert_eq!(
            u.prompt_tokens_details.and_then(|d| d.cached_tokens),
            Some(32)
        );
        assert_eq!(c.timings.and_then(|t| t.cache_n), Some(32));
    }

    #[test]
    fn usage_timings_and_errors() {
        let c = parse_chunk(br#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12,"prompt_tokens_details":null},"timings":{"prompt_n":5,"prompt_ms":1.5,"predicted_n":7,"predicted_per_token_ms":10,"queue_ms":0.25}}"#).expect("ok");
        assert_eq!(
            c.usage,
            Some(Usage {
                prompt_tokens: 5,
                completion_tokens: 7,
                ..Default::default()
            })
        );
        let t = c.timings.expect("timings");
        assert_eq!((t.prompt_n, t.predicted_n), (Some(5), Some(7)));
        assert_eq!(
            (t.predicted_per_token_ms, t.queue_ms),
            (Some(10.0), Some(0.25))
        );
        let c = parse_chunk(br#"{"object":"error","message":"too long","code":400}"#).expect("ok");
        assert!(c.error_object && c.error.is_none());
        assert!(
            !parse_chunk(br#"{"object":"text_completion","choices":[]}"#)
                .expect("ok")
                .error_object
        );
        let c = parse_chunk(br#"{"error":{"message":"overloaded","code":503}}"#).expect("ok");
        assert!(c.error.is_some());
        assert!(
            parse_chunk(br#"{"error":null,"choices":[]}"#)
                .expect("ok")
                .error
                .is_none()
        );
    }

    #[test]
    fn an_empty_finish_reason_is_no_finish() {
        // TGI db931fcf router/src/server.rs:857-875: every completions chunk but the last has
        // `"finish_reason": ""` (CompletionComplete's `String::new()`); the last the reason.
        let mid = br#"{"object":"text_completion","id":"","created":1764583200,"model":"m","system_fingerprint":"3.3.7-native","choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":""}]}"#;
        let c = parse_chunk(mid).expect("ok");
        assert!(c.content());
        assert_eq!(c.finish_reason, None);
        let last = br#"{"object":"text_completion","id":"","created":1764583200,"model":"m","system_fingerprint":"3.3.7-native","choices":[{"index":0,"text":".","logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}"#;
        assert_eq!(
            parse_chunk(last).expect("ok").finish_reason.as_deref(),
            Some("length")
        );
    }

    #[test]
    fn malformed_json_is_an_error() {
        assert!(parse_chunk(b"{\"choices\":[{\"text\":").is_err());
        assert!(parse_chunk(b"not json").is_err());
        assert!(parse_chunk(br#"{"choices":{"text":"x"}}"#).is_err());
    }
}
