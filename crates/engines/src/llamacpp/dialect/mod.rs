//! llama.cpp's `llama-server` as vendored in llama-cpp-python 0.3.36
//! (`vendor/llama.cpp/tools/server/`). JSON objects are nlohmann `ordered_json` (insertion
//! order, common/json.cpp):
//! * requests: fields are read with defaults, unknown ones ignored; `max_tokens` and
//!   `max_completion_tokens` are aliases of `n_predict`, `ignore_eos` exists
//!   (server-schema.cpp:44-47,475); there is no `min_tokens`; the model name is not
//!   checked; a prompt of at least the slot's context is refused 400
//!   `exceed_context_size_error` with `n_prompt_tokens` and `n_ctx`, a longer request is
//!   cut at the context (server-context.cpp:3175-3192, 1860-1868: `truncated`, "length");
//! * completion chunks: one per token (`text`, `finish_reason: null`), then a final chunk
//!   with empty text, the finish, `usage` (always, with `prompt_tokens_details.
//!   cached_tokens`) and `timings` (server-task.cpp:320-412, 1073-1109;
//!   server-context.cpp:2083-2090: a stream's final result carries no text);
//! * chat chunks: the first token's partial adds a `{"role":"assistant","content":null}`
//!   chunk, deltas carry `content` or `reasoning_content` (server-chat.cpp:621-649), the
//!   final chunk an empty delta and the finish, then with `include_usage` a `choices: []`
//!   chunk with `usage`; `timings` ride on the last chunk (server-task.cpp:462-526,
//!   1111-1163); `system_fingerprint` is the build info `b<number>-<commit>`;
//! * the stream ends with `data: [DONE]`; an error mid-stream is `data: {"error": …}` and no
//!   `[DONE]`; after `sse_ping_interval` (30 s) of silence a `:` comment
//!   (server-context.cpp:4395-4490);
//! * `/health` `{"status":"ok"}`; `/props` with `default_generation_settings.n_ctx`
//!   (the slot's context), `total_slots`, `build_info` (server-context.cpp:4580-4625);
//!   `/v1/models` (`owned_by: "llamacpp"`, `meta.n_ctx`, with an Ollama-style `models`
//!   list, :4523-4578); `/tokenize` `{content}` → `{tokens}`, `{tokens: []}` for a body
//!   without `content`, `with_pieces` → `[{id, piece}]` (:5065-5103); `/detokenize` →
//!   `{content}`;
//! * errors `{"error": {code, message, type}}` (server-common.cpp:30-78,
//!   server-context.cpp:4224-4227); while loading, every route 503 `Loading model`
//!   (server-http.cpp:307-326);
//! * log lines `llama_context: flash_attn            = …` and the other context
//!   parameters (src/llama-context.cpp:308-316), `srv %12.*s: …` (server-common.h:35):
//!   `initializing, n_slots = …,
//!   n_ctx_slot = …` (server-context.cpp:1231), `model loaded`, `listening on …`
//!   (server.cpp:485,513).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use serde_json::{Map, Value};

use crate::Profile;
use crate::dialect::Host;
use crate::dialect::api_error::{ApiError, ErrorNote};
use crate::dialect::finish::{Finish, Timings};
use crate::dialect::json::{Obj, arr};
use crate::dialect::request::{Api, ContextRule, Rules};
use crate::dialect::tokenize;
use crate::dialect::{ChunkShape, Ctx, Dialect, Readiness, Snapshot};
use crate::dialect::{Served, WireParams};
use crate::dialect::{json_response, ok_json};

mod chunks;
mod metrics;
mod router;

pub(crate) use chunks::Shape;

/// llama.cpp's rules: its profile's (no `min_tokens`), no model check, a request cut at the
/// context; a router refuses a request naming no model or one it does not list.
pub(super) fn check(
    api: Api,
    obj: &Map<String, Value>,
    config: &Served,
) -> Result<Rules, ApiError> {
    if config.wire.router() {
        let name = obj.get("model").and_then(Value::as_str).unwrap_or("");
        if let Some(e) = router::refusal(config, name) {
            return Err(e);
        }
    }
    Ok(Rules {
        check_model: false,
        stream_options_need_stream: false,
        context: ContextRule::PromptOnly,
        // `logprobs: true` reads `top_logprobs` with a default of 20
        // (tools/server/server-common.cpp:1429-1438); completions' `logprobs: N` is an alias
        // of `n_probs` (server-schema.cpp:179-180).
        top_logprobs_default: 20,
        ..Rules::of(&super::LLAMACPP, api)
    })
}

