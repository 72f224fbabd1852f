//! vLLM's profiler routes (0.26.0, read in the PyPI wheel; paths relative to `vllm/`):
//! * `POST /start_profile` and `POST /stop_profile` answer 200 with an empty body, and exist
//!   only when `--profiler-config` names a profiler (entrypoints/serve/profile/
//!   api_router.py:21-46); a start while one runs, or a stop while none does, is ignored
//!   (profiler/wrapper.py:71-81, :126-138);
//! * `--profiler-config`: `profiler` (`torch`), `torch_profiler_dir` (required with
//!   `torch`: "torch_profiler_dir must be set when profiler is 'torch'", made absolute),
//!   `torch_profiler_with_stack` (default true), `torch_profiler_use_gzip` (true),
//!   `torch_profiler_dump_cuda_time_total` (true), `torch_profiler_record_shapes` (false),
//!   `ignore_frontend` (false) (config/profiler.py:37-85, :145-156);
//! * at the stop each worker writes its trace through torch's `tensorboard_trace_handler`,
//!   `<worker>.<time_ns>.pt.trace.json[.gz]` (profiler/wrapper.py:187-196), the worker
//!   named `dp<d>_pp<p>_tp<t>_dcp<c>_ep<e>_rank<r>` (v1/worker/gpu_worker.py:1190-1200,
//!   distributed/utils.py:696-728; of a MoE model the EP group spans DP×TP, so on one node
//!   `ep` is the TP rank, distributed/parallel_state.py:1894-1906), and its key-averages
//!   table `profiler_out_<local rank>.txt` beside them (wrapper.py:251-273); the API process
//!   writes a CPU-only trace `<host>_<pid>.async_llm.<time_ns>.pt.trace.json.gz` unless
//!   `ignore_frontend` (v1/engine/async_llm.py:178-200).
//!
//! Not reproduced: the `cuda` profiler, the delay/limit/schedule options, a URI directory,
//! the dotted `--profiler-config.KEY=VALUE` form (the simulator takes the JSON).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;

use crate::dialect::profiler::{self, Session, SimKernel};
use crate::dialect::{Host, Served, json_response};

/// What `--profiler-config` sets, as the simulator reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Config {
    dir: PathBuf,
    with_stack: bool,
    record_shapes: bool,
    gzip: bool,
    table: bool,
    ignore_frontend: bool,
}

/// `--profiler-config`'s JSON read as vLLM reads it: `None` without a profiler; vLLM's
/// refusal otherwise.
pub(crate) fn config(text: Option<&str>) -> Result<Option<Config>, String> {
    let Some(text) = text else { return Ok(None) };
    let v: Value = serde_json::from_str(text).map_err(|e| {
        format!("--profiler-config is vLLM's JSON of ProfilerConfig, e.g. '{{\"profiler\": \"torch\", \"torch_profiler_dir\": \"/tmp/traces\"}}': {e}")
    })?;
    let flag = |k: &str, d: bool| v.get(k).and_then(Value::as_bool).unwrap_or(d);
    match v.get("profiler").and_then(Value::as_str) {
        None => return Ok(None),
        Some("torch") => {}
        Some(other) => {
            return Err(format!(
                "--profiler-config: the simulator writes torch profiler traces only, got profiler `{other}` (write \"profiler\": \"torch\")"
            ));
        }
    }
    let dir = v
        .get("torch_profiler_dir")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .ok_or("torch_profiler_dir must be set when profiler is 'torch' (vLLM's refusal)")?;
    Ok(Some(Config {
        dir: std::path::absolute(dir).unwrap_or_else(|_| dir.into()),
        with_stack: flag("torch_profiler_with_stack", true),
        record_shapes: flag("torch_profiler_record_shapes", false),
        gzip: flag("torch_profiler_use_gzip", true),
        table: flag("torch_profiler_dump_cuda_time_total", true),
        ignore_frontend: flag("ignore_frontend", false),
    }))
}

pub(super) fn routes() -> Router<Arc<Host>> {
    Router::new()
        .route("/start_profile", post(start))
        .route("/stop_profile", post(stop))
}

