//! OpenAI-style JSON errors: `{"error": {"message", "type", "param", "code"}}`, where
//! `code` is the HTTP status as a number (as vLLM does).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An error answer.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub(crate) fn not_ready() -> Self {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the server is starting up")
    }

    fn kind(&self) -> &'static str {
        match self.status {
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
                "type": self.kind(),
                "param": null,
                "code": self.status.as_u16(),
            }
        });
        (self.status, Json(body)).into_response()
    }
}
