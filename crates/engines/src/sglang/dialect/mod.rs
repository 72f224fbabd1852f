//! SGLang 0.5.23 (`python -m sglang.launch_server`), read in the PyPI wheel. Paths are
//! relative to `sglang/srt/`:
//! * requests: pydantic models with the default `extra="ignore"` (entrypoints/openai/
//!   protocol.py:365-446): unknown fields are dropped; `ignore_eos`, `min_tokens` exist
//!   (:399,407); the model name is not checked, chunks echo `request.model` (default
//!   `"default"`);
//! * completion chunks: `model_dump_json()` of `CompletionStreamResponse` (protocol.py:
//!   546-581: `usage: null` on every chunk, `matched_stop`), the finish on the last token's
//!   chunk, the usage chunk with `exclude_none=True` only with `include_usage`
//!   (entrypoints/openai/serving_completions.py:225-500); usage has a top-level
//!   `reasoning_tokens` (protocol.py:221-229);
//! * chat chunks: msgspec `StreamDelta` always writes `reasoning_content` (null or text)
//!   and drops unset fields (entrypoints/openai/sse_utils.py:13-50); a first chunk
//!   `{"role":"assistant","content":""}`, content chunks, a separate finish chunk with an
//!   empty delta, then, with `include_usage`, `choices: []` and the full usage
//!   (serving_chat.py:2441-2805);
//! * `prompt_tokens_details.cached_tokens` only with `--enable-cache-report`
//!   (entrypoints/openai/usage_processor.py);
//! * `/health`, `/health_generate`: 503 while starting, else 200 after a 1-token generation
//!   it waits for in 1 s steps (http_server.py:721-798); `/ready` 503/200; `/v1/models`
//!   200 at once, `owned_by: "sglang"`, `max_model_len` = context length (:1993-2047);
//!   `/server_info` (and the deprecated `/get_server_info`, which logs a warning) the flat
//!   resolved server arguments plus scheduler info, `version`, `frontend` (:853-893,
//!   utils/common.py:3584-3592); `/model_info`; `/tokenize` and `/v1/tokenize` `{prompt |
//!   messages}` → `{tokens, count, max_model_len}`, `/detokenize` → `{"text"}`
//!   (entrypoints/openai/serving_tokenize.py, protocol.py:1744-1815); no `/version`;
//! * errors: a flat `{"object":"error", message, type, param, code}` (protocol.py:106-111,
//!   serving_base.py:205-221); schema errors 400 `type: "Bad Request"` (http_server.py:
//!   635-690);
//! * start-up log: `[%(asctime)s] %(message)s`, date `%Y-%m-%d %H:%M:%S`
//!   (utils/common.py:2618-2638); `server_args={…}` (≥ 0.5.19, entrypoints/engine.py:
//!   173,311,1185) or `server_args=ServerArgs(…)` (≤ 0.5.18: `logger.info(f"{server_args=}")`
//!   at entrypoints/engine.py:253,1095 of the 0.5.18 wheel, `ServerArgs` a dataclass at
//!   server_args.py:447); `The server is fired up and ready to roll!` (http_server.py:2600).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
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
use crate::dialect::pyrepr::{self, Py};
use crate::dialect::request::{Api, GenRequest, PromptInput, Rules};
use crate::dialect::tokenize;
use crate::dialect::{ChunkShape, Ctx, Dialect, Readiness, Snapshot};
use crate::dialect::{Served, SglangLogForm, WireParams};
use crate::dialect::{json_response, ok_json};

mod chunks;
mod errors;
mod metrics;
mod profiler;

pub(crate) use chunks::Shape;

/// SGLang's rules: every shared field acted on, the model not checked, `stream_options`
/// not tied to `stream`.
pub(super) fn check(
    api: Api,
    _obj: &Map<String, Value>,
    _config: &Served,
) -> Result<Rules, ApiError> {
    Ok(Rules {
        check_model: false,
        stream_options_need_stream: false,
        ..Rules::of(&super::SGLANG, api)
    })
}

pub(super) fn routes() -> Router<Arc<Host>> {
    Router::new()
        .route("/health", get(health))
        .route("/health_generate", get(health))
        .route("/ready", get(ready))
        .route("/v1/models", get(models))
        .route("/v1/models/{*model}", get(model))
        .route("/server_info", get(server_info))
        .route("/get_server_info", get(get_server_info))
        .route("/model_info", get(model_info))
        .route("/get_model_info", get(get_model_info))
        .route("/tokenize", post(tokenize))
        .route("/v1/tokenize", post(tokenize))
        .route("/detokenize", post(detokenize))
        .route("/v1/detokenize", post(detokenize))
        .merge(profiler::routes())
}

