//! The simulator's own dialect: its endpoints as they were before personalities (the
//! generation chunks come from `server::encode`, the simulator's fast path).

use std::sync::Arc;

use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::Profile;
use crate::dialect::Served;
use crate::dialect::api_error::{ApiError, ErrorNote};
use crate::dialect::request::{
    Api, GenRequest, Rules, check_model, parse_generation, render_messages,
};
use crate::dialect::tokenize::{detokenize_body, ids, prompt_ids, tokenize_body};
use crate::dialect::{ChunkShape, Ctx, Dialect, Host, Readiness, api_prefix};

/// The simulator's own dialect (`--engine generic`).
pub(crate) struct Generic;

impl Dialect for Generic {
    fn profile(&self) -> &'static Profile {
        &super::GENERIC
    }

    fn about(&self) -> String {
        "The simulator's own dialect".into()
    }

    fn readiness(&self) -> Readiness {
        Readiness::Generic
    }

    fn routes(&self) -> Router<Arc<Host>> {
        Router::new()
            .route("/health", get(health))
            .route("/v1/models", get(models))
            .route("/tokenize", post(tokenize))
            .route("/detokenize", post(detokenize))
            .route("/server_info", get(server_info))
    }

    fn check(&self, _: Api, _: &Map<String, Value>, _: &Served) -> Result<Rules, ApiError> {
        Ok(Rules::generic())
    }

    /// Any body `parse_generation` reads, with the generic rules (no object check first).
    fn admit(&self, api: Api, body: &[u8], config: &Served) -> Result<GenRequest, ApiError> {
        parse_generation(api, body, config, &Rules::generic())
    }

    fn shape(&self, _: Ctx, _: &Served) -> Option<Box<dyn ChunkShape>> {
        None
    }

    /// `cmpl-`/`chatcmpl-` and one 16-digit hex id.
    fn response_id(&self, api: Api, hash: u64) -> String {
        format!("{}-{hash:016x}", api_prefix(api))
    }

    fn restyles(&self) -> bool {
        false
    }

    /// The simulator's own error shape, as `ApiError` writes it.
    fn error_body(&self, note: &ErrorNote) -> (StatusCode, String) {
        let body = json!({"error": {
            "message": note.message,
            "type": ApiError::kind(note.status),
            "param": null,
            "code": note.status.as_u16(),
        }});
        (note.status, body.to_string())
    }

    /// The error response itself (the generic dialect does not restyle: never asked).
    fn restyle(&self, note: &ErrorNote) -> Response {
        ApiError::new(note.status, note.message.clone()).into_response()
    }
}

/// `GET /server_info`: the whole configuration, as `/v1/sim/info`.
async fn server_info(State(st): State<Arc<Host>>) -> Response {
    Json(st.info()).into_response()
}

/// `GET /health`: 200 with an empty body once ready, 503 before.
async fn health(State(st): State<Arc<Host>>) -> Response {
    if st.ready() {
        StatusCode::OK.into_response()
    } else {
        ApiError::not_ready().into_response()
    }
}

/// `GET /v1/models`.
async fn models(State(st): State<Arc<Host>>) -> Response {
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
            "max_model_len": st.config.max_model_len,
        }],
    }))
    .into_response()
}

/// `POST /tokenize`: `{"prompt": text}`, `{"content": text}` (llama.cpp) or
/// `{"messages": [...]}` (chat template applied) → `{"tokens", "count", "max_model_len"}`.
async fn tokenize(State(st): State<Arc<Host>>, body: Result<Bytes, BytesRejection>) -> Response {
    match tokenize_inner(&st, body) {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

fn tokenize_inner(st: &Host, body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
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
        "max_model_len": st.config.max_model_len,
    }))
    .into_response())
}

/// `POST /detokenize`: `{"tokens": [ids]}` → `{"prompt": text, "content": text}`.
async fn detokenize(State(st): State<Arc<Host>>, body: Result<Bytes, BytesRejection>) -> Response {
    let run = || -> Result<Response, ApiError> {
        let (model, text) = detokenize_body(&st, body)?;
        check_model(model.as_deref(), &st.config)?;
        Ok(Json(json!({ "prompt": text, "content": text })).into_response())
    };
    run().unwrap_or_else(IntoResponse::into_response)
}
