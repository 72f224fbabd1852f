//! `transformers serve` of transformers 5.24.0, read in the PyPI wheel. Paths are relative
//! to `transformers/cli/serving/`:
//! * requests: any key outside the OpenAI request type (`CompletionCreateParamsStreaming`
//!   of the installed `openai` package, plus `generation_config`, `seed`,
//!   `chat_template_kwargs`) is a 422 `{"detail": "Unexpected fields in the request:
//!   {…}"}` (utils.py:1179-1190; the field lists are the profile's, openai 3.57.0's); `logprobs`,
//!   `stream_options` and others are accepted and ignored with a warning
//!   (chat_completion.py:69-91, completion.py:37-45); a pinned server answers another
//!   model 400 `Server is pinned to 'M'; requested 'X'.` (utils.py:1198-1212);
//!   `generation_config` is a JSON `GenerationConfig` (`min_new_tokens`, `max_new_tokens`),
//!   after which `max_tokens` / `max_completion_tokens` set `max_new_tokens`; without it
//!   `max_new_tokens` is at least 1024 (utils.py:1224-1269, chat_completion.py:319-336); a
//!   completions prompt must be a string (completion.py:86-88);
//! * chat stream: a role chunk at once, before any token; `{"content"}` deltas (or
//!   `reasoning_content`); a final chunk with an empty delta, the finish (`length` when
//!   `max_new_tokens` was reached, else `stop`) and `usage`; chunks are
//!   `model_dump_json(exclude_none=True)` of openai's `ChatCompletionChunk` with
//!   `system_fingerprint: ""`; **no `[DONE]`**; `stream_options` ignored
//!   (chat_completion.py:173-256, 392-444);
//! * completions stream: `{"index", "text"}` choices, then the finish with `usage`, no
//!   `[DONE]` (completion.py:112-170, 233-262);
//! * `/health` `{"status":"ok"}`, `/v1/models` the pinned model with `status` (server.py,
//!   model_manager.py:498-552); no tokenize route; errors FastAPI's `{"detail": …}`;
//! * seen on an NVIDIA H200 (5.17.0, a byte-level tokenizer): short streams with no content
//!   chunk at all although `usage.completion_tokens` counts them — `--held-back-rate`.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use bytes::Bytes;
use serde_json::{Map, Value};

use crate::Profile;
use crate::dialect::Host;
use crate::dialect::Served;
use crate::dialect::api_error::{ApiError, ErrorNote};
use crate::dialect::chunk::{
    Answer, ChunkShape, CountOrder, Ctx, Tok, hit_length, sse, usage_counts,
};
use crate::dialect::finish::Finish;
use crate::dialect::json::{Obj, arr};
use crate::dialect::request::{Api, GenRequest, Rules};
use crate::dialect::{Dialect, uuid_like};
use crate::dialect::{ok_json, unaccepted_keys};

/// `{'a', 'b'}`, a Python set of strings.
fn py_set(keys: &[String]) -> String {
    let items: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
    format!("{{{}}}", items.join(", "))
}

/// The 422 on unexpected fields, the pinned model, a completions prompt that is no string.
pub(super) fn check(
    api: Api,
    obj: &Map<String, Value>,
    config: &Served,
) -> Result<Rules, ApiError> {
    let unexpected = unaccepted_keys(&super::TRANSFORMERS, api, obj);
    if !unexpected.is_empty() {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("Unexpected fields in the request: {}", py_set(&unexpected)),
        ));
    }
    if api == Api::Completions && !obj.get("prompt").is_some_and(Value::is_string) {
        return Err(ApiError::bad_request("prompt must be a string."));
    }
    if let Some(m) = obj.get("model").and_then(Value::as_str)
        && m != config.model
    {
        return Err(ApiError::bad_request(format!(
            "Server is pinned to '{}'; requested '{m}'.",
            config.model
        )));
    }
    Ok(Rules {
        check_model: false,
        stream_options_need_stream: false,
        ..Rules::of(&super::TRANSFORMERS, api)
    })
}