/// 503 while starting; else 200 once the 1-token health generation answered, which SGLang
/// looks for after each 1 s sleep (http_server.py:777-786).
async fn health(State(st): State<Arc<Host>>) -> Response {
    if !st.ready() {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    StatusCode::OK.into_response()
}

async fn ready(State(st): State<Arc<Host>>) -> Response {
    if st.ready() {
        StatusCode::OK.into_response()
    } else {
        StatusCode::SERVICE_UNAVAILABLE.into_response()
    }
}

fn card(c: &Served, created: u64) -> String {
    Obj::new()
        .f("id", &c.model)
        .f("object", "model")
        .f("created", &created)
        .f("owned_by", "sglang")
        .f("root", &c.model)
        .null("parent")
        .f("max_model_len", &c.max_model_len)
        .done()
}

async fn models(State(st): State<Arc<Host>>) -> Response {
    let data = arr([card(&st.config, st.created_unix)]);
    ok_json(Obj::new().f("object", "list").r("data", data).done())
}

async fn model(State(st): State<Arc<Host>>, Path(model): Path<String>) -> Response {
    if model == st.config.model {
        return ok_json(card(&st.config, st.created_unix));
    }
    let error = Obj::new()
        .f("message", &format!("The model '{model}' does not exist"))
        .f("type", "invalid_request_error")
        .f("param", "model")
        .f("code", "model_not_found")
        .done();
    json_response(StatusCode::NOT_FOUND, Obj::new().r("error", error).done())
}

/// The resolved server arguments, in SGLang's field order (arg_groups/field_order.py),
/// the part of them the simulator has values for.
pub(crate) fn server_args(c: &Served) -> Vec<(String, Py)> {
    let model_path = c.wire.model_path.as_deref().unwrap_or(&c.model);
    let e = c;
    let int = |v: u64| Py::Int(i64::try_from(v).unwrap_or(i64::MAX));
    vec![
        ("model_path", Py::str(model_path)),
        ("tokenizer_path", Py::str(model_path)),
        ("context_length", int(u64::from(e.max_model_len))),
        ("dtype", Py::str("auto")),
        ("quantization", Py::None),
        ("mem_fraction_static", Py::Float(0.88)),
        ("max_running_requests", int(u64::from(e.max_num_seqs))),
        ("max_total_tokens", int(e.kv_capacity_tokens)),
        ("chunked_prefill_size", int(u64::from(e.max_batched_tokens))),
        ("disable_radix_cache", Py::Bool(!c.prefix_cache)),
        ("tp_size", int(u64::from(c.wire.tp_size))),
        ("dp_size", int(u64::from(c.wire.dp_size))),
        ("enable_dp_attention", Py::Bool(c.wire.dp_size > 1)),
        ("device", Py::str("cuda")),
        ("random_seed", int(c.seed)),
        ("host", Py::str(&c.host.to_string())),
        ("port", int(u64::from(c.port))),
        ("skip_server_warmup", Py::Bool(false)),
        // SGLang logs the key itself; the simulator never prints one.
        ("api_key", if c.api_key { Py::str("***") } else { Py::None }),
        ("served_model_name", Py::str(&c.model)),
        ("enable_cache_report", Py::Bool(c.wire.cache_report)),
        ("log_level", Py::str("info")),
        ("enable_metrics", Py::Bool(c.wire.enable_metrics)),
        ("attention_backend", Py::None),
        ("ep_size", Py::Int(1)),
        (
            "moe_runner_backend",
            Py::str(c.wire.moe_backend.as_deref().unwrap_or("auto")),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// A Python value as JSON, the way FastAPI encodes the args dict.
fn py_json(v: &Py) -> String {
    match v {
        Py::Str(s) => crate::dialect::json::quoted(s),
        Py::Int(n) => n.to_string(),
        Py::Float(x) => serde_json::Value::from(*x).to_string(),
        Py::Bool(b) => b.to_string(),
        Py::None => "null".into(),
        Py::List(items) => arr(items.iter().map(py_json)),
        Py::Dict(items) | Py::Dataclass(_, items) => items
            .iter()
            .fold(Obj::new(), |o, (k, v)| o.r(k, py_json(v)))
            .done(),
    }
}

async fn server_info(State(st): State<Arc<Host>>) -> Response {
    let c = &st.config;
    let mut o = server_args(c)
        .iter()
        .fold(Obj::new(), |o, (k, v)| o.r(k, py_json(v)));
    let argv: Vec<String> = std::env::args().collect();
    o = o
        .f("launch_command", &argv.join(" "))
        .f("max_total_num_tokens", &c.kv_capacity_tokens)
        .f("max_req_input_len", &c.max_model_len.saturating_sub(1))
        .null("kv_events")
        .r("startup_time", startup_time())
        .r(
            "internal_states",
            arr([Obj::new().f("last_gen_throughput", &0.0).done()]),
        )
        .f("version", st.version())
        .f("frontend", "python");
    ok_json(o.done())
}

/// The engine's start-up durations in seconds, a dict in 0.5.17 and 0.5.23 alike
/// (0.5.17 observability/startup_time.py:11-70, managers/multi_tokenizer_mixin.py:483-484;
/// seen in transcripts/0.5.17/server-info.http): the simulator loads no weights and
/// captures no graphs, so each is 0.
fn startup_time() -> String {
    let graphs = [
        "prefill",
        "decode",
        "target_verify",
        "draft_prefill",
        "draft_decode",
        "draft_extend",
    ]
    .iter()
    .fold(Obj::new(), |o, k| o.f(k, &0.0));
    ["load_weight", "kv_cache_allocation", "scheduler_e2e"]
        .iter()
        .fold(Obj::new(), |o, k| o.f(k, &0.0))
        .r("cuda_graph", graphs.done())
        .f("tokenizer_e2e", &0.0)
        .done()
}

async fn get_server_info(st: State<Arc<Host>>) -> Response {
    eprintln!(
        "{} Endpoint '/get_server_info' is deprecated and will be removed in a future version. \
         Please use '/server_info' instead.",
        stamp()
    );
    server_info(st).await
}

async fn model_info(State(st): State<Arc<Host>>) -> Response {
    let c = &st.config;
    let path = c.wire.model_path.as_deref().unwrap_or(&c.model);
    ok_json(
        Obj::new()
            .f("model_path", path)
            .f("served_model_name", &c.model)
            .f("tokenizer_path", path)
            .f("is_generation", &true)
            .null("preferred_sampling_params")
            .f("weight_version", "default")
            .f("load_format", "auto")
            .null("reasoning_parser")
            .null("tool_call_parser")
            .f("disaggregation_mode", "null")
            .f("has_image_understanding", &false)
            .f("has_audio_understanding", &false)
            .null("model_type")
            .null("architectures")
            .done(),
    )
}

async fn get_model_info(st: State<Arc<Host>>) -> Response {
    eprintln!(
        "{} Endpoint '/get_model_info' is deprecated and will be removed in a future version. \
         Please use '/model_info' instead.",
        stamp()
    );
    model_info(st).await
}

async fn tokenize(State(st): State<Arc<Host>>, body: Result<Bytes, BytesRejection>) -> Response {
    let run = || -> Result<Response, ApiError> {
        let b = tokenize::tokenize_body(&st, body)?;
        let max = st.config.max_model_len;
        let (tokens, count) = match (b.prompt, b.messages) {
            (Some(PromptInput::Texts(v)), None) => {
                let lists: Vec<Vec<u64>> = v.iter().map(|t| tokenize::ids(t)).collect();
                let counts: Vec<usize> = lists.iter().map(Vec::len).collect();
                (
                    serde_json::to_string(&lists).unwrap_or_default(),
                    serde_json::to_string(&counts).unwrap_or_default(),
                )
            }
            (Some(p @ PromptInput::Text(_)), None) => {
                let ids = tokenize::prompt_ids(p)?;
                (
                    serde_json::to_string(&ids).unwrap_or_default(),
                    ids.len().to_string(),
                )
            }
            (None, Some(m)) => {
                let ids = tokenize::message_ids(&m);
                (
                    serde_json::to_string(&ids).unwrap_or_default(),
                    ids.len().to_string(),
                )
            }
            _ => {
                return Err(ApiError::invalid(
                    "1 validation error for TokenizeRequest\n  Value error, Exactly one of \
                     'prompt' or 'messages' must be provided.",
                ));
            }
        };
        Ok(ok_json(
            Obj::new()
                .r("tokens", tokens)
                .r("count", count)
                .f("max_model_len", &max)
                .done(),
        ))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

async fn detokenize(State(st): State<Arc<Host>>, body: Result<Bytes, BytesRejection>) -> Response {
    match tokenize::detokenize_body(&st, body) {
        Ok((_, text)) => ok_json(Obj::new().f("text", &text).done()),
        Err(e) => e.into_response(),
    }
}

fn stamp() -> String {
    format!("[{}]", pyrepr::now("%Y-%m-%d %H:%M:%S"))
}

/// `[date] server_args={…}` (dict form) or `[date] server_args=ServerArgs(…)`.
pub(super) fn start_lines(config: &Served, _addr: std::net::SocketAddr) -> Vec<String> {
    let args = server_args(config);
    let value = match config.wire.sglang_log_form {
        SglangLogForm::Dict => Py::Dict(args),
        SglangLogForm::Dataclass => Py::Dataclass("ServerArgs", args),
    };
    vec![format!("{} server_args={}", stamp(), value.repr())]
}

/// `The server is fired up and ready to roll!` once warm-up is over.
pub(super) fn ready_lines() -> Vec<String> {
    vec![format!(
        "{} The server is fired up and ready to roll!",
        stamp()
    )]
}

/// A request's priority as SGLang's scheduler counts it: the `priority` field
/// (`Optional[int]`, entrypoints/openai/protocol.py:438, passed on at serving_completions.py:138
/// and serving_chat.py:1400), else `--default-priority-value` (tokenizer_manager.py:4013-4020),
/// else the lowest, `-sys.maxsize - 1` (scheduler.py:3522-3527, `schedule_low_priority_values_first`
/// off); `None` without `--enable-priority-scheduling` (a priority given then is ignored:
/// `abort_on_priority_when_disabled` is off by default).
fn priority(obj: &Map<String, Value>, config: &Served) -> Result<Option<i64>, ApiError> {
    let given = match obj.get("priority") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_i64().ok_or_else(|| {
            ApiError::invalid(
                "priority must be a signed 64-bit integer between -9223372036854775808 and \
                 9223372036854775807",
            )
        })?),
    };
    if !config.wire.priority_scheduling {
        return Ok(None);
    }
    Ok(Some(
        given.or(config.wire.default_priority).unwrap_or(i64::MIN),
    ))
}

/// SGLang 0.5.23's dialect.
pub(crate) struct Sglang;

impl Dialect for Sglang {
    fn profile(&self) -> &'static Profile {
        &super::SGLANG
    }

    fn about(&self) -> String {
        format!(
            "SGLang {} (`python -m sglang.launch_server`)",
            self.version()
        )
    }

    fn readiness(&self) -> Readiness {
        Readiness::Warmup
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
        config: &Served,
    ) -> Result<(), ApiError> {
        req.priority = priority(obj, config)?;
        Ok(())
    }

    fn shape(&self, ctx: Ctx, config: &Served) -> Option<Box<dyn ChunkShape>> {
        Some(Box::new(Shape::new(ctx, config)))
    }

    /// The request's model (`model=request.model`), `default` when it names none.
    fn chunk_model(&self, requested: Option<&str>, _served: &str) -> String {
        requested.unwrap_or("default").into()
    }

    fn start_lines(&self, config: &Served, addr: SocketAddr) -> Vec<String> {
        start_lines(config, addr)
    }

    fn worker_lines(&self, config: &Served) -> Vec<String> {
        start_lines(config, SocketAddr::new(config.host, config.port))
    }

    fn ready_lines(&self, _base_url: &str) -> Vec<String> {
        ready_lines()
    }

    fn error_body(&self, note: &ErrorNote) -> (StatusCode, String) {
        errors::error_body(note)
    }

    fn metrics_content_type(&self) -> &'static str {
        crate::dialect::metrics::PROMETHEUS_CLIENT_TYPE
    }

    fn metrics_text(&self, model: &str, s: &Snapshot, wire: &WireParams) -> String {
        metrics::sglang_text(
            model,
            s,
            (wire.tp_size, wire.dp_size),
            wire.priority_scheduling,
        )
    }
}

#[cfg(test)]
mod tests;
