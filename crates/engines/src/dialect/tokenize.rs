//! What every dialect's tokenize and detokenize endpoints share: the request body in any
//! engine's form, read once the server serves, and the ids of a prompt or chat.

use axum::extract::rejection::BytesRejection;
use bytes::Bytes;
use serde::Deserialize;

use super::Host;
use crate::dialect::api_error::ApiError;
use crate::dialect::request::{
    ChatMessage, PromptInput, parse_json, prompt_tokens, render_messages,
};
use crate::dialect::tokenizer;

/// A tokenize request in any engine's form: `prompt` (vLLM, SGLang, TensorRT-LLM),
/// `content` (llama.cpp), `inputs` (TGI) or `messages` (chat template applied).
#[derive(Debug, Deserialize)]
pub struct TokenizeBody {
    #[serde(default)]
    /// The model named.
    pub model: Option<String>,
    #[serde(default)]
    /// `prompt` (vLLM, SGLang, TensorRT-LLM).
    pub prompt: Option<PromptInput>,
    #[serde(default)]
    /// `content` (llama.cpp).
    pub content: Option<PromptInput>,
    #[serde(default)]
    /// `inputs` (TGI).
    pub inputs: Option<String>,
    #[serde(default)]
    /// `messages` (the chat template applied).
    pub messages: Option<Vec<ChatMessage>>,
}

/// The parsed body of a tokenize request, once the server serves.
pub fn tokenize_body(
    st: &Host,
    body: Result<Bytes, BytesRejection>,
) -> Result<TokenizeBody, ApiError> {
    if !st.serving() {
        return Err(ApiError::not_ready());
    }
    let body = body.map_err(|e| ApiError::new(e.status(), e.body_text()))?;
    parse_json(&body)
}

/// The ids of chat messages after the template.
pub fn message_ids(m: &[ChatMessage]) -> Vec<u64> {
    ids(&render_messages(m))
}

/// The model and the text of a detokenize request (`{"tokens": [ids]}`).
pub fn detokenize_body(
    st: &Host,
    body: Result<Bytes, BytesRejection>,
) -> Result<(Option<String>, String), ApiError> {
    if !st.serving() {
        return Err(ApiError::not_ready());
    }
    let body = body.map_err(|e| ApiError::new(e.status(), e.body_text()))?;
    let b: DetokenizeBody = parse_json(&body)?;
    let text = tokenizer::decode(&b.tokens).map_err(|e| ApiError::bad_request(e.to_string()))?;
    Ok((b.model, text))
}

/// The ids of `text`.
pub fn ids(text: &str) -> Vec<u64> {
    tokenizer::encode(text).into_iter().map(u64::from).collect()
}

/// The ids of a prompt: text is encoded, token ids are checked and echoed.
pub fn prompt_ids(p: PromptInput) -> Result<Vec<u64>, ApiError> {
    prompt_tokens(&p)?;
    Ok(match p {
        PromptInput::Text(t) => ids(&t),
        PromptInput::Texts(v) => v.first().map(|t| ids(t)).unwrap_or_default(),
        PromptInput::Tokens(v) => v,
        PromptInput::TokenLists(mut v) => v.pop().unwrap_or_default(),
    })
}

#[derive(Debug, Deserialize)]
struct DetokenizeBody {
    #[serde(default)]
    model: Option<String>,
    tokens: Vec<u64>,
}