/// `generation_config`'s `min_new_tokens` / `max_new_tokens`, the 1024 floor of the
/// default `max_new_tokens`, and usage in every stream.
pub(super) fn adapt(obj: &Map<String, Value>, req: &mut GenRequest) -> Result<(), ApiError> {
    let asked = ["max_tokens", "max_completion_tokens"]
        .iter()
        .any(|k| obj.get(*k).is_some_and(|v| !v.is_null()));
    let config = match obj.get("generation_config") {
        Some(Value::String(s)) => {
            Some(serde_json::from_str::<Map<String, Value>>(s).map_err(|_| {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
            })?)
        }
        Some(Value::Null) | None => None,
        Some(_) => {
            return Err(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal Server Error",
            ));
        }
    };
    let get = |k: &str| {
        config
            .as_ref()
            .and_then(|c| c.get(k))
            .and_then(Value::as_u64)
            .and_then(|v| u32::try_from(v).ok())
    };
    if !asked {
        req.max_tokens = match (&config, get("max_new_tokens")) {
            (Some(_), Some(n)) => n.max(1),
            (Some(_), None) => req.max_tokens,
            // The model's max_new_tokens, raised to 1024 (utils.py:1248-1251).
            (None, _) => req.max_tokens.max(1024),
        };
    }
    if let Some(n) = get("min_new_tokens") {
        // min_new_tokens holds EOS back until that many tokens were generated.
        req.min_tokens = n.min(req.max_tokens);
    }
    req.include_usage = true;
    Ok(())
}

/// The chunks of one `transformers serve` response.
#[derive(Debug)]
pub(crate) struct Shape {
    ctx: Ctx,
}

impl Shape {
    pub(crate) fn new(ctx: Ctx) -> Self {
        Shape { ctx }
    }

    fn usage(f: &Finish) -> String {
        usage_counts(f, CountOrder::CompletionPromptTotal).done()
    }

    fn reason(f: &Finish) -> &'static str {
        if hit_length(f) { "length" } else { "stop" }
    }

    fn chat_chunk(&self, delta: &str, finish: Option<&Finish>) -> Bytes {
        let choice = Obj::new()
            .r("delta", delta)
            .f("index", &0)
            .opt("finish_reason", finish.map(Self::reason))
            .done();
        sse(&Obj::new()
            .f("id", &self.ctx.id)
            .r("choices", arr([choice]))
            .f("created", &self.ctx.created)
            .f("model", &self.ctx.model)
            .f("object", "chat.completion.chunk")
            .f("system_fingerprint", "")
            .opt_r("usage", finish.map(Self::usage))
            .done())
    }

    fn completion_chunk(&self, text: &str, finish: Option<&Finish>) -> Bytes {
        let choice = Obj::new()
            .opt("finish_reason", finish.map(Self::reason))
            .f("index", &0)
            .f("text", text)
            .done();
        sse(&Obj::new()
            .f("id", &self.ctx.id)
            .r("choices", arr([choice]))
            .f("created", &self.ctx.created)
            .f("model", &self.ctx.model)
            .f("object", "text_completion")
            .opt_r("usage", finish.map(Self::usage))
            .done())
    }
}

