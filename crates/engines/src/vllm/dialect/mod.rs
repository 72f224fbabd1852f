//! vLLM 0.33.0 (`vllm serve`), read in the PyPI wheel. Paths are relative to
//! `vllm/entrypoints/`:
//! * requests: `OpenAIBaseModel` has `extra="allow"` (serve/engine/protocol.py:37-76):
//!   unknown fields are logged and ignored; `ignore_eos`, `min_tokens` are sampling fields
//!   (openai/completion/protocol.py:85-86); another model name gets 404 `The model `x` does
//!   not exist. Valid aliases: m.` with `param: "model"` (serve/engine/serving.py:75-84);
//!   `stream_options` without `stream` is refused (completion/protocol.py:606);
//! * completion chunks: `model_dump_json(exclude_unset=True)` of a chunk built with every
//!   choice field given (openai/completion/serving.py:437-486); the usage chunk with
//!   `exclude_none=True` (:532-546), only with `stream_options.include_usage`;
//! * chat chunks (openai/chat_completion/serving.py:480-930): a first chunk `{"role":
//!   "assistant","content":""}` with `prompt_token_ids` and `prompt_text`, token chunks
//!   `{"content"}`, the finish on the last token's chunk with `stop_reason`, the system
//!   fingerprint on the last chunk (serve/utils/fingerprint.py: `vllm-<version>[-tpN]-
//!   <hash8>`), the usage chunk after; the reasoning field of a delta is `reasoning`
//!   (generate/base/protocol.py:356-367);
//! * `/version` `{"version"}` (serve/instrumentator/basic.py:53), `/v1/models` with
//!   `owned_by: "vllm"`, `root`, `max_model_len`, `permission` (serve/engine/protocol.py:
//!   90-118, openai/models/serving.py:64-77), `/tokenize` → `{count, max_model_len, tokens,
//!   token_strs}` (serve/tokenize/protocol.py:182-186), `/detokenize` → `{"prompt"}`,
//!   `/health` 200 with an empty body, `/load` `{"server_load"}`;
//! * errors: `{"error": {message, type, param, code}}` (serve/engine/protocol.py:79-87);
//!   schema errors 400 `type: "Bad Request"` (serve/exception_handling/handlers/
//!   validation.py:149-190);
//! * start-up log (stdout in vLLM; the simulator writes stderr): `vLLM server version %s,
//!   serving model %s` and `non-default args: {…}` (common/startup.py:18,96), `Starting
//!   vLLM server on %s` (launchers/api_server/entry.py:139); a worker logs `Using
//!   'FLASHINFER_CUTEDSL' NvFp4 MoE backend out of potential backends: […]`
//!   (model_executor/layers/fused_moe/oracle/nvfp4.py:239-243,270), a headless rank only
//!   that. Format `(%(process_name)s pid=%(process)d) %(levelname)s %(asctime)s
//!   [%(fileinfo)s:%(lineno)d] %(message)s`, date `%m-%d %H:%M:%S` (vllm/logger.py:28-33).

use std::net::SocketAddr;
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
use crate::dialect::ok_json;
use crate::dialect::pyrepr::{self, Py};
use crate::dialect::request::{Api, ContextRule, Rules};
use crate::dialect::rng::{mix3, splitmix64};
use crate::dialect::tokenize;
use crate::dialect::{ChunkShape, Ctx, Dialect, Snapshot};
use crate::dialect::{Served, WireParams};

mod chunks;
mod metrics;
mod profiler;

pub(crate) use chunks::Shape;

/// vLLM's rules for the shared request fields; another model name is refused here with
/// vLLM's own message.
pub(super) fn check(
    api: Api,
    obj: &Map<String, Value>,
    config: &Served,
) -> Result<Rules, ApiError> {
    check_model(obj.get("model").and_then(Value::as_str), &config.model)?;
    Ok(Rules {
        check_model: false,
        context: context_rule(config.wire.engine_version.as_deref()),
        // vLLM's own fields (openai/completion/protocol.py, chat_completion/protocol.py).
        tokens_as_ids: true,
        ..Rules::of(&super::VLLM, api)
    })
}

/// What a request beyond `--max-model-len` gets: by default a refusal, as 0.26.0 answered
/// on an H100 (renderers/params.py:433-452, transcripts/0.26.0/
/// completions-context-overflow.http); with `--engine-version` 0.33.0 or later its
/// `max_tokens` is cut to what the context leaves, silently, and only a prompt beyond the
/// context alone is refused (0.33.0 serve/utils/api_utils.py:233-264, renderers/params.py:
/// 225-236, 537-551; the profile's `context_clip`).
pub(crate) fn context_rule(version: Option<&str>) -> ContextRule {
    let clip = super::VLLM.context_clip.map(|c| c.clips_in);
    match (version.and_then(release), clip.and_then(release)) {
        (Some(v), Some(since)) if v >= since => ContextRule::CutMaxTokens,
        _ => ContextRule::Total,
    }
}

