//! Request bodies, serialised once before the trial starts (nothing is built on the send
//! path but the HTTP request around these bytes).

use bytes::Bytes;
use serde::Serialize;

use super::config::{ApiKind, LoadConfig, MinTokens, Target};
use crate::dataset::{ChatMessage, ContentPart, Prompt, PromptBody};

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Input<'a> {
    Prompt { prompt: &'a str },
    Messages { messages: MessagesRef<'a> },
}

#[derive(Serialize)]
#[serde(untagged)]
enum MessagesRef<'a> {
    One([ChatMessageRef<'a>; 1]),
    Many(&'a [ChatMessage]),
}

#[derive(Serialize)]
struct ChatMessageRef<'a> {
    role: &'a str,
    content: &'a str,
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    #[serde(flatten)]
    input: Input<'a>,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    temperature: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ignore_eos: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_tokens: Option<u32>,
    /// transformers serve's `generation_config`: a JSON string of `GenerationConfig` fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    generation_config: Option<String>,
}

/// A prompt the target's API cannot send.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// A chat prompt for the completions API.
    #[error("prompt {index} has chat messages but the target API is `completions`")]
    MessagesToCompletions {
        /// The prompt, 0-based.
        index: usize,
    },
    /// A prompt with images for the completions API.
    #[error(
        "prompt {index} has images but the target API is `completions`: images go in chat messages"
    )]
    ImagesToCompletions {
        /// The prompt, 0-based.
        index: usize,
    },
    /// A prompt asking for no output.
    #[error("prompt {index} asks for max_tokens = 0")]
    ZeroMaxTokens {
        /// The prompt, 0-based.
        index: usize,
    },
    /// A body that could not be serialised.
    #[error("serialising request {index}: {message}")]
    Serialise {
        /// The request, 0-based.
        index: usize,
        /// What serde said.
        message: String,
    },
}

/// The JSON body for `prompt` (position `index`, for error messages).
pub fn build_body(
    target: &Target,
    cfg: &LoadConfig,
    prompt: &Prompt,
    index: usize,
) -> Result<Bytes, BodyError> {
    if prompt.max_tokens == 0 {
        return Err(BodyError::ZeroMaxTokens { index });
    }
    if !prompt.images.is_empty() {
        return image_body(target, cfg, prompt, index);
    }
    text_body(target, cfg, prompt, index)
}

/// [`build_body`] of `prompt`'s text alone (its images, if any, left out).
fn text_body(
    target: &Target,
    cfg: &LoadConfig,
    prompt: &Prompt,
    index: usize,
) -> Result<Bytes, BodyError> {
    let input = match (&prompt.body, target.api) {
        (PromptBody::Text(t), ApiKind::Completions) => Input::Prompt { prompt: t },
        (PromptBody::Text(t), ApiKind::Chat) => Input::Messages {
            messages: MessagesRef::One([ChatMessageRef {
                role: "user",
                content: t,
            }]),
        },
        (PromptBody::Messages(m), ApiKind::Chat) => Input::Messages {
            messages: MessagesRef::Many(m),
        },
        (PromptBody::Messages(_), ApiKind::Completions) => {
            return Err(BodyError::MessagesToCompletions { index });
        }
    };
    let body = Body {
        model: &target.model,
        input,
        max_tokens: prompt.max_tokens,
        stream: true,
        stream_options: cfg.stream_options.then_some(StreamOptions {
            include_usage: true,
        }),
        temperature: cfg.temperature,
        ignore_eos: cfg.ignore_eos.then_some(true),
        min_tokens: match cfg.min_tokens {
            MinTokens::Omit => None,
            MinTokens::MatchMax => Some(prompt.max_tokens),
            MinTokens::Value(v) => Some(v),
        },
        // transformers 5.17/5.24 cli/serving/utils.py `_build_generation_config`:
        // `GenerationConfig(**json.loads(body["generation_config"]))`.
        generation_config: cfg.generation_config.then(|| {
            format!(
                "{{\"min_new_tokens\": {n}, \"max_new_tokens\": {n}}}",
                n = prompt.max_tokens
            )
        }),
    };
    let ser = |e: serde_json::Error| BodyError::Serialise {
        index,
        message: e.to_string(),
    };
    if cfg.extra_body.is_empty() {
        return serde_json::to_vec(&body).map(Bytes::from).map_err(ser);
    }
    // `request_body`: a JSON merge patch over the body servebench builds (docs/spec.md,
    // "Request bodies"); a `null` removes a field.
    let mut value = serde_json::to_value(&body).map_err(ser)?;
    if let serde_json::Value::Object(map) = &mut value {
        servebench_spec::request_body::apply(map, &cfg.extra_body);
    }
    serde_json::to_vec(&value).map(Bytes::from).map_err(ser)
}

