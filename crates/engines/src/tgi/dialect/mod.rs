//! Text Generation Inference at git `db931fcf` (2026-01-08, version 3.3.6-dev0), read
//! through the public mirror. Paths are relative to `router/src/`:
//! * requests: serde structs without `deny_unknown_fields`: unknown fields are dropped;
//!   there is no `ignore_eos` (validation.rs:430 sets `ignore_eos_token: false`) and no
//!   `min_tokens`, so outputs end at the model's EOS (the simulator's `--eos-mean-tokens`);
//!   the model name picks a LoRA adapter unless it is `tgi` (server.rs `completions`,
//!   `chat_completions`); axum's `Json` extractor answers malformed bodies itself;
//!   `inputs` tokens + `max_new_tokens` over `max_total_tokens` is a 422 validation error
//!   (validation.rs:170-180, 999);
//! * completion chunks: every non-final chunk has **`"finish_reason": ""`**
//!   (server.rs:857-875: `finish_reason: String::new()`), the final one the finish
//!   (`length`, `eos_token`, `stop_sequence`) and `usage`; `id` is empty; the enum is
//!   tagged by `object`, which comes first (lib.rs:547-581);
//! * chat chunks: every delta is `{"role":"assistant","content":…}`, the last carries the
//!   finish (`stop` for EOS, lib.rs:1432-1437), then with `include_usage` a `choices: []`
//!   chunk (chat.rs:67-299, lib.rs:758-791); `usage: null` on the others;
//! * `data: [DONE]` ends both (server.rs:981,1244); the stream is an axum `Sse` with
//!   `KeepAlive::default()` (a `:` comment after 15 s of silence);
//! * `system_fingerprint` `<version>-<docker label or "native">`;
//! * `/health` 200 empty (503 `{"error":"unhealthy","error_type":"healthcheck"}`), `/info`
//!   (lib.rs:261-299), `/v1/models` (`owned_by` = the model id, `created: 0`,
//!   server.rs:176-186), `/tokenize` `{"inputs"}` → a JSON array of `{id, text, start,
//!   stop}` with byte offsets (server.rs:71-95,1304-1324); `/chat_tokenize` a chat request
//!   → `{tokenize_response, templated_text}` (server.rs:188-217), rendered as generation
//!   renders it, its `chat_template_kwargs` dropped as generation drops them;
//! * errors `{"error", "error_type"}` (lib.rs:1516-1519).

mod metrics;
mod tokenize;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use serde_json::{Map, Value};

use crate::Profile;
use crate::dialect::Host;
use crate::dialect::api_error::{ApiError, ErrorNote};
use crate::dialect::chunk::{Answer, ChunkShape, CountOrder, Ctx, Tok, done, sse, usage_counts};
use crate::dialect::finish::{Finish, FinishReason};
use crate::dialect::json::{Obj, arr};
use crate::dialect::logprobs::{self, ChatStyle};
use crate::dialect::ok_json;
use crate::dialect::request::{Api, Rules};
use crate::dialect::{Dialect, Snapshot, json_response};
use crate::dialect::{Served, WireParams};

/// TGI's rules: its profile's (no `ignore_eos`, `min_tokens`, completions logprobs or
/// images), no model check.
pub(super) fn check(
    api: Api,
    _obj: &Map<String, Value>,
    _config: &Served,
) -> Result<Rules, ApiError> {
    Ok(Rules {
        check_model: false,
        stream_options_need_stream: false,
        ..Rules::of(&super::TGI, api)
    })
}

fn fingerprint(config: &Served) -> String {
    format!("{}-native", Tgi.reported_version(&config.wire))
}

/// The chunks of one TGI response.
#[derive(Debug)]
pub(crate) struct Shape {
    ctx: Ctx,
    fingerprint: String,
}

impl Shape {
    pub(crate) fn new(ctx: Ctx, config: &Served) -> Self {
        Shape {
            ctx,
            fingerprint: fingerprint(config),
        }
    }

