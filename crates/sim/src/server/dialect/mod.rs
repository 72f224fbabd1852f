//! Engine personalities (`--engine`): every fact about how one engine speaks on the wire,
//! read in that engine's source (version and file named beside each fact, and in
//! `docs/simulator.md`), lives in this module and its per-engine files. The rest of the
//! server asks this module; no engine is named anywhere else.
//!
//! What a personality decides:
//! * the endpoints besides generation (tokenize, info, version, models, health) and their
//!   bodies ([`routes`]);
//! * which request fields are accepted, refused or ignored ([`admit`]);
//! * the chunks of a stream and the non-streamed body ([`shape`]);
//! * the shape of error bodies ([`restyle`]);
//! * readiness during `--startup-delay-ms` ([`readiness`]);
//! * the start-up log lines ([`start_lines`], [`ready_lines`]);
//! * SSE keep-alive comments ([`ping`]);
//! * the Prometheus metrics' path and names (`metrics`).

mod chunk;
mod generic;
mod json;
mod llamacpp;
pub(crate) mod logprobs;
mod metrics;
mod pyrepr;
mod sglang;
mod tgi;
mod transformers;
mod trtllm;
mod vllm;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

pub(crate) use chunk::{Answer, ChunkShape, Ctx, DONE_EVENT, Owned, Tok};

use super::AppState;
use super::api_error::{ApiError, ErrorNote};
use super::wire::{Api, GenRequest, Rules, parse_generation};
use crate::config::{Engine, SimConfig};

/// What a personality does before its server is ready (during `--startup-delay-ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Readiness {
    /// The simulator's own: 503 on health, models, generation and the tokenizer; the info
    /// endpoints answer.
    Generic,
    /// SGLang: the HTTP server is up (the model is loaded) and warming up: `/health`,
    /// `/health_generate` and `/ready` answer 503, everything else is served
    /// (http_server.py:714-798).
    Warmup,
    /// llama.cpp: the HTTP server starts before the model loads and answers every route
    /// 503 `Loading model` until it is loaded (server-http.cpp:307-326, server.cpp).
    Loading,
    /// vLLM, TGI, TensorRT-LLM, transformers serve: nothing listens until the model is
    /// loaded, so connections are refused (vLLM binds its socket early but listens only in
    /// `serve_http`, launcher.py `create_server_socket`; transformers serve preloads a
    /// pinned model before uvicorn starts, model_manager.py).
    Closed,
}

/// The personality's readiness behaviour.
pub(crate) fn readiness(p: Engine) -> Readiness {
    match p {
        Engine::Auto | Engine::Openai => Readiness::Generic,
        Engine::Sglang => Readiness::Warmup,
        Engine::Llamacpp => Readiness::Loading,
        Engine::Vllm | Engine::Tgi | Engine::Trtllm | Engine::Transformers => Readiness::Closed,
    }
}

/// The SSE keep-alive comment interval: `--sse-ping-ms`, else the engine's default.
/// llama.cpp sends `:\n\n` after `sse_ping_interval` (30 s, common/common.h:626) of
/// silence (server-context.cpp); TGI's axum `Sse::keep_alive(KeepAlive::default())` (15 s,
/// router/src/server.rs); the others send none.
pub(crate) fn ping(config: &SimConfig) -> Option<Duration> {
    if let Some(ms) = config.wire.sse_ping_ms {
        return Some(Duration::from_millis(ms));
    }
    match config.wire.engine {
        Engine::Llamacpp => Some(Duration::from_secs(30)),
        Engine::Tgi => Some(Duration::from_secs(15)),
        _ => None,
    }
}

/// The engine-specific routes (everything but generation and the simulator's own
/// `/v1/sim/*`), its Prometheus metrics among them.
pub(crate) fn routes(p: Engine) -> Router<Arc<AppState>> {
    let engine = match p {
        Engine::Auto | Engine::Openai => generic::routes(),
        Engine::Sglang => sglang::routes(),
        Engine::Vllm => vllm::routes(),
        Engine::Llamacpp => llamacpp::routes(),
        Engine::Tgi => tgi::routes(),
        Engine::Trtllm => trtllm::routes(),
        Engine::Transformers => transformers::routes(),
    };
    engine.merge(metrics::routes(p))
}

