//! The simulator's side of every engine (the `dialect` feature, which only `servebench-sim`
//! turns on): how an engine speaks on the wire, each fact read in that engine's source
//! (version and file named beside it). Each engine's folder holds its dialect
//! (`vllm/dialect/`, `tgi/dialect.rs`, …), an implementation of [`Dialect`] beside the
//! engine's facts; this module holds the trait and what the dialects share. The dependency
//! runs one way: each dialect is handed its engine's [`Profile`] ([`Dialect::profile`], from
//! its own folder) and the server that serves it picks the dialect once (the crate's `of`,
//! the table of engines) and hands it to what needs it ([`Host::dialect`]); nothing here
//! looks an engine up.
//!
//! What a dialect decides ([`Dialect`]):
//! * the endpoints besides generation (tokenize, info, version, models, health) and their
//!   bodies ([`Dialect::routes`]), and its Prometheus metrics (path, switch, text:
//!   [`Dialect::metrics_path`] and the rest);
//! * which request fields are accepted, refused or ignored ([`Dialect::check`],
//!   [`Dialect::adapt`], [`Dialect::over_limit`]);
//! * the chunks of a stream and the non-streamed body ([`Dialect::shape`]);
//! * the shape of error bodies ([`Dialect::restyle`], [`Dialect::stream_error`]);
//! * readiness during `--startup-delay-ms` ([`Dialect::readiness`]);
//! * the start-up log lines ([`Dialect::start_lines`], [`Dialect::ready_lines`]);
//! * SSE keep-alive comments ([`Dialect::ping`]);
//! * its profiler's routes, where the engine has them, within [`Dialect::routes`]; what
//!   they share is [`profiler`].
//!
//! What they share: the request parser ([`request`]), the error type ([`api_error`]), the
//! stream's chunk writers ([`chunk`], [`logprobs`]), the simulated model's tokenizer and
//! text ([`tokenizer`], [`text`], [`rng`]), the end of a sequence ([`finish`]), the
//! settings a dialect reads ([`Served`]), and the writers of JSON in an engine's key order
//! and of Python `repr()` ([`json`], [`pyrepr`]). A dialect reads the running server
//! through [`Host`], handed to it, and never reaches into the simulator: nothing here
//! depends on `servebench-sim`.

pub mod api_error;
pub mod chunk;
pub mod finish;
pub mod host;
pub mod json;
pub mod logprobs;
pub mod metrics;
pub mod profiler;
pub mod pyrepr;
pub mod request;
pub mod rng;
pub mod served;
pub mod text;
pub mod tokenize;
pub mod tokenizer;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

pub use api_error::{ApiError, ErrorNote};
pub use chunk::{Answer, ChunkShape, Ctx, DONE_EVENT, Owned, Tok};
pub use host::{Host, Live, Snapshot};
pub use served::{
    FlashAttn, ProfilerParams, Served, SglangLogForm, WireParams, engine_name, engine_named,
    engine_names,
};

use crate::{Engine, Profile};
use request::{Api, GenRequest, Rules, parse_generation};

/// What a dialect does before its server is ready (during `--startup-delay-ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
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

/// How one engine speaks: what its module decides, each method's default the behaviour
/// most engines share. Implemented once per engine, in the engine's folder beside its facts.
pub trait Dialect: Sync {
    /// The facts of the engine it speaks for, from its own folder (the profile the client
    /// reads): what the defaults below derive from.
    fn profile(&self) -> &'static Profile;

    /// The engine it speaks for (its profile's).
    fn engine(&self) -> Engine {
        self.profile().engine
    }