    fn usage(f: &Finish) -> String {
        usage_counts(f, CountOrder::PromptCompletionTotal).done()
    }

    /// The completions finish reason: `FinishReason`'s Display (lib.rs:1422-1430).
    fn completion_reason(f: &Finish) -> &'static str {
        match f.reason {
            FinishReason::Length => "length",
            FinishReason::Stop => "eos_token",
        }
    }

    fn completion_choice(text: &str, finish: &str) -> String {
        arr([Obj::new()
            .f("index", &0)
            .f("text", text)
            .null("logprobs")
            .f("finish_reason", finish)
            .done()])
    }

    fn chat_chunk(&self, t: Option<&Tok<'_>>, finish: Option<&Finish>) -> String {
        let content = t.map_or("", |t| t.text);
        // `logprobs: true` gives the token and its `top_tokens` (chat.rs:81-83).
        let scored = t.map(Tok::scored).unwrap_or_default();
        let lp = if self.ctx.logprobs && !scored.is_empty() {
            logprobs::chat(ChatStyle::Tgi, &scored, false)
        } else {
            "null".into()
        };
        let choice = Obj::new()
            .f("index", &0)
            .r(
                "delta",
                Obj::new()
                    .f("role", "assistant")
                    .f("content", content)
                    .done(),
            )
            .r("logprobs", lp)
            .f("finish_reason", &finish.map(|f| f.reason.as_str()))
            .done();
        self.chat_head()
            .r("choices", arr([choice]))
            .null("usage")
            .done()
    }

    fn chat_head(&self) -> Obj {
        Obj::new()
            .f("object", "chat.completion.chunk")
            .f("id", "")
            .f("created", &self.ctx.created)
            .f("model", &self.ctx.model)
            .f("system_fingerprint", &self.fingerprint)
    }
}

impl ChunkShape for Shape {
    fn token(&mut self, t: &Tok<'_>, out: &mut Vec<Bytes>) {
        match self.ctx.api {
            Api::Completions => out.push(sse(&Obj::new()
                .f("object", "text_completion")
                .f("id", "")
                .f("created", &self.ctx.created)
                .r("choices", Self::completion_choice(t.text, ""))
                .f("model", &self.ctx.model)
                .f("system_fingerprint", &self.fingerprint)
                .done())),
            Api::Chat => out.push(sse(&self.chat_chunk(Some(t), None))),
        }
    }

    fn last(&mut self, t: Option<&Tok<'_>>, f: &Finish, out: &mut Vec<Bytes>) {
        let text = t.map_or("", |t| t.text);
        match self.ctx.api {
            Api::Completions => out.push(sse(&Obj::new()
                .f("object", "text_completion")
                .f("id", "")
                .f("created", &self.ctx.created)
                .f("model", &self.ctx.model)
                .f("system_fingerprint", &self.fingerprint)
                .r(
                    "choices",
                    Self::completion_choice(text, Self::completion_reason(f)),
                )
                .r("usage", Self::usage(f))
                .done())),
            Api::Chat => {
                out.push(sse(&self.chat_chunk(t, Some(f))));
                if self.ctx.include_usage {
                    out.push(sse(&self
                        .chat_head()
                        .r("choices", "[]")
                        .r("usage", Self::usage(f))
                        .done()));
                }
            }
        }
        out.push(done());
    }