/// Validates and parses a generation request as the personality's engine does.
pub(crate) fn admit(api: Api, body: &[u8], config: &SimConfig) -> Result<GenRequest, ApiError> {
    let p = config.wire.engine;
    if matches!(p, Engine::Auto | Engine::Openai) {
        return parse_generation(api, body, config, &Rules::generic());
    }
    let obj = object(body)?;
    let rules = match p {
        Engine::Sglang => sglang::check(api, &obj, config)?,
        Engine::Vllm => vllm::check(api, &obj, config)?,
        Engine::Llamacpp => llamacpp::check(api, &obj, config)?,
        Engine::Tgi => tgi::check(api, &obj, config)?,
        Engine::Trtllm => trtllm::check(api, &obj, config)?,
        Engine::Transformers => transformers::check(api, &obj, config)?,
        Engine::Auto | Engine::Openai => Rules::generic(),
    };
    let mut req = parse_generation(api, body, config, &rules)?;
    if p == Engine::Transformers {
        transformers::adapt(&obj, &mut req)?;
    }
    Ok(req)
}

/// The refusal of a request beyond the engine's limit on requests at once (`in_flight`
/// counting it), where the personality has one (TGI's `--max-concurrent-requests`, 128).
pub(crate) fn over_limit(config: &SimConfig, in_flight: u64) -> Option<ApiError> {
    match config.wire.engine {
        Engine::Tgi => tgi::over_limit(in_flight),
        _ => None,
    }
}

/// How a personality answers a streamed request it refuses with `e`: TGI with HTTP 200, an
/// error event and `[DONE]` (`Ok`); the others with the error response (`Err(e)` back).
pub(crate) fn stream_refusal(
    config: &SimConfig,
    body: &[u8],
    e: ApiError,
) -> Result<Response, ApiError> {
    let streamed = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("stream").and_then(Value::as_bool))
        .unwrap_or(false);
    match config.wire.engine {
        Engine::Tgi if streamed => Ok(tgi::stream_error(e)),
        _ => Err(e),
    }
}

/// The chunks and bodies of one response; `None` for the generic dialect, whose encoder
/// (`server::encode`) is the simulator's fast path.
pub(crate) fn shape(ctx: Ctx, config: &SimConfig) -> Option<Box<dyn ChunkShape>> {
    Some(match config.wire.engine {
        Engine::Auto | Engine::Openai => return None,
        Engine::Vllm => Box::new(vllm::Shape::new(ctx, config)),
        Engine::Sglang => Box::new(sglang::Shape::new(ctx, config)),
        Engine::Llamacpp => Box::new(llamacpp::Shape::new(ctx, config)),
        Engine::Tgi => Box::new(tgi::Shape::new(ctx, config)),
        Engine::Trtllm => Box::new(trtllm::Shape::new(ctx)),
        Engine::Transformers => Box::new(transformers::Shape::new(ctx)),
    })
}

/// The model name a personality writes into its chunks: SGLang and TensorRT-LLM echo the
/// request's (`model=request.model`, SGLang's default `"default"`), TGI the request's
/// unless it is `tgi` (server.rs `chat_completions`), the others their served name.
pub(crate) fn chunk_model(p: Engine, requested: Option<&str>, served: &str) -> String {
    match (p, requested) {
        (Engine::Sglang, None) => "default".into(),
        (Engine::Sglang | Engine::Trtllm, Some(m)) => m.into(),
        (Engine::Tgi, Some(m)) if m != "tgi" => m.into(),
        _ => served.into(),
    }
}