/// `major.minor.patch` of a version such as `0.33.0` or `0.33.1rc2`.
fn release(v: &str) -> Option<(u32, u32, u32)> {
    let mut parts = v.split('.').map(|p| {
        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// vLLM's 404 for another model name.
pub(crate) fn check_model(requested: Option<&str>, served: &str) -> Result<(), ApiError> {
    match requested {
        Some(m) if !m.is_empty() && m != served => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("The model `{m}` does not exist. Valid aliases: {served}."),
        )),
        _ => Ok(()),
    }
}

/// `vllm-<version>[-tpN]-<hash8>`: the fingerprint of the server's configuration.
pub(super) fn fingerprint(config: &Served) -> String {
    let mut parts = vec![format!("vllm-{}", Vllm.reported_version(&config.wire))];
    if config.wire.tp_size > 1 {
        parts.push(format!("tp{}", config.wire.tp_size));
    }
    let h = mix3(
        fnv(&config.model),
        u64::from(config.max_model_len),
        u64::from(config.max_num_seqs),
    );
    parts.push(format!("{:08x}", h >> 32));
    parts.join("-")
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

pub(super) fn routes() -> Router<Arc<Host>> {
    Router::new()
        .route("/health", get(health))
        .route("/version", get(version))
        .route("/v1/models", get(models))
        .route("/load", get(load))
        .route("/tokenize", post(tokenize))
        .route("/detokenize", post(detokenize))
        .merge(profiler::routes())
}

async fn health(State(st): State<Arc<Host>>) -> Response {
    if st.ready() {
        StatusCode::OK.into_response()
    } else {
        // EngineDeadError → 503 with an empty body (serve/instrumentator/health.py).
        StatusCode::SERVICE_UNAVAILABLE.into_response()
    }
}

async fn version(State(st): State<Arc<Host>>) -> Response {
    ok_json(Obj::new().f("version", st.version()).done())
}

async fn load(State(st): State<Arc<Host>>) -> Response {
    ok_json(Obj::new().f("server_load", &st.in_flight()).done())
}

async fn models(State(st): State<Arc<Host>>) -> Response {
    let c = &st.config;
    let created = st.created_unix;
    let perm_id = format!("modelperm-{:032x}", u128::from(splitmix64(created)) << 64);
    let permission = Obj::new()
        .f("id", &perm_id)
        .f("object", "model_permission")
        .f("created", &created)
        .f("allow_create_engine", &false)
        .f("allow_sampling", &true)
        .f("allow_logprobs", &true)
        .f("allow_search_indices", &false)
        .f("allow_view", &true)
        .f("allow_fine_tuning", &false)
        .f("organization", "*")
        .null("group")
        .f("is_blocking", &false)
        .done();
    let card = Obj::new()
        .f("id", &c.model)
        .f("object", "model")
        .f("created", &created)
        .f("owned_by", "vllm")
        .f("root", c.wire.model_path.as_deref().unwrap_or(&c.model))
        .null("parent")
        .f("max_model_len", &c.max_model_len)
        .r("permission", arr([permission]))
        .done();
    ok_json(Obj::new().f("object", "list").r("data", arr([card])).done())
}

async fn tokenize(State(st): State<Arc<Host>>, body: Result<Bytes, BytesRejection>) -> Response {
    let run = || -> Result<Response, ApiError> {
        let b = tokenize::tokenize_body(&st, body)?;
        check_model(b.model.as_deref(), &st.config.model)?;
        let tokens = match (b.prompt, b.messages) {
            (Some(p), None) => tokenize::prompt_ids(p)?,
            (None, Some(m)) => tokenize::message_ids(&m),
            _ => {
                return Err(ApiError::invalid(
                    "1 validation error: give `prompt` (TokenizeCompletionRequest) or \
                     `messages` (TokenizeChatRequest)",
                ));
            }
        };
        Ok(ok_json(
            Obj::new()
                .f("count", &tokens.len())
                .f("max_model_len", &st.config.max_model_len)
                .f("tokens", &tokens)
                .null("token_strs")
                .done(),
        ))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

async fn detokenize(State(st): State<Arc<Host>>, body: Result<Bytes, BytesRejection>) -> Response {
    let run = || -> Result<Response, ApiError> {
        let (model, text) = tokenize::detokenize_body(&st, body)?;
        check_model(model.as_deref(), &st.config.model)?;
        Ok(ok_json(Obj::new().f("prompt", &text).done()))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

/// `{"error": {message, type, param, code}}`; FastAPI's own `{"detail"}` for a route not
/// mounted (seen in transcripts/0.26.0/tokenize-v1.http, server-info.http).
pub(super) fn error_body(note: &ErrorNote) -> (StatusCode, String) {
    // The simulator's fallbacks (servebench-sim `endpoints.rs`): no such route, or not this
    // method; FastAPI/Starlette answers them itself, before any vLLM handler.
    if let Some(detail) = [
        ("no route for ", "Not Found"),
        ("method not allowed for ", "Method Not Allowed"),
    ]
    .iter()
    .find_map(|(p, d)| note.message.starts_with(p).then_some(*d))
    {
        return (note.status, Obj::new().f("detail", detail).done());
    }
    if let Some((prompt, max_tokens, limit)) = note.context {
        return context_error(note.status, prompt, max_tokens, limit);
    }
    let kind = match (note.validation, note.status) {
        (true, _) => "Bad Request",
        (_, StatusCode::NOT_FOUND) => "NotFoundError",
        (_, StatusCode::BAD_REQUEST) => "BadRequestError",
        (_, StatusCode::UNAUTHORIZED) => "Unauthorized",
        (_, StatusCode::SERVICE_UNAVAILABLE) => "ServiceUnavailableError",
        (_, StatusCode::TOO_MANY_REQUESTS) => "TooManyRequests",
        _ => "InternalServerError",
    };
    let param = match note.status {
        StatusCode::NOT_FOUND if note.message.contains("model") => Some("model".to_owned()),
        _ if note.validation => json_error_loc(&note.message),
        _ => None,
    };
    let error = Obj::new()
        .f("message", &note.message)
        .f("type", kind)
        .f("param", &param)
        .f("code", &note.status.as_u16())
        .done();
    (note.status, Obj::new().r("error", error).done())
}

/// A body that is not JSON: pydantic's `json_invalid` error has `loc` `('body', offset)`,
/// which 0.26.0 joins into `param` `body.<offset>` (entrypoints/serve/utils/server_utils.py:
/// 474-510; seen in transcripts/0.26.0/completions-not-json.http). The offset from the
/// simulator's parser's 1-based `column N` of a one-line body.
fn json_error_loc(message: &str) -> Option<String> {
    let rest = message.strip_prefix("invalid JSON body:")?;
    let col: u64 = rest.rsplit_once("column ")?.1.trim().parse().ok()?;
    Some(format!("body.{}", col.saturating_sub(1)))
}

/// A request beyond `--max-model-len`, as 0.26.0 refuses it: `max_tokens` alone beyond it
/// (renderers/params.py:217-229), else the prompt (:433-452), which the tokenizer cut at
/// `limit - max_tokens + 1` tokens (:311-333, hence "at least"); `VLLMValidationError`'s
/// ` (parameter=…, value=…)` (exceptions.py:93-100), its `parameter` the error's `param`.
fn context_error(
    status: StatusCode,
    prompt: u64,
    max_tokens: u64,
    limit: u64,
) -> (StatusCode, String) {
    let (message, param, value) = if max_tokens > limit {
        (
            format!(
                "max_tokens={max_tokens} cannot be greater than \
                 max_model_len=max_total_tokens={limit}. Please request fewer output tokens."
            ),
            "max_tokens",
            max_tokens,
        )
    } else {
        let cut = limit - max_tokens + 1;
        let (n, q) = match prompt >= cut {
            true => (cut, "at least "),
            false => (prompt, ""),
        };
        (
            format!(
                "This model's maximum context length is {limit} tokens. However, you \
                 requested {max_tokens} output tokens and your prompt contains {q}{n} input \
                 tokens, for a total of {q}{} tokens. Please reduce the length of the input \
                 prompt or the number of requested output tokens.",
                n + max_tokens
            ),
            "input_tokens",
            n,
        )
    };
    let error = Obj::new()
        .f(
            "message",
            &format!("{message} (parameter={param}, value={value})"),
        )
        .f("type", "BadRequestError")
        .f("param", param)
        .f("code", &status.as_u16())
        .done();
    (status, Obj::new().r("error", error).done())
}

/// `(APIServer pid=N) INFO 12-01 08:31:05 [file:line] message`.
fn line(process: &str, file: &str, lineno: u32, message: &str) -> String {
    format!(
        "({process} pid={}) INFO {} [{file}:{lineno}] {message}",
        std::process::id(),
        pyrepr::now("%m-%d %H:%M:%S")
    )
}

/// The API server's start-up lines, or a headless rank's (`worker`): only the worker's MoE
/// backend line.
pub(super) fn start_lines(config: &Served, worker: bool) -> Vec<String> {
    let mut out = Vec::new();
    if !worker {
        out.push(line(
            "APIServer",
            "startup.py",
            38,
            &format!(
                "vLLM server version {}, serving model {}",
                Vllm.reported_version(&config.wire),
                config.wire.model_path.as_deref().unwrap_or(&config.model)
            ),
        ));
        out.push(line(
            "APIServer",
            "startup.py",
            96,
            &format!("non-default args: {}", non_default_args(config).repr()),
        ));
    }
    if let Some(backend) = &config.wire.moe_backend {
        let process = if config.wire.tp_size > 1 {
            "Worker_TP0".to_owned()
        } else {
            "Worker".to_owned()
        };
        out.push(line(
            &process,
            "nvfp4.py",
            270,
            &format!(
                "Using '{}' NvFp4 MoE backend out of potential backends: ['FLASHINFER_TRTLLM', \
                 'FLASHINFER_CUTEDSL', 'FLASHINFER_CUTEDSL_BATCHED', 'FLASHINFER_CUTLASS', \
                 'VLLM_CUTLASS', 'MARLIN', 'HUMMING', 'EMULATION'].",
                backend.to_uppercase()
            ),
        ));
    }
    out
}

/// The arguments `vllm serve` would have been given that differ from its defaults, in
/// argparse's order of the simulator's flags.
fn non_default_args(config: &Served) -> Py {
    let model = config.wire.model_path.as_deref().unwrap_or(&config.model);
    let mut d = vec![
        ("model_tag", Py::str(model)),
        ("host", Py::str(&config.host.to_string())),
        ("port", Py::Int(i64::from(config.port))),
        ("model", Py::str(model)),
        ("max_model_len", Py::Int(i64::from(config.max_model_len))),
    ];
    if model != config.model {
        d.push(("served_model_name", Py::List(vec![Py::str(&config.model)])));
    }
    if config.wire.tp_size > 1 {
        d.push((
            "tensor_parallel_size",
            Py::Int(i64::from(config.wire.tp_size)),
        ));
    }
    d.push(("max_num_seqs", Py::Int(i64::from(config.max_num_seqs))));
    d.push((
        "max_num_batched_tokens",
        Py::Int(i64::from(config.max_batched_tokens)),
    ));
    if config.prefix_cache {
        d.push(("enable_prefix_caching", Py::Bool(true)));
    }
    if config.wire.cache_report {
        d.push(("enable_prompt_tokens_details", Py::Bool(true)));
    }
    if let Some(b) = &config.wire.moe_backend {
        d.push(("moe_backend", Py::str(b)));
    }
    Py::Dict(d.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// `Starting vLLM server on http://HOST:PORT`, once it listens.
pub(super) fn ready_lines(base_url: &str) -> Vec<String> {
    vec![line(
        "APIServer",
        "entry.py",
        139,
        &format!("Starting vLLM server on {base_url}"),
    )]
}

/// vLLM 0.33.0's dialect.
pub(crate) struct Vllm;

impl Dialect for Vllm {
    fn profile(&self) -> &'static Profile {
        &super::VLLM
    }

    fn about(&self) -> String {
        format!("vLLM {} (`vllm serve`)", self.version())
    }

    fn routes(&self) -> Router<Arc<Host>> {
        routes()
    }

    fn check_wire(&self, wire: &WireParams) -> Result<(), String> {
        profiler::config(wire.profiler.vllm_config.as_deref()).map(|_| ())
    }

    fn check(
        &self,
        api: Api,
        obj: &Map<String, Value>,
        config: &Served,
    ) -> Result<Rules, ApiError> {
        check(api, obj, config)
    }

    fn shape(&self, ctx: Ctx, config: &Served) -> Option<Box<dyn ChunkShape>> {
        Some(Box::new(Shape::new(ctx, config)))
    }

    fn start_lines(&self, config: &Served, _addr: SocketAddr) -> Vec<String> {
        start_lines(config, false)
    }

    fn worker_lines(&self, config: &Served) -> Vec<String> {
        start_lines(config, true)
    }

    fn ready_lines(&self, base_url: &str) -> Vec<String> {
        ready_lines(base_url)
    }

    fn error_body(&self, note: &ErrorNote) -> (StatusCode, String) {
        error_body(note)
    }

    /// prometheus_client's text format as 0.26.0's image writes it (seen in
    /// transcripts/0.26.0/metrics-before.http; older prometheus_client wrote `0.0.4`).
    fn metrics_content_type(&self) -> &'static str {
        "text/plain; version=1.0.0; charset=utf-8"
    }

    fn metrics_text(&self, model: &str, s: &Snapshot, _wire: &WireParams) -> String {
        metrics::vllm(model, s)
    }
}

#[cfg(test)]
mod tests;
