//! Request bodies of the generation endpoints and their validation.
//!
//! Unknown fields (temperature, top_p, …) are accepted and ignored, as OpenAI clients send
//! many; fields the simulator acts on are checked strictly.

use axum::http::StatusCode;
use serde::Deserialize;

use super::api_error::ApiError;
use crate::dialect::Served;
use crate::dialect::tokenizer::{self, VOCAB_SIZE};
use crate::{Field, LogprobsAsk, Profile};
use context::fit_context;

/// Which OpenAI API a request came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `/v1/completions`.
    Completions,
    /// `/v1/chat/completions`.
    Chat,
}

#[derive(Debug, Default, Deserialize)]
/// `stream_options`.
pub struct StreamOptions {
    #[serde(default)]
    include_usage: Option<bool>,
}

/// A prompt of `/v1/completions` (or `/tokenize`): text, token ids, or a batch of one.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum PromptInput {
    /// One text.
    Text(String),
    /// One list of token ids.
    Tokens(Vec<u64>),
    /// A batch of texts.
    Texts(Vec<String>),
    /// A batch of token id lists.
    TokenLists(Vec<Vec<u64>>),
}

/// Chat message content: a string or a list of parts, of which text parts count.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// A string.
    Text(String),
    /// A list of parts (text, `image_url`, …).
    Parts(Vec<ContentPart>),
}

#[derive(Debug, Deserialize)]
/// One part of a chat message's content.
pub struct ContentPart {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

/// The `image_url` parts of `messages`.
pub fn image_parts(messages: &[ChatMessage]) -> usize {
    messages
        .iter()
        .filter_map(|m| match &m.content {
            Some(Content::Parts(p)) => Some(p),
            _ => None,
        })
        .flatten()
        .filter(|p| p.kind.as_deref() == Some("image_url"))
        .count()
}

#[derive(Debug, Deserialize)]
/// One chat message: its role and content.
pub struct ChatMessage {
    role: String,
    #[serde(default)]
    content: Option<Content>,
}

#[derive(Debug, Deserialize)]
struct GenerationBody {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    prompt: Option<PromptInput>,
    #[serde(default)]
    messages: Option<Vec<ChatMessage>>,
    #[serde(default)]
    max_tokens: Option<u64>,
    #[serde(default)]
    max_completion_tokens: Option<u64>,
    #[serde(default)]
    min_tokens: Option<u64>,
    #[serde(default)]
    ignore_eos: Option<bool>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
    #[serde(default)]
    n: Option<u64>,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    logprobs: Option<Logprobs>,
    #[serde(default)]
    top_logprobs: Option<u64>,
    #[serde(default)]
    return_tokens_as_token_ids: Option<bool>,
    #[serde(default)]
    return_token_ids: Option<bool>,
}

/// `logprobs`: a count (completions) or a switch (chat, with `top_logprobs`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Logprobs {
    On(bool),
    Top(u64),
}

/// A validated generation request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenRequest {
    /// The API it came through.
    pub api: Api,
    /// The model the request named, if any.
    pub model: Option<String>,
    /// Prompt tokens, as the engine counts them.
    pub prompt_tokens: u32,
    /// Most tokens to generate.
    pub max_tokens: u32,
    /// Fewest tokens to generate before a simulated EOS.
    pub min_tokens: u32,
    /// Never stop at a simulated EOS.
    pub ignore_eos: bool,
    /// Streamed (SSE).
    pub stream: bool,
    /// `stream_options.include_usage`: a usage chunk ends the stream.
    pub include_usage: bool,
    /// `temperature: 0`: greedy decoding.
    pub greedy: bool,
    /// Log-probabilities asked for, with this many most likely tokens each.
    pub logprobs: Option<u32>,
    /// Log-probabilities name tokens `token_id:N` (vLLM's `return_tokens_as_token_ids`).
    pub tokens_as_ids: bool,
    /// Chunks carry their token ids (vLLM's and SGLang's `return_token_ids`).
    pub token_ids: bool,
    /// Its scheduling priority where the engine counts requests by priority (SGLang with
    /// `--enable-priority-scheduling`); set by the dialect ([`crate::dialect::Dialect::adapt`]).
    pub priority: Option<i64>,
}