/// The build info, `system_fingerprint` and `/props` `build_info`.
fn build_info(config: &Served) -> String {
    Llamacpp.reported_version(&config.wire).to_owned()
}

pub(super) fn routes() -> Router<Arc<Host>> {
    Router::new()
        .route("/health", get(health))
        .route("/v1/health", get(health))
        .route("/props", get(props))
        .route("/models", get(models))
        .route("/v1/models", get(models))
        .route("/tokenize", post(tokenize))
        .route("/detokenize", post(detokenize))
        .route("/chat/completions/input_tokens", post(input_tokens))
        .route("/v1/chat/completions/input_tokens", post(input_tokens))
}

async fn health() -> Response {
    ok_json(r#"{"status":"ok"}"#.into())
}

async fn props(State(st): State<Arc<Host>>, Query(q): Query<HashMap<String, String>>) -> Response {
    let c = &st.config;
    if c.wire.router() {
        if router::query_model(&q).is_empty() {
            return router::props(&build_info(c));
        }
        if let Some(refused) = router::get_refusal(c, &q) {
            return refused;
        }
    }
    let settings = Obj::new()
        .r(
            "params",
            Obj::new().f("n_predict", &-1).f("seed", &c.seed).done(),
        )
        .f("n_ctx", &c.max_model_len)
        .done();
    ok_json(
        Obj::new()
            .r("default_generation_settings", settings)
            .f("total_slots", &c.max_num_seqs)
            .f("model_alias", &c.model)
            .f("model_ftype", "F16")
            .f(
                "model_path",
                c.wire.model_path.as_deref().unwrap_or(&c.model),
            )
            .r(
                "modalities",
                r#"{"vision":false,"video":false,"audio":false}"#,
            )
            .f("endpoint_slots", &true)
            .f("endpoint_props", &false)
            .f("endpoint_metrics", &c.wire.enable_metrics)
            .f("chat_template", "")
            .f("bos_token", "")
            .f("eos_token", "")
            .f("build_info", &build_info(c))
            .f("is_sleeping", &false)
            .done(),
    )
}

async fn models(State(st): State<Arc<Host>>) -> Response {
    let c = &st.config;
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    if c.wire.router() {
        return router::models(c, created);
    }
    let ollama = Obj::new()
        .f("name", &c.model)
        .f("model", &c.model)
        .f("modified_at", "")
        .f("size", "")
        .f("digest", "")
        .f("type", "model")
        .f("description", "")
        .r("tags", r#"[""]"#)
        .r("capabilities", r#"["completion"]"#)
        .f("parameters", "")
        .r(
            "details",
            r#"{"parent_model":"","format":"gguf","family":"","families":[""],"parameter_size":"","quantization_level":""}"#,
        )
        .done();
    let meta = Obj::new()
        .f("vocab_type", &2)
        .f("n_vocab", &crate::dialect::tokenizer::VOCAB_SIZE)
        .f("n_ctx", &c.max_model_len)
        .f("n_ctx_train", &c.max_model_len)
        .f("n_embd", &4096)
        .f("n_params", &0)
        .f("size", &0)
        .f("ftype", "F16")
        .done();
    let info = Obj::new()
        .f("id", &c.model)
        .r("aliases", "[]")
        .r("tags", "[]")
        .f("object", "model")
        .f("created", &created)
        .f("owned_by", "llamacpp")
        .r("meta", meta)
        .done();
    ok_json(
        Obj::new()
            .r("models", arr([ollama]))
            .f("object", "list")
            .r("data", arr([info]))
            .done(),
    )
}

/// `POST /v1/chat/completions/input_tokens` (b11434 server.cpp:294-295; a router proxies it,
/// :245): the chat request rendered the way generation renders it and counted
/// (`handle_count_tokens`, server-context.cpp:5950-5998), `{"input_tokens": N, "object":
/// "response.input_tokens"}`.
async fn input_tokens(
    State(st): State<Arc<Host>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let run = || -> Result<Response, ApiError> {
        let raw = body.map_err(|e| ApiError::new(e.status(), e.body_text()))?;
        if st.config.wire.router()
            && let Some(e) = router::body_refusal(&st.config, &raw)
        {
            return Err(e);
        }
        let b = tokenize::tokenize_body(&st, Ok(raw))?;
        let Some(messages) = b.messages else {
            return Err(ApiError::bad_request("'messages' is required"));
        };
        let n = tokenize::message_ids(&messages).len();
        Ok(ok_json(
            Obj::new()
                .f("input_tokens", &n)
                .f("object", "response.input_tokens")
                .done(),
        ))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

async fn tokenize(State(st): State<Arc<Host>>, body: Result<Bytes, BytesRejection>) -> Response {
    let run = || -> Result<Response, ApiError> {
        let raw = body.map_err(|e| ApiError::new(e.status(), e.body_text()))?;
        if st.config.wire.router()
            && let Some(e) = router::body_refusal(&st.config, &raw)
        {
            return Err(e);
        }
        let with_pieces = serde_json::from_slice::<Value>(&raw)
            .ok()
            .and_then(|v| v.get("with_pieces").and_then(Value::as_bool))
            .unwrap_or(false);
        let b = tokenize::tokenize_body(&st, Ok(raw))?;
        let ids = match b.content {
            // A body without `content` gets an empty list, whatever else it holds
            // (`{"messages": …}` too).
            None => Vec::new(),
            Some(p) => tokenize::prompt_ids(p)?,
        };
        let tokens = if with_pieces {
            arr(ids.iter().map(|&id| {
                let mut piece = String::new();
                if let Ok(id32) = u32::try_from(id) {
                    crate::dialect::tokenizer::push_word(id32, &mut piece);
                }
                Obj::new().f("id", &id).f("piece", &piece).done()
            }))
        } else {
            serde_json::to_string(&ids).unwrap_or_default()
        };
        Ok(ok_json(Obj::new().r("tokens", tokens).done()))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

async fn detokenize(State(st): State<Arc<Host>>, body: Result<Bytes, BytesRejection>) -> Response {
    if st.config.wire.router()
        && let Ok(raw) = &body
        && let Some(e) = router::body_refusal(&st.config, raw)
    {
        return e.into_response();
    }
    match tokenize::detokenize_body(&st, body) {
        Ok((_, text)) => ok_json(Obj::new().f("content", &text).done()),
        Err(e) => e.into_response(),
    }
}

/// 503 `Loading model` on every route while the model loads.
pub(super) fn loading() -> Response {
    json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        r#"{"error":{"message":"Loading model","type":"unavailable_error","code":503}}"#.into(),
    )
}

/// `{"error": {code, message, type}}`, with `n_prompt_tokens` and `n_ctx` for a prompt too
/// long for the context.
pub(super) fn error_body(note: &ErrorNote) -> (StatusCode, String) {
    if let Some((prompt, _, ctx)) = note.context {
        let error = Obj::new()
            .f("code", &400)
            .f(
                "message",
                &format!(
                    "request ({prompt} tokens) exceeds the available context size ({ctx} \
                     tokens), try increasing it"
                ),
            )
            .f("type", "exceed_context_size_error")
            .f("n_prompt_tokens", &prompt)
            .f("n_ctx", &ctx)
            .done();
        return (StatusCode::BAD_REQUEST, Obj::new().r("error", error).done());
    }
    let kind = match note.status {
        StatusCode::BAD_REQUEST => "invalid_request_error",
        StatusCode::UNAUTHORIZED => "authentication_error",
        StatusCode::NOT_FOUND => "not_found_error",
        StatusCode::FORBIDDEN => "permission_error",
        StatusCode::NOT_IMPLEMENTED => "not_supported_error",
        StatusCode::SERVICE_UNAVAILABLE => "unavailable_error",
        _ => "server_error",
    };
    let error = Obj::new()
        .f("code", &note.status.as_u16())
        .f("message", &note.message)
        .f("type", kind)
        .done();
    (note.status, Obj::new().r("error", error).done())
}

fn srv(func: &str, message: &str) -> String {
    format!("srv  {func:>12.12}: {message}")
}

/// The model-loading lines: the context's parameters (src/llama-context.cpp:308-316,
/// `LLAMA_LOG_INFO("%s: n_seq_max             = %u\n", __func__, …)`), then the slots.
pub(super) fn start_lines(config: &Served) -> Vec<String> {
    let e = config;
    let ctx = |name: &str, value: String| format!("llama_context: {name:<21} = {value}");
    let n_ctx = u32::try_from(e.kv_capacity_tokens).unwrap_or(u32::MAX);
    vec![
        srv("main", "initializing ..."),
        ctx("n_seq_max", e.max_num_seqs.to_string()),
        ctx("n_ctx", n_ctx.to_string()),
        ctx("n_ctx_seq", e.max_model_len.to_string()),
        ctx("n_batch", e.max_batched_tokens.to_string()),
        ctx("n_ubatch", e.max_batched_tokens.min(512).to_string()),
        ctx("causal_attn", "1".into()),
        ctx("flash_attn", config.wire.flash_attn.log_name().into()),
        ctx("kv_unified", "true".into()),
        ctx("freq_base", "10000.0".into()),
        srv(
            "load_model",
            &format!(
                "initializing, n_slots = {}, n_ctx_slot = {}, kv_unified = 'true'",
                e.max_num_seqs, e.max_model_len
            ),
        ),
    ]
}

/// `model loaded`, `listening on …`.
pub(super) fn ready_lines(base_url: &str) -> Vec<String> {
    vec![
        srv("llama_server", "model loaded"),
        srv("llama_server", &format!("listening on {base_url}")),
    ]
}

/// llama.cpp's dialect.
pub(crate) struct Llamacpp;

impl Dialect for Llamacpp {
    fn profile(&self) -> &'static Profile {
        &super::LLAMACPP
    }

    fn version(&self) -> &'static str {
        // llama.cpp built from the llama-cpp-python sdist has no git: build 0, commit
        // "unknown" (cmake/build-info.cmake), so llama_build_info() is "b0-unknown".
        "b0-unknown"
    }

    fn about(&self) -> String {
        "llama.cpp's `llama-server` as vendored in llama-cpp-python 0.3.36".into()
    }

    fn readiness(&self) -> Readiness {
        Readiness::Loading
    }

    fn while_loading(&self) -> Option<Response> {
        Some(loading())
    }

    /// `sse_ping_interval`, 30 s of silence (common/common.h:626, server-context.cpp).
    fn ping(&self) -> Option<Duration> {
        Some(Duration::from_secs(30))
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

    fn shape(&self, ctx: Ctx, config: &Served) -> Option<Box<dyn ChunkShape>> {
        Some(Box::new(Shape::new(ctx, config)))
    }

    /// gen_chatcmplid() for both APIs: "chatcmpl-" and 32 random characters.
    fn response_id(&self, _api: Api, hash: u64) -> String {
        format!("chatcmpl-{:016x}{:016x}", hash, !hash)
    }

    fn start_lines(&self, config: &Served, _addr: SocketAddr) -> Vec<String> {
        start_lines(config)
    }

    fn ready_lines(&self, base_url: &str) -> Vec<String> {
        ready_lines(base_url)
    }

    fn error_body(&self, note: &ErrorNote) -> (StatusCode, String) {
        error_body(note)
    }

    /// 501 without `--metrics` (server-context.cpp:4655-4660).
    /// A router answers `/metrics` only for a model it lists, named by `?model=`.
    fn metrics_gate(&self, host: &Host, query: &HashMap<String, String>) -> Option<Response> {
        if !host.config.wire.router() {
            return None;
        }
        router::get_refusal(&host.config, query)
    }

    fn metrics_off(&self, switched_on: bool) -> Option<Response> {
        (!switched_on).then(|| {
            ApiError::new(
                StatusCode::NOT_IMPLEMENTED,
                "This server does not support metrics endpoint. Start it with `--metrics`",
            )
            .into_response()
        })
    }

    fn metrics_content_type(&self) -> &'static str {
        "text/plain; version=0.0.4"
    }

    fn metrics_text(&self, _model: &str, s: &Snapshot, _wire: &WireParams) -> String {
        metrics::llamacpp(s)
    }
}

#[cfg(test)]
mod tests;