impl ChunkShape for Shape {
    fn opening(&mut self, out: &mut Vec<Bytes>) {
        if self.ctx.api == Api::Chat {
            out.push(self.chat_chunk(r#"{"role":"assistant"}"#, None));
        }
    }

    fn token(&mut self, t: &Tok<'_>, out: &mut Vec<Bytes>) {
        match self.ctx.api {
            Api::Chat => {
                // A `ReasoningText` item becomes `reasoning_content` (chat_completion.py:235).
                let field = if self.ctx.reasoning(t.index) {
                    "reasoning_content"
                } else {
                    "content"
                };
                out.push(self.chat_chunk(&Obj::new().f(field, t.text).done(), None));
            }
            Api::Completions => out.push(self.completion_chunk(t.text, None)),
        }
    }

    fn last(&mut self, t: Option<&Tok<'_>>, f: &Finish, out: &mut Vec<Bytes>) {
        if let Some(t) = t {
            self.token(t, out);
        }
        match self.ctx.api {
            Api::Chat => out.push(self.chat_chunk("{}", Some(f))),
            Api::Completions => out.push(self.completion_chunk("", Some(f))),
        }
    }

    fn whole(&self, answer: &Answer<'_>, f: &Finish) -> String {
        let text = answer.content;
        let (object, choice) = match self.ctx.api {
            Api::Chat => (
                "chat.completion",
                Obj::new()
                    .f("finish_reason", Self::reason(f))
                    .f("index", &0)
                    .r(
                        "message",
                        Obj::new()
                            .f("content", text)
                            .f("role", "assistant")
                            .opt(
                                "reasoning_content",
                                (!answer.reasoning.is_empty()).then_some(answer.reasoning),
                            )
                            .done(),
                    )
                    .done(),
            ),
            Api::Completions => (
                "text_completion",
                Obj::new()
                    .f("finish_reason", Self::reason(f))
                    .f("index", &0)
                    .f("text", text)
                    .done(),
            ),
        };
        Obj::new()
            .f("id", &self.ctx.id)
            .r("choices", arr([choice]))
            .f("created", &self.ctx.created)
            .f("model", &self.ctx.model)
            .f("object", object)
            .r("usage", Self::usage(f))
            .done()
    }
}

pub(super) fn routes() -> Router<Arc<Host>> {
    Router::new()
        .route("/health", get(health))
        .route("/v1/models", get(models))
        .merge(super::profiler::routes())
}

async fn health() -> Response {
    ok_json(r#"{"status":"ok"}"#.into())
}

/// `model_owner`: the organisation of a Hub id (`org/name`), `""` otherwise.
fn owner(model: &str) -> &str {
    model.split_once('/').map_or("", |(org, _)| org)
}

async fn models(State(st): State<Arc<Host>>) -> Response {
    let m = &st.config.model;
    let card = Obj::new()
        .f("owned_by", owner(m))
        .f("id", m)
        .f("object", "model")
        .f("created", &0)
        .r("status", r#"{"value":"loaded"}"#)
        .done();
    ok_json(Obj::new().f("object", "list").r("data", arr([card])).done())
}

/// FastAPI's `{"detail": …}`; Starlette's plain 500.
pub(super) fn error_body(note: &ErrorNote) -> (StatusCode, String) {
    let message = match note.status {
        StatusCode::NOT_FOUND if note.message.starts_with("no route") => "Not Found",
        StatusCode::METHOD_NOT_ALLOWED => "Method Not Allowed",
        _ => note.message.as_str(),
    };
    (note.status, Obj::new().f("detail", message).done())
}

/// transformers serve's dialect (transformers 5.24.0).
pub(crate) struct Transformers;

impl Dialect for Transformers {
    fn profile(&self) -> &'static Profile {
        &super::TRANSFORMERS
    }

    fn about(&self) -> String {
        format!("`transformers serve` of transformers {}", self.version())
    }

    fn routes(&self) -> Router<Arc<Host>> {
        routes()
    }

    fn check(
        &self,
        api: Api,
        obj: &Map<String, Value>,
        config: &Served,
    ) -> Result<Rules, ApiError> {
        check(api, obj, config)
    }

    fn adapt(
        &self,
        obj: &Map<String, Value>,
        req: &mut GenRequest,
        _config: &Served,
    ) -> Result<(), ApiError> {
        adapt(obj, req)
    }

    fn shape(&self, ctx: Ctx, _config: &Served) -> Option<Box<dyn ChunkShape>> {
        Some(Box::new(Shape::new(ctx)))
    }

    /// The request id, a uuid4 unless `x-request-id` is given.
    fn response_id(&self, _api: Api, hash: u64) -> String {
        uuid_like(hash)
    }

    fn error_body(&self, note: &ErrorNote) -> (StatusCode, String) {
        error_body(note)
    }
}