/// How an engine reads the fields every dialect shares ([`crate::dialect::Dialect::admit`]
/// picks them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// A request naming another model gets 404 (vLLM: `The model ... does not exist.`).
    pub check_model: bool,
    /// `stream_options` without `stream: true` is refused (vLLM, TensorRT-LLM).
    pub stream_options_need_stream: bool,
    /// `ignore_eos` is acted on; otherwise it is dropped (TGI has no such field).
    pub ignore_eos: bool,
    /// `min_tokens` is acted on; otherwise it is dropped (llama.cpp and TGI have none).
    pub min_tokens: bool,
    /// `stream_options: {}` means include_usage (TensorRT-LLM's `StreamOptions` default).
    pub usage_by_default: bool,
    /// How the context window limits a request.
    pub context: ContextRule,
    /// `logprobs` (and `top_logprobs`) are answered; otherwise ignored.
    pub logprobs: bool,
    /// Chat `top_logprobs` when `logprobs: true` comes without it (llama.cpp: 20).
    pub top_logprobs_default: u64,
    /// `return_tokens_as_token_ids` is acted on (vLLM).
    pub tokens_as_ids: bool,
    /// `return_token_ids` is acted on (vLLM, SGLang).
    pub token_ids: bool,
    /// `image_url` content parts are taken, each `--image-tokens` prompt tokens (every
    /// engine whose source was read to take them); otherwise a request with one is refused.
    pub images: bool,
}

/// How the context window (`--max-model-len`) limits a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextRule {
    /// `prompt + max_tokens` beyond the window is refused (vLLM, SGLang, TGI, TRT-LLM).
    Total,
    /// Only a prompt that fills the window is refused; a longer request is cut short when
    /// the window is full, `finish_reason: "length"` (llama.cpp without context shift).
    PromptOnly,
    /// Only a prompt that fills the window is refused; `max_tokens` is lowered to what the
    /// window leaves after the prompt, silently (vLLM 0.33.0).
    CutMaxTokens,
}

impl Rules {
    /// The rules its profile decides on `api`, the rest the simulator's own
    /// ([`Rules::generic`]): `ignore_eos` and `min_tokens` acted on where the profile says
    /// [`Field::Honoured`], `logprobs` answered where [`crate::OutputApi::logprobs`] is not
    /// [`LogprobsAsk::None`], `return_token_ids` where it names [`crate::OutputApi::token_ids`],
    /// images where [`crate::RequestFacts::images`]. A dialect overrides only what its profile
    /// does not say.
    pub fn of(profile: &Profile, api: Api) -> Self {
        let r = &profile.request;
        let out = profile.outputs.api(api == Api::Chat);
        Rules {
            ignore_eos: r.ignore_eos == Field::Honoured,
            min_tokens: r.min_tokens == Field::Honoured,
            logprobs: out.logprobs != LogprobsAsk::None,
            token_ids: out.token_ids.is_some(),
            images: r.images,
            ..Rules::generic()
        }
    }

    /// The simulator's own dialect: every shared field acted on, models checked.
    pub fn generic() -> Self {
        Rules {
            check_model: true,
            stream_options_need_stream: true,
            ignore_eos: true,
            min_tokens: true,
            usage_by_default: false,
            context: ContextRule::Total,
            logprobs: true,
            top_logprobs_default: 0,
            tokens_as_ids: false,
            token_ids: false,
            images: true,
        }
    }
}

/// Parses JSON, naming the problem in the error.
pub fn parse_json<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::invalid(format!("invalid JSON body: {e}")))
}

