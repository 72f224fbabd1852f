//! TensorRT-LLM's `trtllm-serve`, read through the public search index (which holds many
//! versions and does not say which is newest; these facts are from the version of
//! `tensorrt_llm/serve/openai_server.py` that serves `/_internal/tokenize`, and the
//! `openai_protocol.py` that defines its request):
//! * requests: `OpenAIBaseModel` has `extra="forbid"` (openai_protocol.py): any field it
//!   does not define is a 400 whose body is `{"error": str(RequestValidationError)}`
//!   (openai_server.py `validation_exception_handler`); `model` is required; `ignore_eos`,
//!   `min_tokens`, `stream_options` are fields; `StreamOptions.include_usage` defaults to
//!   true; `stream_options` without `stream` is refused (`validate_stream_options`);
//! * completion chunks: `model_dump_json(exclude_unset=False)` with every field, `usage:
//!   null`, and **one id per stream**, `cmpl-<request id>` (the newest
//!   postprocess_handlers.py `_ensure_stream_metadata`; older versions drew a new id per
//!   chunk); with `include_usage` the usage chunk is a `CompletionStreamResponse`
//!   (`object: "text_completion"`, `choices: []`, the stream's id;
//!   `completion_stream_post_processor`; older versions sent a `chat.completion.chunk`);
//! * chat chunks: `model_dump_json(exclude_none=True)`; the first is written
//!   `data: {…} \n\n` (a space before the blank line), delta `{"role":"assistant"}`; token
//!   deltas carry `content` and `reasoning_content: ""`; the finish rides on the last
//!   token; with `include_usage` a full usage chunk follows (`chat_stream_post_processor`);
//!   both end with `data: [DONE]`; chat chunks carry `chatcmpl-<request id>`, one per stream;
//! * a generation error after the stream began (openai_server.py, newest): completions send
//!   `data: {"error":{"message","type":"server_error","code":null,"param":null}}` then
//!   `data: [DONE]` (`completion_generator`); chat re-raises (`chat_stream_generator`, and
//!   `chat_harmony`'s generator), so the connection closes mid-body with no error event and
//!   no `[DONE]` (the `--stream-error-rate` fault does both);
//! * `/health` 200 empty, `/health_generate`, `/version` `{"version"}`, `/v1/models`
//!   (`owned_by: "tensorrt_llm"`), `/_internal/tokenize` `{prompt}` → `{count, tokens}`
//!   (no `/tokenize`; `messages` was left out on purpose), `/server_info`
//!   (`disaggregated_params`, `max_batch_size`), `/metrics` (JSON iteration stats);
//!   Prometheus text at `/prometheus/metrics` only with `return_perf_metrics`;
//! * log-probabilities: chat only, OpenAI's shape with `bytes`, `top_logprobs` filled when
//!   `top_logprobs` is asked (`create_logprobs`); completions always `logprobs: null`;
//! * errors other than validation: a flat `{"object":"error", message, type, param,
//!   code}` (`create_error_response`).

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use serde_json::{Map, Value};

use crate::Profile;
use crate::dialect::Host;
use crate::dialect::api_error::{ApiError, ErrorNote};
use crate::dialect::finish::Finish;
use crate::dialect::json::{Obj, arr};
use crate::dialect::request::{Api, Rules};
use crate::dialect::rng::splitmix64;
use crate::dialect::tokenize;
use crate::dialect::{ChunkShape, Ctx, Dialect, Snapshot};
use crate::dialect::{Served, WireParams};
use crate::dialect::{ok_json, unknown_keys};

mod chunks;
mod metrics;

pub(crate) use chunks::Shape;

/// Fields of `CompletionRequest` (openai_protocol.py).
const COMPLETION_FIELDS: &[&str] = &[
    "model",
    "prompt",
    "best_of",
    "echo",
    "frequency_penalty",
    "logit_bias",
    "logprobs",
    "max_tokens",
    "n",
    "presence_penalty",
    "seed",
    "stop",
    "stream",
    "stream_options",
    "suffix",
    "temperature",
    "top_p",
    "user",
    "lora_request",
    "prompt_ignore_length",
    "use_beam_search",
    "top_k",
    "top_p_min",
    "min_p",
    "repetition_penalty",
    "length_penalty",
    "early_stopping",
    "stop_token_ids",
    "include_stop_str_in_output",
    "ignore_eos",
    "min_tokens",
    "skip_special_tokens",
    "spaces_between_special_tokens",
    "truncate_prompt_tokens",
    "return_context_logits",
    "detokenize",
    "thinking_token_budget",
    "add_special_tokens",
    "response_format",
    "disaggregated_params",
    "priority",
    "conversation_params",
];