/// The response id of a generation request, in the engine's form.
pub(crate) fn response_id(p: Engine, api: Api, hash: u64) -> String {
    match p {
        // TGI sends an empty id (server.rs: `id: String::new()`).
        Engine::Tgi => String::new(),
        // transformers serve uses the request id, a uuid4 unless x-request-id is given.
        Engine::Transformers => uuid_like(hash),
        // llama.cpp: gen_chatcmplid() for both APIs, "chatcmpl-" and 32 random characters.
        Engine::Llamacpp => format!("chatcmpl-{:016x}{:016x}", hash, !hash),
        // vLLM, SGLang, TensorRT-LLM: "cmpl-"/"chatcmpl-" and a hex id.
        _ => format!(
            "{}-{:016x}{:016x}",
            match api {
                Api::Completions => "cmpl",
                Api::Chat => "chatcmpl",
            },
            hash,
            hash.rotate_left(17)
        ),
    }
}

fn uuid_like(h: u64) -> String {
    let l = h.rotate_left(29) ^ 0x9E37_79B9_7F4A_7C15;
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        h >> 32,
        (h >> 16) & 0xffff,
        h & 0xfff,
        0x8000 | (l >> 48) & 0x3fff,
        l & 0xffff_ffff_ffff
    )
}

/// The personality's start-up log lines (stderr), after the simulator's own start line.
pub(crate) fn start_lines(config: &SimConfig, addr: std::net::SocketAddr) -> Vec<String> {
    match config.wire.engine {
        Engine::Sglang => sglang::start_lines(config, addr),
        Engine::Vllm => vllm::start_lines(config, false),
        Engine::Llamacpp => llamacpp::start_lines(config),
        _ => Vec::new(),
    }
}

/// The lines a worker rank (`--worker`) of the personality's engine prints.
pub(crate) fn worker_lines(config: &SimConfig) -> Vec<String> {
    match config.wire.engine {
        Engine::Sglang => {
            let addr = std::net::SocketAddr::new(config.host, config.port);
            sglang::start_lines(config, addr)
        }
        Engine::Vllm => vllm::start_lines(config, true),
        _ => Vec::new(),
    }
}

/// The lines logged once the server is ready.
pub(crate) fn ready_lines(config: &SimConfig, base_url: &str) -> Vec<String> {
    match config.wire.engine {
        Engine::Sglang => sglang::ready_lines(),
        Engine::Vllm => vllm::ready_lines(base_url),
        Engine::Llamacpp => llamacpp::ready_lines(base_url),
        _ => Vec::new(),
    }
}

/// Middleware of every personality but the generic one: before the server is ready,
/// llama.cpp answers every route 503 `Loading model`; error bodies are rewritten in the
/// engine's shape.
pub(crate) async fn personality_layer(
    State(st): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    let p = st.config.wire.engine;
    if readiness(p) == Readiness::Loading
        && !st.ready()
        && !req.uri().path().starts_with("/v1/sim/")
    {
        return llamacpp::loading();
    }
    let resp = next.run(req).await;
    match resp.extensions().get::<ErrorNote>() {
        Some(note) => restyle(p, note),
        None => resp,
    }
}

/// An error body in the engine's shape.
pub(crate) fn restyle(p: Engine, note: &ErrorNote) -> Response {
    let (status, body) = match p {
        Engine::Auto | Engine::Openai => {
            return ApiError::new(note.status, note.message.clone()).into_response();
        }
        Engine::Sglang => sglang::error_body(note),
        Engine::Vllm => vllm::error_body(note),
        Engine::Llamacpp => llamacpp::error_body(note),
        Engine::Tgi => match tgi::rejection(note) {
            Some(r) => return r,
            None => tgi::error_body(note),
        },
        Engine::Trtllm => trtllm::error_body(note),
        Engine::Transformers => transformers::error_body(note),
    };
    json_response(status, body)
}

/// A JSON response with a body already serialised.
pub(crate) fn json_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(body),
    )
        .into_response()
}

/// A 200 JSON response.
pub(crate) fn ok_json(body: String) -> Response {
    json_response(StatusCode::OK, body)
}

/// The request body as a JSON object, or the schema error every engine gives.
fn object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ApiError::invalid("the request body must be a JSON object")),
        Err(e) => Err(ApiError::invalid(format!("invalid JSON body: {e}"))),
    }
}

/// Keys of `obj` outside `known`, sorted.
fn unknown_keys(obj: &Map<String, Value>, known: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = obj
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .cloned()
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests;