    /// The engine version whose wire format it follows (what its version endpoints report
    /// unless `--engine-version` says otherwise): its profile's.
    fn version(&self) -> &'static str {
        self.profile().release
    }

    /// One line on what it speaks, for `--engine`'s help (naming [`Dialect::version`]).
    fn about(&self) -> String;

    /// The version its version endpoints and start-up lines report: `--engine-version`,
    /// else [`Dialect::version`].
    fn reported_version<'a>(&self, wire: &'a WireParams) -> &'a str {
        wire.engine_version.as_deref().unwrap_or(self.version())
    }

    /// What it does before the server is ready.
    fn readiness(&self) -> Readiness {
        Readiness::Closed
    }

    /// Its answer to every route but `/v1/sim/*` while the server is not ready, where it
    /// answers them all alike (llama.cpp's 503 `Loading model`).
    fn while_loading(&self) -> Option<Response> {
        None
    }

    /// Its SSE keep-alive comment interval, where it sends them.
    fn ping(&self) -> Option<Duration> {
        None
    }

    /// Its endpoints besides generation, the metrics and the simulator's own `/v1/sim/*`.
    fn routes(&self) -> Router<Arc<Host>>;

    /// Its refusal of settings its engine would refuse at start-up (vLLM's
    /// `--profiler-config`).
    fn check_wire(&self, _wire: &WireParams) -> Result<(), String> {
        Ok(())
    }

    /// Its rules for the fields every engine shares, or its refusal of the request.
    fn check(&self, api: Api, obj: &Map<String, Value>, config: &Served)
    -> Result<Rules, ApiError>;

    /// A generation request validated and parsed as the engine does: by default the body
    /// must be an object, [`Dialect::check`] gives the rules, then [`Dialect::adapt`].
    fn admit(&self, api: Api, body: &[u8], config: &Served) -> Result<GenRequest, ApiError> {
        let obj = object(body)?;
        let rules = self.check(api, &obj, config)?;
        let mut req = parse_generation(api, body, config, &rules)?;
        self.adapt(&obj, &mut req, config)?;
        Ok(req)
    }

    /// What the engine changes in a parsed request beyond the shared fields (transformers
    /// serve's `generation_config`, SGLang's `priority`).
    fn adapt(
        &self,
        _obj: &Map<String, Value>,
        _req: &mut GenRequest,
        _config: &Served,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// The refusal of a request beyond its limit on requests at once (`in_flight` counting
    /// it), where it has one (TGI's `--max-concurrent-requests`, 128).
    fn over_limit(&self, _in_flight: u64) -> Option<ApiError> {
        None
    }

    /// How it answers a streamed request it refuses with `e`: its own response (`Ok`, TGI's
    /// HTTP 200, error event and `[DONE]`), or the error response (`Err(e)` back).
    fn stream_error(&self, e: ApiError) -> Result<Response, ApiError> {
        Err(e)
    }

    /// The chunks and bodies of one response; `None`: the simulator's fast path
    /// (`server::encode`).
    fn shape(&self, ctx: Ctx, config: &Served) -> Option<Box<dyn ChunkShape>>;

    /// The model name written into its chunks (`requested`: the request's `model`).
    fn chunk_model(&self, _requested: Option<&str>, served: &str) -> String {
        served.into()
    }

    /// The response id of a generation request: vLLM's, SGLang's and TensorRT-LLM's
    /// `cmpl-`/`chatcmpl-` and a hex id by default.
    fn response_id(&self, api: Api, hash: u64) -> String {
        format!(
            "{}-{:016x}{:016x}",
            api_prefix(api),
            hash,
            hash.rotate_left(17)
        )
    }

    /// Its start-up log lines (stderr), after the simulator's own start line.
    fn start_lines(&self, _config: &Served, _addr: SocketAddr) -> Vec<String> {
        Vec::new()
    }

    /// The lines a worker rank (`--worker`) of the engine prints.
    fn worker_lines(&self, _config: &Served) -> Vec<String> {
        Vec::new()
    }

    /// The lines it logs once the server listens at `base_url`.
    fn ready_lines(&self, _base_url: &str) -> Vec<String> {
        Vec::new()
    }

    /// Whether its middleware is mounted: error bodies rewritten by [`Dialect::restyle`],
    /// [`Dialect::while_loading`] answered. Every engine but the simulator's own.
    fn restyles(&self) -> bool {
        true
    }

    /// An error body in the engine's shape, with the status it is sent with.
    fn error_body(&self, note: &ErrorNote) -> (StatusCode, String);

    /// An error response in the engine's shape.
    fn restyle(&self, note: &ErrorNote) -> Response {
        let (status, body) = self.error_body(note);
        json_response(status, body)
    }

    /// Where its Prometheus metrics are served, as its engine's profile says (the
    /// client scrapes the same path); `None`: no metrics endpoint.
    fn metrics_path(&self) -> Option<&'static str> {
        self.profile().metrics.map(|m| m.path)
    }

    /// Its refusal of a metrics request, given the request's query parameters (a llama.cpp
    /// router's 400 without `?model=`).
    fn metrics_gate(
        &self,
        _host: &Host,
        _query: &std::collections::HashMap<String, String>,
    ) -> Option<Response> {
        None
    }

    /// Its answer at the metrics path when the metrics switch is off (`switched_on`), where
    /// its profile says the engine needs one ([`crate::MetricsFacts::enable`]): by default
    /// the route is not mounted, FastAPI's 404 `Not Found` (SGLang, TensorRT-LLM).
    fn metrics_off(&self, switched_on: bool) -> Option<Response> {
        let needs_switch = self.profile().metrics.is_some_and(|m| m.enable.is_some());
        (needs_switch && !switched_on)
            .then(|| ApiError::new(StatusCode::NOT_FOUND, "Not Found").into_response())
    }

    /// The `Content-Type` of its metrics text.
    fn metrics_content_type(&self) -> &'static str {
        "text/plain; charset=utf-8"
    }

    /// The engine records its metrics when a request finishes, so a server keeps the state of
    /// each finish for them ([`Live::at_last_finish`]): its profile's `written_on_finish`.
    fn records_on_finish(&self) -> bool {
        self.profile()
            .metrics
            .is_some_and(|m| m.written_on_finish.is_some())
    }

    /// The SSE keep-alive comment interval: `--sse-ping-ms`, else [`Dialect::ping`].
    fn ping_interval(&self, config: &Served) -> Option<Duration> {
        match config.wire.sse_ping_ms {
            Some(ms) => Some(Duration::from_millis(ms)),
            None => self.ping(),
        }
    }

    /// The state its metrics are written from: what the engine model says now, or, where its
    /// profile says the engine records its series when a request finishes
    /// ([`crate::MetricsFacts::written_on_finish`], TensorRT-LLM), what it said when the last
    /// one did; `None`: no series yet.
    fn metrics_snapshot(&self, host: &Host) -> Option<Snapshot> {
        if self.records_on_finish() {
            host.at_last_finish()
        } else {
            Some(host.metrics())
        }
    }

    /// Its metrics text; by default the simulator's own `servebench_sim_*` series.
    fn metrics_text(&self, _model: &str, s: &Snapshot, _wire: &WireParams) -> String {
        metrics::generic(s)
    }
}

