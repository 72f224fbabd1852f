//! SGLang's profiler routes (0.5.23, read in the PyPI wheel; 0.5.17's lines in brackets;
//! paths relative to `sglang/srt/`):
//! * `/start_profile` and `/stop_profile`, GET or POST, always mounted; the start takes an
//!   optional `ProfileReq` body and answers `Start profiling.\n`, the stop none and answers
//!   `Stop profiling. This will take some time.\n` (entrypoints/http_server.py:1221-1240
//!   [1137-1155]);
//! * `ProfileReq`: `output_dir` (else `SGLANG_TORCH_PROFILER_DIR`, default `/tmp`),
//!   `activities` (default `CPU`, `GPU`), `with_stack` and `record_shapes` (true unless the
//!   request says `false`), `profile_id` (default `str(time.time())`), `profile_prefix`
//!   (managers/io_struct.py:2374-2399 [1973-1997], managers/tokenizer_control_mixin.py:
//!   401-416 [369-385], managers/scheduler_components/profiler_manager.py:131-133
//!   [122-125]);
//! * a stop while none runs fails (`Profiling is not in progress. Call /start_profile
//!   first.`, profiler_manager.py:328-332): the tokenizer manager raises the scheduler's
//!   failure, which FastAPI answers 500 (tokenizer_control_mixin.py:424-428 [392-396]); a
//!   second start builds a second torch profiler, a failure where torch's `start` raises
//!   (:265-269 [246-250]; torch not read): the simulator answers it 500 too;
//! * the stop answers once every rank has exported its trace,
//!   `[<prefix>-]<profile_id>-TP-<tp rank>[-DP-<dp rank>].trace.json.gz` (profiler_manager.py:
//!   318-411 [298-385], on the default path: `SGLANG_PROFILE_V2` is off, environ.py:458).
//!
//! Not reproduced: `num_steps`/`start_step` (a profiler that stops itself), `MEM`, `RPD`,
//! `profile_by_stage`, `merge_profiles`.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use serde_json::Value;

use crate::dialect::Host;
use crate::dialect::json_response;
use crate::dialect::profiler::{self, Session};

pub(super) fn routes() -> Router<Arc<Host>> {
    Router::new()
        .route("/start_profile", get(start).post(start))
        .route("/stop_profile", get(stop).post(stop))
}

/// The scheduler's refusal, raised by the tokenizer manager: FastAPI's 500.
fn failed() -> Response {
    (StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error").into_response()
}

/// FastAPI's 422 of a body that is not JSON.
fn not_json() -> Response {
    json_response(
        StatusCode::UNPROCESSABLE_ENTITY,
        r#"{"detail":[{"type":"json_invalid","loc":["body",0],"msg":"JSON decode error"}]}"#.into(),
    )
}

/// What a `ProfileReq` body asks for; `None` for a body that is not JSON.
fn asked(st: &Host, body: &[u8]) -> Option<Session> {
    let v: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        serde_json::from_slice(body).ok()?
    };
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let not_false = |k: &str| v.get(k).and_then(Value::as_bool) != Some(false);
    let activities: Vec<String> = v
        .get("activities")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_else(|| vec!["CPU".into(), "GPU".into()]);
    let id = text("profile_id").unwrap_or_else(profiler::unix_secs_text);
    let id = match text("profile_prefix") {
        Some(p) if !p.is_empty() => format!("{p}-{id}"),
        _ => id,
    };
    let dir = text("output_dir").unwrap_or_else(|| st.config.wire.profiler.sglang_dir.clone());
    Some(Session {
        dir: PathBuf::from(dir),
        id,
        cpu: activities.iter().any(|a| a == "CPU"),
        gpu: activities.iter().any(|a| a == "GPU"),
        with_stack: not_false("with_stack"),
        record_shapes: not_false("record_shapes"),
        steps_at_start: st.metrics().steps,
    })
}

async fn start(State(st): State<Arc<Host>>, body: Bytes) -> Response {
    let Some(session) = asked(&st, &body) else {
        return not_json();
    };
    if !st.profiler.begin(session) {
        return failed();
    }
    answered("Start profiling.\n")
}

/// Starlette's `Response(content=…)` without a `media_type`: a 200 and no content-type
/// (entrypoints/http_server.py:1142-1155 of 0.5.17; seen in transcripts/0.5.17/
/// start-profile.http, stop-profile.http).
fn answered(text: &'static str) -> Response {
    Response::new(axum::body::Body::from(text))
}

async fn stop(State(st): State<Arc<Host>>) -> Response {
    let Some(session) = st.profiler.end() else {
        return failed();
    };
    let host = st.clone();
    let written = tokio::task::spawn_blocking(move || write(&host, &session)).await;
    match written {
        Ok(Ok(())) => answered("Stop profiling. This will take some time.\n"),
        _ => failed(),
    }
}

/// One trace per TP rank, written before the stop answers.
fn write(host: &Host, s: &Session) -> std::io::Result<()> {
    let w = &host.config.wire;
    let per_dp = (w.tp_size / w.dp_size.max(1)).max(1);
    profiler::write_ranks(&host.config, host.metrics().steps, s, w.tp_size, |r| {
        let dp = if w.dp_size > 1 {
            format!("-DP-{}", r / per_dp)
        } else {
            String::new()
        };
        format!("{}-TP-{r}{dp}.trace.json.gz", s.id)
    })
    .map(|_| ())
}
