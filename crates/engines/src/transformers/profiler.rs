//! The routes servebench's launcher `scripts/tserve_profiler.py` adds to transformers serve
//! (transformers serve itself has none), served with `--tserve-profiler`:
//! * `POST /start_profile` `{output_dir, activities}`: 409 while one runs, 400 without
//!   `output_dir`, 500 before the first request made a generation thread; else
//!   `{"started": 1, "output_dir": DIR}`;
//! * `POST /stop_profile`: 409 while none runs; else, once the trace is written (to a hidden
//!   `.…tmp` name, renamed when complete), `{"traces": [PATH], "errors": []}`, the trace
//!   `<output_dir>/tserve-<pid>-<n>.pt.trace.json` (plain JSON), `n` counting the starts.
//!   The launcher records `GPU` where there is one, the CPU operators otherwise; the
//!   simulator plays a GPU machine. Not reproduced: `SERVEBENCH_PROFILE_DIR`.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;
use bytes::Bytes;
use serde_json::{Value, json};

use crate::dialect::profiler::{self, Session};
use crate::dialect::{Host, json_response};

pub(super) fn routes() -> Router<Arc<Host>> {
    Router::new()
        .route("/start_profile", post(start))
        .route("/stop_profile", post(stop))
}

fn answer(status: StatusCode, v: &Value) -> Response {
    json_response(status, v.to_string())
}

fn not_found() -> Response {
    answer(StatusCode::NOT_FOUND, &json!({"detail": "Not Found"}))
}

async fn start(State(st): State<Arc<Host>>, body: Bytes) -> Response {
    if !st.config.wire.profiler.tserve {
        return not_found();
    }
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if st.profiler.running() {
        return answer(
            StatusCode::CONFLICT,
            &json!({"error": "the profiler is already running"}),
        );
    }
    let Some(dir) = v.get("output_dir").and_then(Value::as_str) else {
        return answer(
            StatusCode::BAD_REQUEST,
            &json!({"error": "no output_dir (body) or SERVEBENCH_PROFILE_DIR"}),
        );
    };
    if st.metrics().requests == 0 {
        return answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": "no generation thread yet: send one request before starting the profiler"}),
        );
    }
    let dir = std::path::absolute(dir).unwrap_or_else(|_| PathBuf::from(dir));
    let n = st.profiler.count_start();
    let cpu_only = v
        .get("activities")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().all(|x| x.as_str() == Some("CPU")));
    st.profiler.begin(Session {
        dir: dir.clone(),
        id: n.to_string(),
        cpu: cpu_only,
        gpu: !cpu_only,
        with_stack: false,
        record_shapes: false,
        steps_at_start: st.metrics().steps,
    });
    answer(
        StatusCode::OK,
        &json!({"started": 1, "output_dir": dir.display().to_string()}),
    )
}

async fn stop(State(st): State<Arc<Host>>) -> Response {
    if !st.config.wire.profiler.tserve {
        return not_found();
    }
    let Some(session) = st.profiler.end() else {
        return answer(
            StatusCode::CONFLICT,
            &json!({"error": "the profiler is not running"}),
        );
    };
    let host = st.clone();
    match tokio::task::spawn_blocking(move || write(&host, &session)).await {
        Ok(Ok(path)) => answer(
            StatusCode::OK,
            &json!({"traces": [path.display().to_string()], "errors": []}),
        ),
        Ok(Err(e)) => answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"traces": [], "errors": [e.to_string()]}),
        ),
        Err(e) => answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"traces": [], "errors": [e.to_string()]}),
        ),
    }
}

/// The trace, written under a hidden temporary name and renamed when complete.
fn write(host: &Host, s: &Session) -> std::io::Result<PathBuf> {
    let name = format!("tserve-{}-{}.pt.trace.json", std::process::id(), s.id);
    let tmp = s.dir.join(format!(".{name}.tmp"));
    let step = profiler::step_kernels(&host.config);
    let mut t = s.trace(host.metrics().steps, &step, 0);
    t.gzip = false;
    profiler::write_trace(&tmp, &t)?;
    let path = s.dir.join(name);
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}