    /// TGI parses no reasoning: a reasoning model's thinking is part of the text.
    fn whole(&self, answer: &Answer<'_>, f: &Finish) -> String {
        let joined = format!("{}{}", answer.reasoning, answer.content);
        let text = joined.as_str();
        let scored = answer.scored();
        let lp = if self.ctx.logprobs && !scored.is_empty() {
            logprobs::chat(ChatStyle::Tgi, &scored, false)
        } else {
            "null".into()
        };
        let (object, choice) = match self.ctx.api {
            Api::Completions => (
                "text_completion",
                Obj::new()
                    .f("index", &0)
                    .f("text", text)
                    .null("logprobs")
                    .f("finish_reason", Self::completion_reason(f))
                    .done(),
            ),
            Api::Chat => (
                "chat.completion",
                Obj::new()
                    .f("index", &0)
                    .r(
                        "message",
                        Obj::new().f("role", "assistant").f("content", text).done(),
                    )
                    .r("logprobs", &lp)
                    .f("finish_reason", f.reason.as_str())
                    .done(),
            ),
        };
        Obj::new()
            .f("object", object)
            .f("id", "")
            .f("created", &self.ctx.created)
            .f("model", &self.ctx.model)
            .f("system_fingerprint", &self.fingerprint)
            .r("choices", arr([choice]))
            .r("usage", Self::usage(f))
            .done()
    }
}

pub(super) fn routes() -> Router<Arc<Host>> {
    Router::new()
        .route("/", get(health))
        .route("/health", get(health))
        .route("/ping", get(health))
        .route("/info", get(info))
        .route("/v1/models", get(models))
        .route("/tokenize", post(tokenize::tokenize))
        .route("/chat_tokenize", post(tokenize::chat_tokenize))
}

async fn health(State(st): State<Arc<Host>>) -> Response {
    if st.ready() {
        StatusCode::OK.into_response()
    } else {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unhealthy").into_response()
    }
}

async fn info(State(st): State<Arc<Host>>) -> Response {
    let c = &st.config;
    ok_json(
        Obj::new()
            .f("model_id", &c.model)
            .null("model_sha")
            .f("model_pipeline_tag", "text-generation")
            .f("max_concurrent_requests", &MAX_CONCURRENT_REQUESTS)
            .f("max_best_of", &2)
            .f("max_stop_sequences", &4)
            .f("max_input_tokens", &c.max_model_len.saturating_sub(1))
            .f("max_total_tokens", &c.max_model_len)
            .f("validation_workers", &2)
            .f("max_client_batch_size", &4)
            .f("router", "text-generation-router")
            .f("version", st.version())
            .null("sha")
            .null("docker_label")
            .done(),
    )
}

async fn models(State(st): State<Arc<Host>>) -> Response {
    let card = Obj::new()
        .f("id", &st.config.model)
        .f("object", "model")
        .f("created", &0)
        .f("owned_by", &st.config.model)
        .done();
    ok_json(Obj::new().f("object", "list").r("data", arr([card])).done())
}

/// `{"error", "error_type"}`; a body axum could not read gets axum's plain-text rejection
/// (422, `Failed to deserialize the JSON body into the target type: …`).
pub(super) fn error_body(note: &ErrorNote) -> (StatusCode, String) {
    if let Some((prompt, max, limit)) = note.context {
        let body = Obj::new()
            .f(
                "error",
                // `InferError::ValidationError` displays "Input validation error: {0}"
                // (infer/mod.rs:414-415).
                &format!(
                    "Input validation error: `inputs` tokens + `max_new_tokens` must be <= \
                     {limit}. Given: {prompt} `inputs` tokens and {max} `max_new_tokens`"
                ),
            )
            .f("error_type", "validation")
            .done();
        return (StatusCode::UNPROCESSABLE_ENTITY, body);
    }
    let (status, kind) = match (note.validation, note.status) {
        (true, _) | (_, StatusCode::BAD_REQUEST) => {
            (StatusCode::UNPROCESSABLE_ENTITY, "validation")
        }
        (_, StatusCode::TOO_MANY_REQUESTS) => (note.status, "overloaded"),
        (_, StatusCode::SERVICE_UNAVAILABLE) => (note.status, "healthcheck"),
        (_, StatusCode::NOT_FOUND) => (note.status, "not_found"),
        _ => (note.status, "generation"),
    };
    let body = Obj::new()
        .f("error", &note.message)
        .f("error_type", kind)
        .done();
    (status, body)
}