/// Checks that the request names this server's model, when it names one.
pub fn check_model(model: Option<&str>, config: &Served) -> Result<(), ApiError> {
    match model {
        Some(m) if m != config.model => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!(
                "The model `{m}` does not exist; this server serves `{}`.",
                config.model
            ),
        )),
        _ => Ok(()),
    }
}

/// Token count of a completion prompt.
pub fn prompt_tokens(prompt: &PromptInput) -> Result<usize, ApiError> {
    let check_ids = |ids: &[u64]| match ids.iter().find(|&&id| id >= u64::from(VOCAB_SIZE)) {
        Some(id) => Err(ApiError::bad_request(format!(
            "token id {id} is outside the vocabulary [0, {VOCAB_SIZE})"
        ))),
        None => Ok(ids.len()),
    };
    let batch = |n: usize| {
        ApiError::bad_request(format!(
            "batched prompts are not supported by the simulator (got {n}); send one prompt per request"
        ))
    };
    match prompt {
        PromptInput::Text(t) => Ok(tokenizer::count(t)),
        PromptInput::Tokens(ids) => check_ids(ids),
        PromptInput::Texts(v) => match v.as_slice() {
            [t] => Ok(tokenizer::count(t)),
            _ => Err(batch(v.len())),
        },
        PromptInput::TokenLists(v) => match v.as_slice() {
            [ids] => check_ids(ids),
            _ => Err(batch(v.len())),
        },
    }
}

