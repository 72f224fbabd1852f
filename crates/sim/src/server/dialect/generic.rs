//! The simulator's own dialect: its endpoints as they were before personalities (the
//! generation chunks come from `server::encode`, the simulator's fast path).

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::server::AppState;
use crate::server::endpoints;

pub(super) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/health", get(endpoints::health))
        .route("/v1/models", get(endpoints::models))
        .route("/tokenize", post(endpoints::tokenize))
        .route("/detokenize", post(endpoints::detokenize))
        .route("/server_info", get(endpoints::info))
}