/// Fields of `ChatCompletionRequest` (openai_protocol.py; `max_tokens` is the validation
/// alias of `max_completion_tokens`).
const CHAT_FIELDS: &[&str] = &[
    "messages",
    "prompt_token_ids",
    "model",
    "frequency_penalty",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "max_completion_tokens",
    "max_tokens",
    "n",
    "presence_penalty",
    "response_format",
    "seed",
    "stop",
    "stream",
    "stream_options",
    "temperature",
    "top_p",
    "tools",
    "tool_choice",
    "user",
    "reasoning_effort",
    "best_of",
    "use_beam_search",
    "top_k",
    "top_p_min",
    "min_p",
    "repetition_penalty",
    "length_penalty",
    "early_stopping",
    "stop_token_ids",
    "include_stop_str_in_output",
    "ignore_eos",
    "min_tokens",
    "skip_special_tokens",
    "spaces_between_special_tokens",
    "truncate_prompt_tokens",
    "lora_request",
    "echo",
    "add_generation_prompt",
    "add_special_tokens",
    "documents",
    "chat_template",
    "chat_template_kwargs",
    "disaggregated_params",
    "cache_salt",
    "media_io_kwargs",
    "mm_processor_kwargs",
    "prompt_token_ids_b64",
    "conversation_params",
    "agent_hierarchy",
    "priority",
    "thinking_token_budget",
];

/// A pydantic error item as `str(RequestValidationError)` prints it.
fn pydantic_error(kind: &str, key: &str, msg: &str, input: &str) -> String {
    format!("{{'type': '{kind}', 'loc': ('body', '{key}'), 'msg': '{msg}', 'input': {input}}}")
}

/// `extra="forbid"` and the required `model`, as FastAPI reports them.
pub(super) fn check(
    api: Api,
    obj: &Map<String, Value>,
    _config: &Served,
) -> Result<Rules, ApiError> {
    let known = match api {
        Api::Completions => COMPLETION_FIELDS,
        Api::Chat => CHAT_FIELDS,
    };
    let mut errors: Vec<String> = unknown_keys(obj, known)
        .iter()
        .map(|k| {
            let input = obj.get(k).map(py_value).unwrap_or_default();
            pydantic_error(
                "extra_forbidden",
                k,
                "Extra inputs are not permitted",
                &input,
            )
        })
        .collect();
    if !obj.contains_key("model") {
        let input = py_value(&Value::Object(obj.clone()));
        errors.insert(
            0,
            format!("{{'type': 'missing', 'loc': ('body', 'model'), 'msg': 'Field required', 'input': {input}}}"),
        );
    }
    if !errors.is_empty() {
        let n = errors.len();
        let mut message = format!("{n} validation error{}:\n", if n == 1 { "" } else { "s" });
        for e in &errors {
            message.push_str("  ");
            message.push_str(e);
            message.push('\n');
        }
        return Err(ApiError::invalid(message.trim_end()));
    }
    Ok(Rules {
        check_model: false,
        usage_by_default: true,
        ..Rules::of(&super::TRTLLM, api)
    })
}