/// `--max-concurrent-requests` (launcher/src/main.rs:645-649, default 128; what `/info`
/// reports): a request beyond it is refused at once, "Model is overloaded"
/// (infer/mod.rs:84,110-120,412), HTTP 429 when not streamed (server.rs:2408).
pub(super) const MAX_CONCURRENT_REQUESTS: u64 = 128;

pub(super) fn over_limit(in_flight: u64) -> Option<ApiError> {
    (in_flight > MAX_CONCURRENT_REQUESTS)
        .then(|| ApiError::new(StatusCode::TOO_MANY_REQUESTS, "Model is overloaded"))
}

/// A streamed request TGI refuses (validation, overload): HTTP 200, the error as an OpenAI
/// error event `{"error":{"message","http_status_code":422}}` (infer/mod.rs:445-461), then
/// `data: [DONE]` (server.rs:890,981,1241-1244). A body axum could not read is refused
/// before the stream starts, as a plain-text 422.
pub(super) fn stream_error(e: ApiError) -> Response {
    let note = match e.into_response().extensions().get::<ErrorNote>() {
        Some(n) => n.clone(),
        None => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    };
    if let Some(r) = rejection(&note) {
        return r;
    }
    let (_, body) = error_body(&note);
    let v: Value = serde_json::from_str(&body).unwrap_or_default();
    let msg = v.get("error").and_then(Value::as_str).unwrap_or_default();
    let message = match v.get("error_type").and_then(Value::as_str) {
        Some("validation") if !msg.starts_with("Input validation error") => {
            format!("Input validation error: {msg}")
        }
        _ => msg.to_owned(),
    };
    let event = Obj::new()
        .r(
            "error",
            Obj::new()
                .f("message", &message)
                .f("http_status_code", &422)
                .done(),
        )
        .done();
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/event-stream")],
        Body::from(format!("data: {event}\n\ndata: [DONE]\n\n")),
    )
        .into_response()
}

/// axum's plain-text rejection of a body that is no JSON request TGI can read.
pub(super) fn rejection(note: &ErrorNote) -> Option<Response> {
    note.validation.then(|| {
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            Body::from(format!(
                "Failed to deserialize the JSON body into the target type: {}",
                note.message
            )),
        )
            .into_response()
    })
}

/// TGI's dialect.
pub(crate) struct Tgi;

impl Dialect for Tgi {
    fn profile(&self) -> &'static Profile {
        &super::TGI
    }

    fn about(&self) -> String {
        format!(
            "Text Generation Inference at git `db931fcf` ({})",
            self.version()
        )
    }

    /// axum's `Sse::keep_alive(KeepAlive::default())`, 15 s (router/src/server.rs).
    fn ping(&self) -> Option<Duration> {
        Some(Duration::from_secs(15))
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

    fn over_limit(&self, in_flight: u64) -> Option<ApiError> {
        over_limit(in_flight)
    }

    fn stream_error(&self, e: ApiError) -> Result<Response, ApiError> {
        Ok(stream_error(e))
    }

    fn shape(&self, ctx: Ctx, config: &Served) -> Option<Box<dyn ChunkShape>> {
        Some(Box::new(Shape::new(ctx, config)))
    }

    /// The request's model unless it is `tgi` (server.rs `chat_completions`).
    fn chunk_model(&self, requested: Option<&str>, served: &str) -> String {
        match requested {
            Some(m) if m != "tgi" => m.into(),
            _ => served.into(),
        }
    }

    /// An empty id (server.rs: `id: String::new()`).
    fn response_id(&self, _api: Api, _hash: u64) -> String {
        String::new()
    }

    fn error_body(&self, note: &ErrorNote) -> (StatusCode, String) {
        error_body(note)
    }

    fn restyle(&self, note: &ErrorNote) -> Response {
        rejection(note).unwrap_or_else(|| {
            let (status, body) = error_body(note);
            json_response(status, body)
        })
    }

    fn metrics_text(&self, _model: &str, s: &Snapshot, _wire: &WireParams) -> String {
        metrics::tgi(s)
    }
}