/// The engine-specific routes (everything but generation and the simulator's own
/// `/v1/sim/*`), its Prometheus metrics among them.
pub fn routes(d: &dyn Dialect) -> Router<Arc<Host>> {
    d.routes().merge(metrics::routes(d))
}

/// How the dialect answers a request it refuses with `e`: a streamed one as
/// [`Dialect::stream_error`] says, the others with the error response (`Err(e)` back).
pub fn stream_refusal(d: &dyn Dialect, body: &[u8], e: ApiError) -> Result<Response, ApiError> {
    let streamed = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("stream").and_then(Value::as_bool))
        .unwrap_or(false);
    if streamed { d.stream_error(e) } else { Err(e) }
}

/// Middleware of every dialect that restyles: before the server is ready, llama.cpp
/// answers every route 503 `Loading model`; error bodies are rewritten in the engine's
/// shape.
pub async fn personality_layer(
    State(host): State<Arc<Host>>,
    req: Request,
    next: Next,
) -> Response {
    let d = host.dialect();
    if !host.ready()
        && !req.uri().path().starts_with("/v1/sim/")
        && let Some(r) = d.while_loading()
    {
        return r;
    }
    let resp = next.run(req).await;
    match resp.extensions().get::<ErrorNote>() {
        Some(note) => d.restyle(note),
        None => resp,
    }
}

/// `cmpl` or `chatcmpl`, the id prefix of an API.
pub(crate) fn api_prefix(api: Api) -> &'static str {
    match api {
        Api::Completions => "cmpl",
        Api::Chat => "chatcmpl",
    }
}

/// A uuid4-shaped id made from `h`.
pub(crate) fn uuid_like(h: u64) -> String {
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

/// A JSON response with a body already serialised.
pub fn json_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(body),
    )
        .into_response()
}

/// A 200 JSON response.
pub fn ok_json(body: String) -> Response {
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

/// Keys of `obj` outside the fields `profile` says its engine accepts on `api`
/// ([`crate::RequestFacts::accepts`]), sorted; none where the profile holds no such list.
pub(crate) fn unaccepted_keys(
    profile: &Profile,
    api: Api,
    obj: &Map<String, Value>,
) -> Vec<String> {
    let Some(a) = profile.request.accepts else {
        return Vec::new();
    };
    let known = match api {
        Api::Chat => a.chat,
        Api::Completions => a.completions,
    };
    unknown_keys(obj, known)
}

/// Keys of `obj` outside `known`, sorted.
pub(crate) fn unknown_keys(obj: &Map<String, Value>, known: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = obj
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .cloned()
        .collect();
    out.sort();
    out
}

#[cfg(test)]
pub(crate) mod tests;
