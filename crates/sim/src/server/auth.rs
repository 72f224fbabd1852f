//! `--api-key`: the OpenAI-style bearer check of vLLM's `--api-key`. `/health`, the
//! simulator's own `/v1/sim/*` and `/server_info` stay open, so readiness probes and verify
//! rules need no key.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::api_error::ApiError;

fn protected(path: &str) -> bool {
    ((path.starts_with("/v1/") && !path.starts_with("/v1/sim/"))
        || path == "/tokenize"
        || path == "/detokenize"
        || path == "/_internal/tokenize")
        // llama.cpp's health probe is public under both paths (server.cpp:251-252).
        && path != "/v1/health"
}

/// Answers 401 when a key is configured, the path is protected, and the request does not
/// carry `Authorization: Bearer <key>`.
pub(crate) async fn require_key(
    State(st): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    if let Some(key) = &st.config.api_key
        && protected(req.uri().path())
    {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if given != Some(key.0.as_str()) {
            return ApiError::new(StatusCode::UNAUTHORIZED, "invalid or missing API key")
                .into_response();
        }
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::protected;

    #[test]
    fn generation_and_tokenizer_are_protected_probes_are_not() {
        for p in [
            "/v1/completions",
            "/v1/chat/completions",
            "/v1/models",
            "/tokenize",
        ] {
            assert!(protected(p), "{p}");
        }
        for p in ["/health", "/v1/sim/info", "/v1/sim/stats", "/server_info"] {
            assert!(!protected(p), "{p}");
        }
    }
}