/// The chat template applied to `messages` (see [`tokenizer`]).
pub fn render_messages(messages: &[ChatMessage]) -> String {
    let texts: Vec<(&str, String)> = messages
        .iter()
        .map(|m| {
            let text = match &m.content {
                None => String::new(),
                Some(Content::Text(t)) => t.clone(),
                Some(Content::Parts(parts)) => parts
                    .iter()
                    .filter_map(|p| p.text.as_deref())
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            (m.role.as_str(), text)
        })
        .collect();
    tokenizer::render_chat(texts.iter().map(|(r, t)| (*r, t.as_str())))
}

fn to_u32(v: u64, what: &str) -> Result<u32, ApiError> {
    u32::try_from(v).map_err(|_| ApiError::bad_request(format!("{what} is too large: {v}")))
}

/// The token ids of a generation request's prompt (as [`parse_generation`] counts them),
/// for the prefix cache; empty when the body does not parse (it was refused before).
pub fn prompt_ids(api: Api, body: &[u8]) -> Vec<u32> {
    let Ok(b) = serde_json::from_slice::<GenerationBody>(body) else {
        return Vec::new();
    };
    let ids = |v: &[u64]| v.iter().map(|&i| i as u32).collect();
    match api {
        Api::Completions => match b.prompt {
            Some(PromptInput::Text(t)) => tokenizer::encode(&t),
            Some(PromptInput::Texts(v)) => {
                v.first().map(|t| tokenizer::encode(t)).unwrap_or_default()
            }
            Some(PromptInput::Tokens(v)) => ids(&v),
            Some(PromptInput::TokenLists(v)) => v.first().map(|l| ids(l)).unwrap_or_default(),
            None => Vec::new(),
        },
        Api::Chat => b
            .messages
            .map(|m| tokenizer::encode(&render_messages(&m)))
            .unwrap_or_default(),
    }
}

/// Parses and validates a generation request, reading the shared fields by `rules`.
pub fn parse_generation(
    api: Api,
    body: &[u8],
    config: &Served,
    rules: &Rules,
) -> Result<GenRequest, ApiError> {
    let b: GenerationBody = parse_json(body)?;
    if rules.check_model {
        check_model(b.model.as_deref(), config)?;
    }
    if b.n.is_some_and(|n| n != 1) {
        return Err(ApiError::bad_request(
            "only n = 1 is supported by the simulator",
        ));
    }
    let prompt = prompt_len(api, &b, config, rules)?;
    let (max_tokens, min_tokens) = lengths(api, &b, config, rules)?;
    let max_tokens = fit_context(rules.context, prompt, max_tokens, config.max_model_len)?;
    let stream = b.stream.unwrap_or(false);
    if rules.stream_options_need_stream && b.stream_options.is_some() && !stream {
        return Err(ApiError::bad_request(
            "stream_options can only be set when stream is true",
        ));
    }
    Ok(GenRequest {
        api,
        prompt_tokens: to_u32(prompt, "prompt length")?,
        max_tokens,
        min_tokens,
        ignore_eos: rules.ignore_eos && b.ignore_eos.unwrap_or(false),
        stream,
        include_usage: b
            .stream_options
            .as_ref()
            .map(|o| o.include_usage.unwrap_or(rules.usage_by_default))
            .unwrap_or(false),
        greedy: b.temperature == Some(0.0),
        logprobs: logprobs(&b, rules)?,
        tokens_as_ids: rules.tokens_as_ids && b.return_tokens_as_token_ids == Some(true),
        token_ids: rules.token_ids && b.return_token_ids == Some(true),
        priority: None,
        model: b.model,
    })
}

/// The prompt's length in tokens: a completions prompt, or the chat messages with their
/// template and each image's tokens.
fn prompt_len(
    api: Api,
    b: &GenerationBody,
    config: &Served,
    rules: &Rules,
) -> Result<u64, ApiError> {
    let len = match api {
        Api::Completions => {
            let p = b
                .prompt
                .as_ref()
                .ok_or_else(|| ApiError::invalid("`prompt` is required"))?;
            prompt_tokens(p)?
        }
        Api::Chat => match b.messages.as_deref() {
            None | Some([]) => {
                return Err(ApiError::invalid("`messages` must be a non-empty list"));
            }
            Some(m) => {
                let images = image_parts(m);
                if images > 0 && !rules.images {
                    return Err(ApiError::bad_request(format!(
                        "this engine ({}) takes no image input",
                        crate::dialect::engine_name(config.wire.engine)
                    )));
                }
                tokenizer::count(&render_messages(m)) + images * config.wire.image_tokens as usize
            }
        },
    };
    if len == 0 {
        return Err(ApiError::bad_request(
            "the prompt must contain at least one token",
        ));
    }
    Ok(len as u64)
}

/// `max_tokens` (chat: `max_completion_tokens` first) and `min_tokens`, where the engine
/// reads it.
fn lengths(
    api: Api,
    b: &GenerationBody,
    config: &Served,
    rules: &Rules,
) -> Result<(u32, u32), ApiError> {
    let max = match api {
        Api::Completions => b.max_tokens,
        Api::Chat => b.max_completion_tokens.or(b.max_tokens),
    };
    let max_tokens = match max {
        Some(0) => return Err(ApiError::bad_request("max_tokens must be at least 1")),
        Some(v) => to_u32(v, "max_tokens")?,
        None => config.default_max_tokens,
    };
    let min_tokens = match rules.min_tokens {
        true => to_u32(b.min_tokens.unwrap_or(0), "min_tokens")?,
        false => 0,
    };
    if min_tokens > max_tokens {
        return Err(ApiError::bad_request(format!(
            "min_tokens ({min_tokens}) must be less than or equal to max_tokens ({max_tokens})"
        )));
    }
    Ok((max_tokens, min_tokens))
}

/// How many alternatives a token's log-probabilities carry, where asked and the engine
/// returns them.
fn logprobs(b: &GenerationBody, rules: &Rules) -> Result<Option<u32>, ApiError> {
    Ok(match (rules.logprobs, &b.logprobs, b.top_logprobs) {
        (false, _, _) | (_, None | Some(Logprobs::On(false)), _) => None,
        (true, Some(Logprobs::On(true)), top) => Some(to_u32(
            top.unwrap_or(rules.top_logprobs_default),
            "top_logprobs",
        )?),
        (true, Some(Logprobs::Top(n)), _) => Some(to_u32(*n, "logprobs")?),
    })
}

mod context;

#[cfg(test)]
mod tests;
