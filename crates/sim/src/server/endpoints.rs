//! The simulator's own endpoints (`/v1/sim/info`, `/v1/sim/stats`) and the fallbacks; an
//! engine's endpoints are its dialect's (`dialect`).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::api_error::ApiError;

/// `GET /v1/sim/info`: the whole configuration.
pub(crate) async fn info(State(st): State<Arc<AppState>>) -> Response {
    Json(st.info()).into_response()
}

/// `GET /v1/sim/stats`: live counters.
pub(crate) async fn stats(State(st): State<Arc<AppState>>) -> Response {
    Json(st.stats.snapshot()).into_response()
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
