//! OpenAI-style JSON errors: `{"error": {"message", "type", "param", "code"}}`, where
//! `code` is the HTTP status as a number (as vLLM does). An engine personality restyles the
//! body in its own shape (see `Dialect::restyle`): every error response carries an
//! [`ErrorNote`] extension for that.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An error answer.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status it is sent with.
    pub status: StatusCode,
    /// What went wrong, as the client reads it.
    pub message: String,
    /// The request failed schema validation (bad JSON, a missing, unknown or mistyped
    /// field), as opposed to a well-formed request the server refuses; engines built on
    /// pydantic answer the two differently.
    pub validation: bool,
    /// A request too long for the context: (prompt tokens, max_tokens, the window).
    pub context: Option<(u64, u64, u64)>,
}

/// What an error response was about, for a personality to restyle its body.
#[derive(Debug, Clone)]
pub struct ErrorNote {
    /// The HTTP status.
    pub status: StatusCode,
    /// The message.
    pub message: String,
    /// A schema validation failure ([`ApiError::validation`]).
    pub validation: bool,
    /// A request too long for the context ([`ApiError::context`]).
    pub context: Option<(u64, u64, u64)>,
}

impl ApiError {
    /// An error with this status and message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            validation: false,
            context: None,
        }
    }

    /// A request too long for the context window.
    pub fn context(message: impl Into<String>, prompt: u64, max: u64, limit: u64) -> Self {
        ApiError {
            context: Some((prompt, max, limit)),
            ..ApiError::bad_request(message)
        }
    }

    /// A 400 refusal of a well-formed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// A request that does not fit the request schema.
    pub fn invalid(message: impl Into<String>) -> Self {
        ApiError {
            validation: true,
            ..ApiError::bad_request(message)
        }
    }

    /// 503: the server is not ready yet.
    pub fn not_ready() -> Self {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the server is starting up")
    }

    /// The simulator's own `type` for a status.
    pub fn kind(status: StatusCode) -> &'static str {
        match status {
            StatusCode::BAD_REQUEST | StatusCode::PAYLOAD_TOO_LARGE => "invalid_request_error",
            StatusCode::NOT_FOUND => "not_found_error",
            StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
            StatusCode::UNAUTHORIZED => "authentication_error",
            StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
            StatusCode::SERVICE_UNAVAILABLE => "service_unavailable",
            _ => "server_error",
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({
            "error": {
                "message": self.message,
                "type": ApiError::kind(self.status),
                "param": null,
                "code": self.status.as_u16(),
            }
        });
        let mut resp = (self.status, Json(body)).into_response();
        resp.extensions_mut().insert(ErrorNote {
            status: self.status,
            message: self.message,
            validation: self.validation,
            context: self.context,
        });
        resp
    }
}
