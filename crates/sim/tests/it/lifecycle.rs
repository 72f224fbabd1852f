//! Start-up line, graceful shutdown and the open-file limit.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::json;

#[tokio::test]
async fn run_until_prints_one_listening_line_and_stops_gracefully() {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let mut out = Vec::new();
        let r = servebench_sim::run_until(fast(), &mut out, async {
            let _ = rx.await;
        })
        .await;
        (r, out)
    });
    // The line is written right after binding; let it serve a moment, then stop it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _ = tx.send(());
    let (r, out) = tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .unwrap_or_else(|_| panic!("shutdown hung"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.is_ok(), "{r:?}");
    let out = String::from_utf8(out).unwrap_or_default();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out:?}");
    let addr = lines[0].strip_prefix("servebench sim listening on http://127.0.0.1:");
    assert!(
        addr.is_some_and(|p| p.parse::<u16>().is_ok_and(|p| p > 0)),
        "{out:?}"
    );
}

#[tokio::test]
async fn graceful_shutdown_lets_in_flight_streams_finish() {
    let mut cfg = fast();
    cfg.engine.decode_base_ms = 5.0;
    let h = start(cfg).await;
    let c = client();
    let url = format!("{}/v1/completions", h.base_url());
    let inflight = tokio::spawn(async move {
        stream(
            &c,
            &url,
            &json!({"prompt": "x", "max_tokens": 100, "stream": true}),
        )
        .await
    });
    for _ in 0..500 {
        if h.stats().in_flight == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(h.stats().in_flight, 1, "the stream is in flight");
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    let r = inflight.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(r.done() && r.token_events().len() == 100, "{r:?}");
}

#[tokio::test]
async fn invalid_configs_and_busy_ports_are_errors() {
    let mut cfg = fast();
    cfg.faults.stall_rate = 2.0;
    assert!(matches!(
        servebench_sim::spawn(cfg).await,
        Err(servebench_sim::SimError::InvalidConfig(_))
    ));
    let h = start(fast()).await;
    let mut cfg = fast();
    cfg.port = h.addr().port();
    assert!(matches!(
        servebench_sim::spawn(cfg).await,
        Err(servebench_sim::SimError::Bind { .. })
    ));
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