/// A chat request whose last user message carries `prompt.images` as `image_url` parts
/// after its text (the OpenAI content-part form every engine that takes images reads).
fn image_body(
    target: &Target,
    cfg: &LoadConfig,
    prompt: &Prompt,
    index: usize,
) -> Result<Bytes, BodyError> {
    use serde_json::{Value, json};
    if target.api != ApiKind::Chat {
        return Err(BodyError::ImagesToCompletions { index });
    }
    // The text body first (without copying the prompt's images), then its last user
    // message's content becomes parts.
    let bytes = text_body(target, cfg, prompt, index)?;
    let ser = |e: serde_json::Error| BodyError::Serialise {
        index,
        message: e.to_string(),
    };
    let mut body: Value = serde_json::from_slice(&bytes).map_err(ser)?;
    let image = |u: &String| json!({"type": "image_url", "image_url": {"url": u}});
    let parts_of = |text: &Value| match &prompt.parts {
        // A prompt file's own order of text and images (an OpenAI-style `content` array).
        Some(layout) => Value::Array(
            layout
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Text(t) => Some(json!({"type": "text", "text": t})),
                    ContentPart::Image(i) => prompt.images.get(*i).map(image),
                })
                .collect(),
        ),
        None => {
            let mut parts = vec![json!({"type": "text", "text": text})];
            parts.extend(prompt.images.iter().map(image));
            Value::Array(parts)
        }
    };
    if let Some(last) = body
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .and_then(|m| m.iter_mut().rev().find(|m| m["role"] == "user"))
    {
        let text = last["content"].take();
        last["content"] = parts_of(&text);
    }
    serde_json::to_vec(&body).map(Bytes::from).map_err(ser)
}

