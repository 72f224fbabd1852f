//! TGI's `/tokenize` and `/chat_tokenize` (router/src/server.rs:71-95, 188-217, 1304-1324 at
//! db931fcf): a list of `{id, text, start, stop}` per token, byte offsets into the text the
//! tokenizer saw.

use std::sync::Arc;

use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use crate::dialect::Host;
use crate::dialect::api_error::ApiError;
use crate::dialect::json::{Obj, arr};
use crate::dialect::ok_json;
use crate::dialect::request::render_messages;
use crate::dialect::tokenize::tokenize_body;

/// `POST /tokenize` `{inputs}` → a JSON array of tokens.
pub(super) async fn tokenize(
    State(st): State<Arc<Host>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let run = || -> Result<Response, ApiError> {
        let b = tokenize_body(&st, body)?;
        let Some(input) = b.inputs else {
            return Err(ApiError::invalid("missing field `inputs`"));
        };
        Ok(ok_json(tokens(&input)))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

/// `POST /chat_tokenize`, a `ChatRequest` → `{tokenize_response, templated_text}`: the
/// messages rendered by the chat template generation applies (`try_into_generate`); fields
/// outside `ChatRequest` (`chat_template_kwargs`, `reasoning_effort`, `chat_template`) are
/// dropped as at generation.
pub(super) async fn chat_tokenize(
    State(st): State<Arc<Host>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let run = || -> Result<Response, ApiError> {
        let b = tokenize_body(&st, body)?;
        let Some(messages) = b.messages else {
            return Err(ApiError::invalid("missing field `messages`"));
        };
        let text = render_messages(&messages);
        Ok(ok_json(
            Obj::new()
                .r("tokenize_response", tokens(&text))
                .f("templated_text", &text)
                .done(),
        ))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

/// The tokens of `text` as TGI lists them.
fn tokens(text: &str) -> String {
    arr(words(text).map(|(start, word)| {
        let id = crate::dialect::tokenizer::encode(word)
            .first()
            .copied()
            .unwrap_or(0);
        Obj::new()
            .f("id", &id)
            .f("text", word)
            .f("start", &start)
            .f("stop", &(start + word.len()))
            .done()
    }))
}

/// The whitespace-separated words of `s` with their byte offsets.
fn words(s: &str) -> impl Iterator<Item = (usize, &str)> {
    let base = s.as_ptr() as usize;
    s.split_whitespace()
        .map(move |w| (w.as_ptr() as usize - base, w))
}
