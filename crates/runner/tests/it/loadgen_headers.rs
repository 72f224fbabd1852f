//! `target.headers`: every request of both transports carries the extra headers (beside the
//! API key), and a header that cannot be sent is refused by name, its value never shown.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::post;

use crate::loadgen_support::{config, prompts};
use servebench_runner::loadgen::{ApiKind, LoadConfig, Target, Transport, run_trial};

const ANSWER: &str = "data: {\"choices\":[{\"text\":\" w\",\"finish_reason\":\"length\"}]}\n\n\
                      data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":1}}\n\n\
                      data: [DONE]\n\n";

type Seen = Arc<Mutex<Vec<(Option<String>, Option<String>)>>>;

async fn handler(State(seen): State<Seen>, headers: HeaderMap) -> Response {
    let get = |k: &str| {
        headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    seen.lock()
        .expect("lock")
        .push((get("x-tenant"), get("authorization")));
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(ANSWER))
        .expect("response")
}

async fn serve() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route("/v1/completions", post(handler))
        .with_state(Arc::clone(&seen));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}"), seen)
}

fn target(base_url: String, value: &str) -> Target {
    Target {
        base_url,
        api: ApiKind::Completions,
        model: "m".into(),
        api_key: Some("sk-k".into()),
        headers: vec![("X-Tenant".into(), value.into())],
        ca_file: None,
    }
}

#[tokio::test]
async fn every_request_carries_the_extra_headers() {
    for transport in [Transport::Lean, Transport::Reqwest] {
        let (url, seen) = serve().await;
        let cfg = LoadConfig {
            transport,
            ..config(3)
        };
        let out = run_trial(&target(url, "bench-7"), &cfg, &prompts(3, 1))
            .await
            .expect("runs");
        assert!(
            out.records.iter().all(|r| r.error.is_none()),
            "{transport:?}"
        );
        let seen = seen.lock().expect("lock").clone();
        assert_eq!(seen.len(), 3 + cfg.warmup_requests, "{transport:?}");
        for (tenant, auth) in seen {
            assert_eq!(tenant.as_deref(), Some("bench-7"), "{transport:?}");
            assert_eq!(auth.as_deref(), Some("Bearer sk-k"), "{transport:?}");
        }
    }
}

#[tokio::test]
async fn a_header_that_cannot_be_sent_is_refused_by_name() {
    let (url, _) = serve().await;
    for transport in [Transport::Lean, Transport::Reqwest] {
        let cfg = LoadConfig {
            transport,
            ..config(1)
        };
        let e = run_trial(&target(url.clone(), "s3cret\r\nx: y"), &cfg, &prompts(1, 1))
            .await
            .expect_err("refused");
        let msg = e.to_string();
        assert!(msg.contains("`X-Tenant`"), "{transport:?}: {msg}");
        assert!(
            !msg.contains("s3cret"),
            "{transport:?}: the value is not shown: {msg}"
        );
    }
}
