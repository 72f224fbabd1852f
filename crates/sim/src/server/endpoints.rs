//! The small endpoints: health, models, info, stats, tokenize, detokenize, fallbacks.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::json;

use super::AppState;
use super::api_error::ApiError;
use super::wire::{
    ChatMessage, PromptInput, check_model, parse_json, prompt_tokens, render_messages,
};
use crate::tokenizer;

/// `GET /health`: 200 with an empty body once ready, 503 before.
pub(crate) async fn health(State(st): State<Arc<AppState>>) -> Response {
    if st.ready() {
        StatusCode::OK.into_response()
    } else {
        ApiError::not_ready().into_response()
    }
}

/// `GET /v1/models`.
pub(crate) async fn models(State(st): State<Arc<AppState>>) -> Response {
    if !st.serving() {
        return ApiError::not_ready().into_response();
    }
    Json(json!({
        "object": "list",
        "data": [{
            "id": st.config.model,
            "object": "model",
            "created": st.created_unix,
            "owned_by": "servebench-sim",
            "root": st.config.model,
            "max_model_len": st.config.engine.max_model_len,
        }],
    }))
    .into_response()
}

/// `GET /v1/sim/info` and `GET /server_info`: the whole configuration.
pub(crate) async fn info(State(st): State<Arc<AppState>>) -> Response {
    Json(st.info()).into_response()
}

/// `GET /v1/sim/stats`: live counters.
pub(crate) async fn stats(State(st): State<Arc<AppState>>) -> Response {
    Json(st.stats.snapshot()).into_response()
}

/// A tokenize request in any engine's form: `prompt` (vLLM, SGLang, TensorRT-LLM),
/// `content` (llama.cpp), `inputs` (TGI) or `messages` (chat template applied).
#[derive(Debug, Deserialize)]
pub(crate) struct TokenizeBody {
    #[serde(default)]
    pub(crate) model: Option<String>,
    #[serde(default)]
    pub(crate) prompt: Option<PromptInput>,
    #[serde(default)]
    pub(crate) content: Option<PromptInput>,
    #[serde(default)]
    pub(crate) inputs: Option<String>,
    #[serde(default)]
    pub(crate) messages: Option<Vec<ChatMessage>>,
}

/// The parsed body of a tokenize request, once the server serves.
pub(crate) fn tokenize_body(
    st: &AppState,
    body: Result<Bytes, BytesRejection>,
) -> Result<TokenizeBody, ApiError> {
    if !st.serving() {
        return Err(ApiError::not_ready());
    }
    let body = body.map_err(|e| ApiError::new(e.status(), e.body_text()))?;
    parse_json(&body)
}

/// The ids of chat messages after the template.
pub(crate) fn message_ids(m: &[ChatMessage]) -> Vec<u64> {
    ids(&render_messages(m))
}

/// The model and the text of a detokenize request (`{"tokens": [ids]}`).
pub(crate) fn detokenize_body(
    st: &AppState,
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

/// `POST /tokenize`: `{"prompt": text}`, `{"content": text}` (llama.cpp) or
/// `{"messages": [...]}` (chat template applied) → `{"tokens", "count", "max_model_len"}`.
pub(crate) async fn tokenize(
    State(st): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match tokenize_inner(&st, body) {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

fn tokenize_inner(
    st: &AppState,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let b = tokenize_body(st, body)?;
    check_model(b.model.as_deref(), &st.config)?;
    let tokens = match (b.prompt.or(b.content), b.messages) {
        (Some(p), None) => prompt_ids(p)?,
        (None, Some(m)) => ids(&render_messages(&m)),
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "give either `prompt`/`content` or `messages`, not both",
            ));
        }
        (None, None) => {
            return Err(ApiError::bad_request(
                "`prompt`, `content` or `messages` is required",
            ));
        }
    };
    Ok(Json(json!({
        "count": tokens.len(),
        "tokens": tokens,
        "max_model_len": st.config.engine.max_model_len,
    }))
    .into_response())
}

pub(crate) fn ids(text: &str) -> Vec<u64> {
    tokenizer::encode(text).into_iter().map(u64::from).collect()
}

/// The ids of a prompt: text is encoded, token ids are checked and echoed.
pub(crate) fn prompt_ids(p: PromptInput) -> Result<Vec<u64>, ApiError> {
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

/// `POST /detokenize`: `{"tokens": [ids]}` → `{"prompt": text, "content": text}`.
pub(crate) async fn detokenize(
    State(st): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let run = || -> Result<Response, ApiError> {
        let (model, text) = detokenize_body(&st, body)?;
        check_model(model.as_deref(), &st.config)?;
        Ok(Json(json!({ "prompt": text, "content": text })).into_response())
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

/// Unknown paths: 404 in the OpenAI error shape.
pub(crate) async fn not_found(uri: Uri) -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no route for {}", uri.path()),
    )
    .into_response()
}

/// Known paths with the wrong method: 405 in the OpenAI error shape.
pub(crate) async fn method_not_allowed(uri: Uri) -> Response {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("method not allowed for {}", uri.path()),
    )
    .into_response()
}