/// The output length a request is meant to produce, when the configuration fixes it.
pub fn output_target(cfg: &LoadConfig, prompt: &Prompt) -> Option<u32> {
    match cfg.min_tokens {
        _ if cfg.ignore_eos || cfg.generation_config => Some(prompt.max_tokens),
        MinTokens::MatchMax => Some(prompt.max_tokens),
        MinTokens::Value(v) if v >= prompt.max_tokens => Some(prompt.max_tokens),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(api: ApiKind) -> Target {
        Target {
            base_url: "http://x".into(),
            api,
            model: "m".into(),
            api_key: None,
            headers: Vec::new(),
            ca_file: None,
        }
    }

    #[test]
    fn completions_body() {
        let mut cfg = LoadConfig::new(1);
        cfg.min_tokens = MinTokens::MatchMax;
        cfg.extra_body.insert("top_k".into(), 1.into());
        let b = build_body(
            &target(ApiKind::Completions),
            &cfg,
            &Prompt::text("hi", 8),
            0,
        )
        .expect("builds");
        let v: serde_json::Value = serde_json::from_slice(&b).expect("json");
        assert_eq!(
            v,
            serde_json::json!({"model":"m","prompt":"hi","max_tokens":8,"stream":true,
                "stream_options":{"include_usage":true},"temperature":0.0,"ignore_eos":true,
                "min_tokens":8,"top_k":1})
        );
    }

    #[test]
    fn the_request_body_is_merged_over_the_body_and_null_removes() {
        let mut cfg = LoadConfig::new(1);
        cfg.extra_body = serde_json::json!({"chat_template_kwargs": {"enable_thinking": false},
            "stream_options": {"continuous_usage_stats": true}, "ignore_eos": null,
            "top_k": 20})
        .as_object()
        .expect("object")
        .clone();
        let b = build_body(&target(ApiKind::Chat), &cfg, &Prompt::text("hi", 8), 0).expect("ok");
        let v: serde_json::Value = serde_json::from_slice(&b).expect("json");
        assert_eq!(
            v,
            serde_json::json!({"model":"m","messages":[{"role":"user","content":"hi"}],
                "max_tokens":8,"stream":true,
                "stream_options":{"include_usage":true,"continuous_usage_stats":true},
                "temperature":0.0,"chat_template_kwargs":{"enable_thinking":false},"top_k":20})
        );
    }

    #[test]
    fn images_are_image_url_parts_after_the_text_of_the_user_message() {
        let cfg = LoadConfig::new(1);
        let p = Prompt {
            images: vec![
                "data:image/png;base64,AAAA".into(),
                "https://x/y.png".into(),
            ],
            ..Prompt::text("describe", 4)
        };
        let b = build_body(&target(ApiKind::Chat), &cfg, &p, 0).expect("ok");
        let v: serde_json::Value = serde_json::from_slice(&b).expect("json");
        assert_eq!(
            v["messages"],
            serde_json::json!([{"role": "user", "content": [
                {"type": "text", "text": "describe"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}])
        );
        assert_eq!(v["max_tokens"], 4);
        let err = build_body(&target(ApiKind::Completions), &cfg, &p, 2).unwrap_err();
        assert_eq!(err, BodyError::ImagesToCompletions { index: 2 });
    }

    #[test]
    fn a_prompt_files_part_order_is_kept() {
        // Fails before `Prompt::parts`: images always went after the text.
        let p = Prompt {
            images: vec!["https://x/a.png".into(), "https://x/b.png".into()],
            parts: Some(vec![
                ContentPart::Image(1),
                ContentPart::Text("compare".into()),
                ContentPart::Image(0),
            ]),
            ..Prompt::text("compare", 4)
        };
        let b = build_body(&target(ApiKind::Chat), &LoadConfig::new(1), &p, 0).expect("ok");
        let v: serde_json::Value = serde_json::from_slice(&b).expect("json");
        assert_eq!(
            v["messages"][0]["content"],
            serde_json::json!([
                {"type": "image_url", "image_url": {"url": "https://x/b.png"}},
                {"type": "text", "text": "compare"},
                {"type": "image_url", "image_url": {"url": "https://x/a.png"}}])
        );
    }

    #[test]
    fn chat_body_wraps_text_and_rejects_messages_to_completions() {
        let mut cfg = LoadConfig::new(1);
        cfg.ignore_eos = false;
        let b = build_body(&target(ApiKind::Chat), &cfg, &Prompt::text("hi", 4), 0).expect("ok");
        let v: serde_json::Value = serde_json::from_slice(&b).expect("json");
        assert_eq!(
            v["messages"],
            serde_json::json!([{"role":"user","content":"hi"}])
        );
        assert!(v.get("ignore_eos").is_none());
        let msgs = Prompt {
            body: PromptBody::Messages(vec![ChatMessage {
                role: "user".into(),
                content: "x".into(),
            }]),
            ..Prompt::text("", 4)
        };
        let err = build_body(&target(ApiKind::Completions), &cfg, &msgs, 3).unwrap_err();
        assert_eq!(err, BodyError::MessagesToCompletions { index: 3 });
        assert!(output_target(&cfg, &msgs).is_none());
    }

    #[test]
    fn a_body_for_transformers_serve_has_only_fields_it_takes() {
        // transformers 5.24.0 cli/serving/utils.py:1183-1187 answers 422 "Unexpected fields in
        // the request" to anything outside its TypedDict (e.g. `ignore_eos`, `min_tokens`);
        // `generation_config` is a JSON string (utils.py:1246-1247). The profile's plan:
        let plan = servebench_engines::profile(servebench_engines::Engine::Transformers)
            .expect("profile")
            .body_plan(true, true);
        let mut cfg = LoadConfig::new(1);
        cfg.ignore_eos = plan.ignore_eos;
        cfg.min_tokens = if plan.min_tokens {
            MinTokens::MatchMax
        } else {
            MinTokens::Omit
        };
        cfg.stream_options = plan.stream_options;
        cfg.generation_config = plan.generation_config;
        let b = build_body(&target(ApiKind::Chat), &cfg, &Prompt::text("hi", 6), 0).expect("ok");
        let v: serde_json::Value = serde_json::from_slice(&b).expect("json");
        let keys: Vec<&str> = v
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        // The chat TypedDict (openai CompletionCreateParamsStreaming) plus transformers' own
        // `generation_config`, `seed`, `chat_template_kwargs`.
        for k in &keys {
            assert!(
                [
                    "model",
                    "messages",
                    "max_tokens",
                    "stream",
                    "stream_options",
                    "temperature",
                    "generation_config"
                ]
                .contains(k),
                "{k} would be refused: {v}"
            );
        }
        let gc: serde_json::Value =
            serde_json::from_str(v["generation_config"].as_str().expect("a JSON string"))
                .expect("valid JSON");
        assert_eq!(
            gc,
            serde_json::json!({"min_new_tokens": 6, "max_new_tokens": 6})
        );
        assert_eq!(output_target(&cfg, &Prompt::text("hi", 6)), Some(6));
        cfg.stream_options = false;
        let b = build_body(&target(ApiKind::Chat), &cfg, &Prompt::text("hi", 6), 0).expect("ok");
        assert!(!String::from_utf8_lossy(&b).contains("stream_options"));
    }
}