/// FastAPI's 404 of a route not mounted.
fn not_found() -> Response {
    json_response(StatusCode::NOT_FOUND, r#"{"detail":"Not Found"}"#.into())
}

fn mounted(served: &Served) -> Option<Config> {
    config(served.wire.profiler.vllm_config.as_deref())
        .ok()
        .flatten()
}

async fn start(State(st): State<Arc<Host>>) -> Response {
    let Some(c) = mounted(&st.config) else {
        return not_found();
    };
    st.profiler.begin(Session {
        dir: c.dir,
        id: String::new(),
        cpu: true,
        gpu: true,
        with_stack: c.with_stack,
        record_shapes: c.record_shapes,
        steps_at_start: st.metrics().steps,
    });
    StatusCode::OK.into_response()
}

async fn stop(State(st): State<Arc<Host>>) -> Response {
    let Some(c) = mounted(&st.config) else {
        return not_found();
    };
    let Some(session) = st.profiler.end() else {
        return StatusCode::OK.into_response();
    };
    let host = st.clone();
    let written = tokio::task::spawn_blocking(move || write(&host, &session, &c)).await;
    match written {
        Ok(Ok(())) => StatusCode::OK.into_response(),
        Ok(Err(e)) => internal(&e.to_string()),
        Err(e) => internal(&e.to_string()),
    }
}

fn internal(e: &str) -> Response {
    json_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        serde_json::json!({"error": {"message": e, "type": "InternalServerError", "param": null, "code": 500}}).to_string(),
    )
}

/// The workers' traces and tables, and the API process's trace.
fn write(host: &Host, s: &Session, c: &Config) -> std::io::Result<()> {
    let ext = if c.gzip {
        ".pt.trace.json.gz"
    } else {
        ".pt.trace.json"
    };
    let step = profiler::step_kernels(&host.config);
    let now = host.metrics().steps;
    for r in 0..host.config.wire.tp_size {
        let worker = format!("dp0_pp0_tp{r}_dcp0_ep{r}_rank{r}");
        let path = s.dir.join(format!("{worker}.{}{ext}", profiler::unix_ns()));
        let mut t = s.trace(now, &step, r);
        t.gzip = c.gzip;
        profiler::write_trace(&path, &t)?;
        if c.table {
            std::fs::write(
                s.dir.join(format!("profiler_out_{r}.txt")),
                table(&step, s.steps(now)),
            )?;
        }
    }
    if !c.ignore_frontend {
        let host_name = std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into());
        let name = format!(
            "{host_name}_{}.async_llm.{}{ext}",
            std::process::id(),
            profiler::unix_ns()
        );
        let mut t = s.trace(now, &[], 0);
        t.gzip = c.gzip;
        profiler::write_trace(&s.dir.join(name), &t)?;
    }
    Ok(())
}

/// The key-averages table a worker writes beside its trace, sorted by CUDA time.
fn table(step: &[SimKernel], steps: u64) -> String {
    let mut by: Vec<(String, u64, f64)> = Vec::new();
    for k in step {
        match by.iter_mut().find(|(n, ..)| *n == k.name) {
            Some(e) => {
                e.1 += steps;
                e.2 += k.us * steps as f64;
            }
            None => by.push((k.name.clone(), steps, k.us * steps as f64)),
        }
    }
    by.sort_by(|a, b| b.2.total_cmp(&a.2));
    let rule = format!(
        "{}  {}  {}\n",
        "-".repeat(60),
        "-".repeat(14),
        "-".repeat(10)
    );
    let mut out = rule.clone();
    let _ = writeln!(
        out,
        "{:<60}  {:>14}  {:>10}",
        "Name", "Self CUDA", "# of Calls"
    );
    out.push_str(&rule);
    for (name, calls, us) in by {
        let short: String = name.chars().take(57).collect();
        let _ = writeln!(out, "{short:<60}  {:>12.3}ms  {calls:>10}", us / 1000.0);
    }
    out.push_str(&rule);
    out
}

#[cfg(test)]
mod tests {
    use super::config;

    #[test]
    fn the_profiler_config_is_read_as_vllm_reads_it() {
        assert_eq!(config(None), Ok(None));
        assert_eq!(config(Some("{}")), Ok(None));
        let c = config(Some(r#"{"profiler": "torch", "torch_profiler_dir": "/t", "torch_profiler_with_stack": false}"#))
            .expect("valid")
            .expect("a profiler");
        assert!(!c.with_stack && c.gzip && c.table && !c.ignore_frontend);
        let e = config(Some(r#"{"profiler": "torch"}"#)).expect_err("no dir");
        assert!(e.contains("torch_profiler_dir must be set"), "{e}");
        assert!(config(Some("torch")).is_err());
    }
}