/// A JSON value as Python prints the decoded object.
fn py_value(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(py_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("'{k}': {}", py_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

pub(super) fn routes() -> Router<Arc<Host>> {
    Router::new()
        .route("/health", get(health))
        .route("/health_generate", get(health_generate))
        .route("/version", get(version))
        .route("/v1/models", get(models))
        .route("/_internal/tokenize", post(tokenize))
        .route("/server_info", get(server_info))
        .route("/metrics", get(iteration_stats))
}

async fn health(State(st): State<Arc<Host>>) -> Response {
    if st.ready() {
        StatusCode::OK.into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "LLM is unavailable. Please check the server logs for more details.",
        )
            .into_response()
    }
}

async fn health_generate(State(st): State<Arc<Host>>) -> Response {
    if st.ready() {
        (StatusCode::OK, "Generation health check OK").into_response()
    } else {
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "Generation health check failed",
        )
            .into_response()
    }
}

async fn version(State(st): State<Arc<Host>>) -> Response {
    ok_json(Obj::new().f("version", st.version()).done())
}

async fn models(State(st): State<Arc<Host>>) -> Response {
    let card = Obj::new()
        .f("id", &st.config.model)
        .f("object", "model")
        .f("created", &st.created_unix)
        .f("owned_by", "tensorrt_llm")
        .done();
    ok_json(Obj::new().f("object", "list").r("data", arr([card])).done())
}

async fn server_info(State(st): State<Arc<Host>>) -> Response {
    ok_json(
        Obj::new()
            .null("disaggregated_params")
            .f("max_batch_size", &st.config.max_num_seqs)
            .done(),
    )
}

/// The JSON iteration stats since the last call; the simulator keeps none.
async fn iteration_stats() -> Response {
    ok_json("[]".into())
}

async fn tokenize(State(st): State<Arc<Host>>, body: Result<Bytes, BytesRejection>) -> Response {
    let run = || -> Result<Response, ApiError> {
        let raw = body.map_err(|e| ApiError::new(e.status(), e.body_text()))?;
        if let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(&raw) {
            let mut errors: Vec<String> = unknown_keys(&obj, &["model", "prompt"])
                .iter()
                .map(|k| {
                    let input = obj.get(k).map(py_value).unwrap_or_default();
                    pydantic_error(
                        "extra_forbidden",
                        k,
                        "Extra inputs are not permitted",
                        &input,
                    )
                })
                .collect();
            if !obj.get("prompt").is_some_and(Value::is_string) {
                errors.insert(
                    0,
                    "{'type': 'missing', 'loc': ('body', 'prompt'), 'msg': 'Field required'}"
                        .into(),
                );
            }
            if !errors.is_empty() {
                let n = errors.len();
                let lines: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
                return Err(ApiError::invalid(format!(
                    "{n} validation error{}:\n{}",
                    if n == 1 { "" } else { "s" },
                    lines.join("\n")
                )));
            }
        }
        let b = tokenize::tokenize_body(&st, Ok(raw))?;
        let ids = match b.prompt {
            Some(p) => tokenize::prompt_ids(p)?,
            None => Vec::new(),
        };
        Ok(ok_json(
            Obj::new().f("count", &ids.len()).f("tokens", &ids).done(),
        ))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

/// Validation errors `{"error": str(exc)}`; the others the flat `ErrorResponse`.
pub(super) fn error_body(note: &ErrorNote) -> (StatusCode, String) {
    if note.validation {
        return (
            StatusCode::BAD_REQUEST,
            Obj::new().f("error", &note.message).done(),
        );
    }
    let kind = match note.status {
        StatusCode::BAD_REQUEST => "BadRequestError",
        StatusCode::NOT_FOUND => "NotFoundError",
        StatusCode::NOT_IMPLEMENTED => "NotImplementedError",
        _ => "InternalServerError",
    };
    let body = Obj::new()
        .f("object", "error")
        .f("message", &note.message)
        .f("type", kind)
        .null("param")
        .f("code", &note.status.as_u16())
        .done();
    (note.status, body)
}

/// TensorRT-LLM's dialect.
pub(crate) struct Trtllm;

impl Dialect for Trtllm {
    fn profile(&self) -> &'static Profile {
        &super::TRTLLM
    }

    fn about(&self) -> String {
        "TensorRT-LLM's `trtllm-serve` (the version of its OpenAI server that serves \
         `/_internal/tokenize`)"
            .into()
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

    fn shape(&self, ctx: Ctx, _config: &Served) -> Option<Box<dyn ChunkShape>> {
        Some(Box::new(Shape::new(ctx)))
    }

    /// The request's model (`model=request.model`).
    fn chunk_model(&self, requested: Option<&str>, served: &str) -> String {
        requested.unwrap_or(served).into()
    }

    fn error_body(&self, note: &ErrorNote) -> (StatusCode, String) {
        error_body(note)
    }

    fn metrics_content_type(&self) -> &'static str {
        crate::dialect::metrics::PROMETHEUS_CLIENT_TYPE
    }

    fn metrics_text(&self, model: &str, s: &Snapshot, wire: &WireParams) -> String {
        metrics::trtllm_text(model, s, wire.iter_perf_stats)
    }
}

#[cfg(test)]
mod tests;
