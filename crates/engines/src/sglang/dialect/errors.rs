//! How SGLang words a refusal: its error object, FastAPI's own `{"detail"}` for a route
//! not mounted, and its two context-length messages.

use axum::http::StatusCode;

use crate::dialect::api_error::ErrorNote;
use crate::dialect::json::Obj;

/// `{"object": "error", message, type, param, code}`; FastAPI's own `{"detail"}` for a
/// route not mounted (seen in transcripts/0.5.17/version.http, load.http).
pub(super) fn error_body(note: &ErrorNote) -> (StatusCode, String) {
    // The simulator's fallbacks (servebench-sim `endpoints.rs`): no such route, or not this
    // method; Starlette answers them itself, before SGLang's exception handlers.
    if let Some(detail) = [
        ("no route for ", "Not Found"),
        ("method not allowed for ", "Method Not Allowed"),
    ]
    .iter()
    .find_map(|(p, d)| note.message.starts_with(p).then_some(*d))
    {
        return (note.status, Obj::new().f("detail", detail).done());
    }
    let kind = match (note.validation, note.status) {
        (true, _) => "Bad Request",
        (_, StatusCode::NOT_FOUND) => "NotFoundError",
        (_, StatusCode::BAD_REQUEST) => "BadRequestError",
        (_, StatusCode::SERVICE_UNAVAILABLE) => "ServiceUnavailable",
        (_, StatusCode::TOO_MANY_REQUESTS) => "TooManyRequests",
        (_, StatusCode::UNAUTHORIZED) => "Unauthorized",
        _ => "InternalServerError",
    };
    let message = note
        .context
        .map_or_else(|| note.message.clone(), context_message);
    let body = Obj::new()
        .f("object", "error")
        .f("message", &message)
        .f("type", kind)
        .null("param")
        .f("code", &note.status.as_u16())
        .done();
    (note.status, body)
}

/// A request too long for the context, `(prompt, max_tokens, limit)`, in SGLang's words:
/// the prompt alone filling the window, else prompt and `max_tokens` over it (0.5.17
/// managers/tokenizer_manager.py:1150-1162, 1165-1190; 0.5.23 :1338-1377, the same; seen in
/// transcripts/0.5.17/completions-context-overflow.http, completions-max-tokens-overflow.
/// http). The tokens reserved for EAGLE's drafts (managers/utils.py:380-392) are 0 here.
fn context_message((prompt, max_tokens, limit): (u64, u64, u64)) -> String {
    match prompt >= limit {
        true => format!(
            "The input ({prompt} tokens) is longer than the model's context length ({limit} \
             tokens)."
        ),
        false => format!(
            "Requested token count exceeds the model's maximum context length of {limit} \
             tokens. You requested a total of {} tokens: {prompt} tokens from the input \
             messages and {max_tokens} tokens for the completion. Please reduce the number of \
             tokens in the input messages or the completion to fit within the limit.",
            prompt + max_tokens
        ),
    }
}
