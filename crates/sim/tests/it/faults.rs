//! Every fault flag produces its fault.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

#[tokio::test]
async fn startup_delay_answers_503_until_ready() {
    let mut cfg = fast();
    cfg.faults.startup_delay_ms = 400;
    let t0 = Instant::now();
    let h = start(cfg).await;
    let c = client();
    let base = h.base_url();
    let status = |path: &'static str| {
        let c = c.clone();
        let url = format!("{base}{path}");
        async move {
            c.get(url)
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0)
        }
    };
    assert_eq!(status("/health").await, 503);
    assert_eq!(status("/v1/models").await, 503);
    let (s, v) = post_json(
        &c,
        &format!("{base}/v1/completions"),
        &json!({"prompt": "x"}),
    )
    .await;
    assert_eq!((s, v["error"]["code"].as_u64()), (503, Some(503)));
    assert_eq!(
        status("/v1/sim/info").await,
        200,
        "info answers during start-up"
    );
    let mut ready_after = None;
    for _ in 0..200 {
        if status("/health").await == 200 {
            ready_after = Some(t0.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let ready_after = ready_after.unwrap_or_else(|| panic!("never became ready"));
    assert!(
        ready_after >= Duration::from_millis(400),
        "ready after {ready_after:?}"
    );
    assert_eq!(status("/v1/models").await, 200);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn error_rates_answer_500_and_429() {
    let mut cfg = fast();
    cfg.faults.error_rate_500 = 0.5;
    cfg.faults.error_rate_429 = 0.5;
    let h = start(cfg).await;
    let c = client();
    let url = format!("{}/v1/completions", h.base_url());
    let mut seen = std::collections::BTreeMap::new();
    for _ in 0..30 {
        let (s, v) = post_json(
            &c,
            &url,
            &json!({"prompt": "x", "max_tokens": 2, "stream": true}),
        )
        .await;
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("injected")),
            "{v}"
        );
        *seen.entry(s).or_insert(0u64) += 1;
    }
    let st = h.stats();
    assert_eq!(
        seen.keys().copied().collect::<Vec<_>>(),
        vec![429, 500],
        "{seen:?}"
    );
    assert_eq!((seen[&500], seen[&429]), (st.injected_500, st.injected_429));
    assert_eq!(st.requests_failed, 30);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));

    let mut cfg = fast();
    cfg.faults.error_rate_500 = 0.2;
    let h = start(cfg).await;
    let mut errors = 0;
    for _ in 0..100 {
        let (s, _) = post_json(
            &c,
            &format!("{}/v1/completions", h.base_url()),
            &json!({"prompt": "x", "max_tokens": 1}),
        )
        .await;
        errors += u32::from(s == 500);
    }
    assert!((10..=30).contains(&errors), "{errors} errors at rate 0.2");
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn disconnect_rate_cuts_streams_mid_way() {
    let mut cfg = fast();
    cfg.faults.disconnect_rate = 1.0;
    let h = start(cfg).await;
    let c = client();
    let url = format!("{}/v1/completions", h.base_url());
    for _ in 0..5 {
        let r = stream(
            &c,
            &url,
            &json!({"prompt": "x", "max_tokens": 20, "stream": true}),
        )
        .await;
        assert_eq!(r.status, 200);
        assert!(r.error.is_some(), "the body must break off: {r:?}");
        assert!(!r.done());
        let n = r.token_events().len();
        assert!((1..20).contains(&n), "cut mid-stream after {n} tokens");
    }
    let resp = c
        .post(&url)
        .json(&json!({"prompt": "x", "max_tokens": 5}))
        .send()
        .await;
    let broken = match resp {
        Err(_) => true,
        Ok(r) => r.bytes().await.is_err(),
    };
    assert!(broken, "a non-streamed response is cut too");
    assert_eq!(h.stats().injected_disconnects, 6);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn stalls_pause_the_stream() {
    let mut cfg = fast();
    cfg.faults.stall_rate = 1.0;
    cfg.faults.stall_ms = 300;
    let h = start(cfg).await;
    let c = client();
    let r = stream(
        &c,
        &format!("{}/v1/completions", h.base_url()),
        &json!({"prompt": "x", "max_tokens": 10, "stream": true}),
    )
    .await;
    assert!(r.done() && r.token_events().len() == 10, "{r:?}");
    let tokens = r.token_events();
    let widest = tokens
        .windows(2)
        .map(|w| w[1].at - w[0].at)
        .max()
        .unwrap_or_default();
    assert!(
        widest >= Duration::from_millis(290),
        "largest gap {widest:?}"
    );
    assert!(
        tokens[0].at < Duration::from_millis(250),
        "the stall is mid-stream, not before the first token"
    );
    assert_eq!(h.stats().injected_stalls, 1);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn malformed_rate_sends_one_broken_event() {
    let mut cfg = fast();
    cfg.faults.malformed_rate = 1.0;
    let h = start(cfg).await;
    let c = client();
    for path in ["/v1/completions", "/v1/chat/completions"] {
        let body = json!({"prompt": "x", "messages": [{"role": "user", "content": "x"}],
                          "max_tokens": 8, "stream": true});
        let r = stream(&c, &format!("{}{path}", h.base_url()), &body).await;
        assert!(r.done(), "{r:?}");
        let broken: Vec<_> = r
            .events
            .iter()
            .filter(|e| e.data != "[DONE]" && e.json().is_none())
            .collect();
        assert_eq!(broken.len(), 1, "{:?}", r.events);
        assert_eq!(r.token_events().len(), 8, "no token is lost");
    }
    assert_eq!(h.stats().injected_malformed, 2);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn exit_after_requests_stops_the_server() {
    let mut cfg = fast();
    cfg.faults.exit_after_requests = Some(3);
    let h = start(cfg).await;
    let c = client();
    let url = format!("{}/v1/completions", h.base_url());
    // A long stream in flight when the server exits is cut.
    let long = tokio::spawn({
        let (c, url) = (c.clone(), url.clone());
        async move {
            stream(
                &c,
                &url,
                &json!({"prompt": "x", "max_tokens": 5000, "stream": true}),
            )
            .await
        }
    });
    for _ in 0..3 {
        let (s, _) = post_json(&c, &url, &json!({"prompt": "x", "max_tokens": 3})).await;
        assert_eq!(s, 200);
    }
    tokio::time::timeout(Duration::from_secs(5), h.exited())
        .await
        .unwrap_or_else(|_| panic!("the exit fault did not fire"));
    assert!(h.has_exited());
    let cut = long.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !cut.done() && cut.error.is_some(),
        "in-flight stream cut: {cut:?}"
    );
    let result = tokio::time::timeout(Duration::from_secs(5), h.wait()).await;
    assert!(
        matches!(
            result,
            Ok(Err(servebench_sim::SimError::InjectedExit { requests: 3 }))
        ),
        "{result:?}"
    );
    let after = client()
        .post(&url)
        .json(&json!({"prompt": "x"}))
        .send()
        .await;
    assert!(after.is_err(), "nothing listens any more");
}
