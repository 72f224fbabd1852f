//! Engine facts read wrong before (issue 38), replayed from each engine's real shape: the
//! transcripts in each engine's folder, crates/engines/src/<engine>/transcripts/<version>/
//! (each folder's README says where every file came from),
//! served by small in-test servers (127.0.0.1, port 0) against detection, the block-start
//! checks and the stream reader. Each test failed before the fix it names.

use axum::Router;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use servebench_engines::Engine;
use servebench_result::checks::{CheckOutcome, Guarantee};
use servebench_result::record::ErrorKind;
use servebench_runner::engine::{BlockPlan, Endpoint, block_checks, resolve};
use servebench_runner::loadgen::{ApiKind, Target, run_trial};

use crate::loadgen_support::{config, prompts};

/// A transcript: `path` under crates/engines/src/ (`<engine>/transcripts/<version>/<file>`).
fn fixture(path: &str) -> String {
    let p = format!("{}/../engines/src/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn json(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn target(base: &str, model: &str) -> Target {
    Target {
        base_url: base.to_owned(),
        api: ApiKind::Completions,
        model: model.into(),
        api_key: None,
        headers: Vec::new(),
        ca_file: None,
    }
}

fn spec() -> servebench_spec::SpecFile {
    let yaml = "apiVersion: servebench/v1alpha1\nkind: Experiment\nmetadata: {name: t}\nspec:\n  target: {base_url: http://127.0.0.1:1, model: m, api: openai-completions, tokenizer: none}\n  variants: [{name: a, baseline: true}]\n  workload: {dataset: {kind: random, input_tokens: 8, output_tokens: 8}, requests: 1}\n";
    servebench_spec::parse_str(yaml, "t.yaml")
        .expect("valid")
        .file
}

/// llama.cpp b11434's router, as its source answers (llamacpp/transcripts/b11434-router).
async fn llamacpp_router() -> String {
    async fn props(uri: Uri) -> Response {
        let body = match uri.query() {
            Some(q) if q.contains("model=qwen3-0.6b") => {
                fixture("llamacpp/transcripts/b11434-router/props-model.json")
            }
            _ => fixture("llamacpp/transcripts/b11434-router/props-router.json"),
        };
        json(StatusCode::OK, body)
    }
    async fn metrics(uri: Uri) -> Response {
        match uri.query() {
            Some(q) if q.contains("model=qwen3-0.6b") => (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
                fixture("llamacpp/transcripts/b11434-router/metrics-model.txt"),
            )
                .into_response(),
            _ => json(
                StatusCode::BAD_REQUEST,
                fixture("llamacpp/transcripts/b11434-router/metrics-no-model-400.json"),
            ),
        }
    }
    let app = Router::new()
        .route(
            "/v1/models",
            get(|| async {
                json(
                    StatusCode::OK,
                    fixture("llamacpp/transcripts/b11434-router/models.json"),
                )
            }),
        )
        .route("/props", get(props))
        .route("/metrics", get(metrics));
    serve(app).await
}

#[tokio::test]
async fn a_llamacpp_router_is_llamacpp_and_asked_per_model() {
    // Before: its `status` objects made it transformers serve; `/props` gave `n_ctx: 0` as
    // the context limit; `/metrics` answered 400 (no `?model=`).
    let base = llamacpp_router().await;
    let t = target(&base, "qwen3-0.6b");
    let ep = Endpoint::of(&t);
    let resolved = resolve(&ep, Engine::Auto).await.expect("answers");
    assert_eq!(
        resolved.profile.engine,
        Engine::Llamacpp,
        "{:?}",
        resolved.record
    );
    assert_eq!(resolved.record.version.as_deref(), Some("b11434-unknown"));
    let plan = BlockPlan::new(&spec(), &t, std::path::Path::new("."), resolved.profile);
    let (checks, limit) = block_checks(&ep, &resolved, "qwen3-0.6b", &plan, true).await;
    let limit = limit.expect("a limit");
    assert_eq!(
        limit.tokens, 4096,
        "the model's slot context, not the router's 0"
    );
    let metrics = checks
        .iter()
        .find(|c| c.guarantee == Guarantee::Metrics)
        .expect("metrics check");
    assert_eq!(metrics.outcome, CheckOutcome::Holds, "{}", metrics.detail);
    assert!(
        metrics.detail.contains("/metrics?model=qwen3-0.6b"),
        "{}",
        metrics.detail
    );
    assert_eq!(
        plan.metrics.as_ref().map(|(_, p)| p.as_str()),
        Some("/metrics?model=qwen3-0.6b")
    );
    // A model the router does not have: every request would be refused ("model 'x' not
    // found", server-models.cpp:1925-1928).
    let (checks, _) = block_checks(&ep, &resolved, "other", &plan, true).await;
    let served = checks
        .iter()
        .find(|c| c.guarantee == Guarantee::ModelServed)
        .expect("model check");
    assert_eq!(served.outcome, CheckOutcome::Fails, "{}", served.detail);
    assert!(served.is_blocking());
}

#[tokio::test]
async fn trtllm_without_iter_perf_stats_is_said_at_the_block_start() {
    // Before: the check was "holds" whenever the body merely contained the names' text,
    // and nothing said `enable_iter_perf_stats` was needed: telemetry stayed empty.
    for (file, holds) in [
        (
            "trtllm/transcripts/050f80de/prometheus-metrics-perf-only.txt",
            false,
        ),
        (
            "trtllm/transcripts/050f80de/prometheus-metrics-iter-stats.txt",
            true,
        ),
    ] {
        let text = fixture(file);
        let app = Router::new()
            .route(
                "/v1/models",
                get(|| async {
                    json(
                        StatusCode::OK,
                        r#"{"object":"list","data":[{"id":"llama","object":"model","created":0,"owned_by":"tensorrt_llm"}]}"#.into(),
                    )
                }),
            )
            .route("/prometheus/metrics", get(move || async move { text }));
        let base = serve(app).await;
        let t = target(&base, "llama");
        let ep = Endpoint::of(&t);
        let resolved = resolve(&ep, Engine::Auto).await.expect("answers");
        assert_eq!(resolved.profile.engine, Engine::Trtllm);
        let plan = BlockPlan::new(&spec(), &t, std::path::Path::new("."), resolved.profile);
        let (checks, _) = block_checks(&ep, &resolved, "llama", &plan, true).await;
        let c = checks
            .iter()
            .find(|c| c.guarantee == Guarantee::Metrics)
            .expect("metrics check");
        if holds {
            assert_eq!(c.outcome, CheckOutcome::Holds, "{}", c.detail);
            assert!(c.detail.contains("when a request finishes"), "{}", c.detail);
        } else {
            assert_eq!(c.outcome, CheckOutcome::Fails, "{}", c.detail);
            assert!(
                c.detail.contains("trtllm_num_requests_running"),
                "{}",
                c.detail
            );
            assert_eq!(
                c.set.as_deref(),
                Some("enable_iter_perf_stats: true (in --extra_llm_api_options)")
            );
        }
    }
}

#[tokio::test]
async fn a_tgi_streamed_error_is_a_failed_request_with_its_message() {
    // TGI answers a streamed request it refuses with HTTP 200, an error event and [DONE].
    use crate::loadgen_support::{Script, now, serve as serve_script};
    for file in [
        "tgi/transcripts/db931fcf/stream-overloaded.sse",
        "tgi/transcripts/db931fcf/stream-validation.sse",
    ] {
        let body: &'static str = Box::leak(fixture(file).into_boxed_str());
        let s = serve_script(Script::Stream(vec![now(body.as_bytes())])).await;
        let o = run_trial(&s.target(ApiKind::Completions), &config(1), &prompts(1, 8))
            .await
            .expect("ran");
        let r = &o.records[0];
        assert_eq!(
            r.error,
            Some(ErrorKind::ServerErrorEvent),
            "{file}: {:?}",
            r.error_detail
        );
        let detail = r.error_detail.as_deref().unwrap_or("");
        assert!(
            detail.starts_with("Model is overloaded")
                || detail.starts_with("Input validation error"),
            "{file}: the server's message, not its JSON: {detail}"
        );
    }
}
