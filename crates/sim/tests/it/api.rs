//! The HTTP surface: endpoints, shapes, tokenizer contract and errors.

use crate::common;

use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn health_models_and_info() {
    let mut cfg = fast();
    cfg.label = "variant-a".into();
    cfg.seed = 42;
    let h = start(cfg).await;
    let c = client();
    let base = h.base_url();
    let resp = c
        .get(format!("{base}/health"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(resp.status(), 200);
    let (s, models) = get_json(&c, &format!("{base}/v1/models")).await;
    assert_eq!(s, 200);
    assert_eq!(models["object"], "list");
    assert_eq!(models["data"][0]["id"], "sim-model");
    for path in ["/v1/sim/info", "/server_info"] {
        let (s, info) = get_json(&c, &format!("{base}{path}")).await;
        assert_eq!(s, 200);
        assert_eq!(info["server"], "servebench-sim");
        assert_eq!(info["label"], "variant-a");
        assert_eq!(info["seed"], 42);
        assert_eq!(info["preset"], "fast");
        assert_eq!(info["version"], servebench_sim::VERSION);
        assert_eq!(info["engine"]["decode_base_ms"], 1.0);
        assert_eq!(info["engine"]["max_num_seqs"], 256);
        assert_eq!(info["faults"]["error_rate_500"], 0.0);
        assert_eq!(info["tokenizer"]["kind"], "whitespace");
        assert!(info["speed_factor"].is_number());
    }
    assert_eq!(h.info().label, "variant-a");
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn tokenize_and_detokenize_follow_the_documented_contract() {
    let h = start(fast()).await;
    let c = client();
    let url = |p: &str| format!("{}{p}", h.base_url());
    let (s, v) = post_json(
        &c,
        &url("/tokenize"),
        &json!({"prompt": " one  two\nthree "}),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(v["count"], 3);
    assert_eq!(v["tokens"].as_array().map(Vec::len), Some(3));
    let (_, v) = post_json(&c, &url("/tokenize"), &json!({"content": "a b"})).await;
    assert_eq!(v["tokens"], json!([0, 1]));
    let (_, v) = post_json(
        &c,
        &url("/tokenize"),
        &json!({"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "y z"}]}),
    )
    .await;
    assert_eq!(v["count"], 3 + 2 * 2 + 1);
    // Any ids → text → the same ids.
    let ids: Vec<u64> = (0..200).map(|i| (i * 7919) % 50_000).collect();
    let (s, v) = post_json(&c, &url("/detokenize"), &json!({"tokens": ids})).await;
    assert_eq!(s, 200);
    let text = v["prompt"].as_str().unwrap_or_default().to_owned();
    let (_, v) = post_json(&c, &url("/tokenize"), &json!({"prompt": text})).await;
    assert_eq!(v["tokens"], json!(ids));
    let (s, v) = post_json(&c, &url("/detokenize"), &json!({"tokens": [50_000]})).await;
    assert_eq!(s, 400);
    assert_eq!(v["error"]["code"], 400);
    // The prompt count used by generation is the tokenizer's.
    let (_, v) = post_json(
        &c,
        &url("/v1/completions"),
        &json!({"prompt": prompt(37), "max_tokens": 2}),
    )
    .await;
    assert_eq!(v["usage"]["prompt_tokens"], 37);
    let (_, v) = post_json(
        &c,
        &url("/v1/chat/completions"),
        &json!({"messages": [{"role": "user", "content": prompt(10)}], "max_tokens": 2}),
    )
    .await;
    assert_eq!(v["usage"]["prompt_tokens"], 13);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn non_streamed_responses_carry_usage_and_timings() {
    let h = start(fast()).await;
    let c = client();
    let (s, v) = post_json(
        &c,
        &format!("{}/v1/completions", h.base_url()),
        &json!({"model": "sim-model", "prompt": prompt(5), "max_tokens": 7, "temperature": 0.5}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["object"], "text_completion");
    assert!(v["id"].as_str().is_some_and(|id| id.starts_with("cmpl-")));
    let text = v["choices"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(text.split_whitespace().count(), 7);
    assert_eq!(v["choices"][0]["finish_reason"], "length");
    assert_eq!(
        v["usage"],
        json!({"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12})
    );
    let t = &v["timings"];
    for k in [
        "queue_ms",
        "prompt_ms",
        "ttft_ms",
        "predicted_ms",
        "predicted_per_token_ms",
        "e2e_ms",
    ] {
        assert!(t[k].as_f64().is_some_and(|x| x >= 0.0), "{k} in {t}");
    }
    assert_eq!(
        (t["prompt_n"].as_u64(), t["predicted_n"].as_u64()),
        (Some(5), Some(7))
    );

    let (s, v) = post_json(
        &c,
        &format!("{}/v1/chat/completions", h.base_url()),
        &json!({"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 4}),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["choices"][0]["message"]["role"], "assistant");
    assert_eq!(v["usage"]["completion_tokens"], 4);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn completion_streams_end_with_usage_and_done() {
    let h = start(fast()).await;
    let c = client();
    let url = format!("{}/v1/completions", h.base_url());
    let body = json!({"prompt": prompt(4), "max_tokens": 12, "stream": true, "ignore_eos": true,
                      "stream_options": {"include_usage": true}});
    let r = stream(&c, &url, &body).await;
    assert_eq!(r.status, 200);
    assert!(r.error.is_none() && r.done(), "{r:?}");
    assert_eq!(r.token_events().len(), 12, "one event per token");
    let usage = r.last_json().unwrap_or_default();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["completion_tokens"], 12);
    assert_eq!(usage["timings"]["predicted_n"], 12);
    let finals: Vec<Value> = r
        .events
        .iter()
        .filter_map(|e| e.json())
        .filter(|v| !v["choices"][0]["finish_reason"].is_null())
        .collect();
    assert_eq!(finals.len(), 1);
    assert_eq!(finals[0]["choices"][0]["finish_reason"], "length");
    assert!(finals[0]["timings"]["ttft_ms"].is_number());

    // Without include_usage: no usage chunk, the finish chunk carries the timings.
    let body = json!({"prompt": "x", "max_tokens": 3, "stream": true});
    let r = stream(&c, &url, &body).await;
    assert!(r.done());
    assert_eq!(r.events.len(), 3 + 1);
    assert!(
        r.events
            .iter()
            .filter_map(|e| e.json())
            .all(|v| v.get("usage").is_none())
    );
    assert!(
        r.last_json()
            .is_some_and(|v| v["timings"]["predicted_n"] == 3)
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn chat_streams_start_with_a_role_only_chunk() {
    let h = start(fast()).await;
    let r = stream(
        &client(),
        &format!("{}/v1/chat/completions", h.base_url()),
        &json!({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "stream": true,
                "stream_options": {"include_usage": true}}),
    )
    .await;
    assert!(r.done(), "{r:?}");
    let first = r.events[0].json().unwrap_or_default();
    assert_eq!(first["object"], "chat.completion.chunk");
    assert_eq!(
        first["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    assert_eq!(r.token_events().len(), 5);
    assert_eq!(
        r.last_json().map(|v| v["usage"]["prompt_tokens"].clone()),
        Some(json!(4))
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn eos_stops_early_unless_ignored_and_never_before_min_tokens() {
    let mut cfg = fast();
    cfg.engine.eos_mean_tokens = 5.0;
    let h = start(cfg).await;
    let c = client();
    let url = format!("{}/v1/completions", h.base_url());
    let mut early = 0;
    for _ in 0..10 {
        let (_, v) = post_json(&c, &url, &json!({"prompt": "x", "max_tokens": 60})).await;
        let n = v["usage"]["completion_tokens"].as_u64().unwrap_or(0);
        assert!((1..=60).contains(&n));
        if n < 60 {
            early += 1;
            assert_eq!(v["choices"][0]["finish_reason"], "stop");
        }
        let (_, v) = post_json(
            &c,
            &url,
            &json!({"prompt": "x", "max_tokens": 60, "min_tokens": 40}),
        )
        .await;
        assert!(v["usage"]["completion_tokens"].as_u64().unwrap_or(0) >= 40);
        let (_, v) = post_json(
            &c,
            &url,
            &json!({"prompt": "x", "max_tokens": 60, "ignore_eos": true}),
        )
        .await;
        assert_eq!(v["usage"]["completion_tokens"], 60);
        assert_eq!(v["choices"][0]["finish_reason"], "length");
    }
    assert!(
        early >= 8,
        "with a mean of 5 tokens nearly all stop early ({early}/10)"
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn bad_requests_get_openai_style_errors() {
    let h = start(fast()).await;
    let c = client();
    let base = h.base_url();
    let cases: [(&str, Value, u16); 5] = [
        ("/v1/completions", json!({"max_tokens": 3}), 400),
        (
            "/v1/completions",
            json!({"prompt": "a", "model": "gpt-9"}),
            404,
        ),
        (
            "/v1/completions",
            json!({"prompt": "a", "max_tokens": 100_000}),
            400,
        ),
        ("/v1/chat/completions", json!({"messages": "hi"}), 400),
        ("/v1/nope", json!({}), 404),
    ];
    for (path, body, status) in cases {
        let (s, v) = post_json(&c, &format!("{base}{path}"), &body).await;
        assert_eq!(s, status, "{path} {body}");
        let e = &v["error"];
        assert!(e["message"].is_string() && e["type"].is_string(), "{v}");
        assert_eq!(e["code"], status);
    }
    let resp = c
        .post(format!("{base}/v1/completions"))
        .body("{not json")
        .send()
        .await;
    let resp = resp.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(resp.status(), 400);
    let resp = c
        .get(format!("{base}/v1/completions"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(resp.status(), 405);
    let v: Value = resp.json().await.unwrap_or_default();
    assert_eq!(v["error"]["code"], 405);
    let s = h.stats();
    assert_eq!(
        (s.requests_failed, s.requests_served, s.in_flight),
        (5, 0, 0)
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn stats_count_in_flight_requests() {
    let mut cfg = fast();
    cfg.engine.decode_base_ms = 5.0;
    let h = start(cfg).await;
    let c = client();
    let url = format!("{}/v1/completions", h.base_url());
    // 100 steps of 5 ms: long enough for all five to be in flight at once, even on a busy host.
    let body = json!({"prompt": "x", "max_tokens": 100, "stream": true});
    let reqs = (0..5).map(|_| stream(&c, &url, &body));
    let results = futures_util::future::join_all(reqs).await;
    assert!(results.iter().all(Streamed::done));
    let s = h.stats();
    assert_eq!(s.max_in_flight, 5);
    assert_eq!(s.in_flight, 0);
    assert_eq!(
        (s.requests_received, s.requests_served, s.tokens_generated),
        (5, 5, 500)
    );
    h.reset_peak();
    assert_eq!(h.stats().max_in_flight, 0);
    let (_, v) = get_json(&c, &format!("{}/v1/sim/stats", h.base_url())).await;
    assert_eq!(v["requests_served"], 5);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_delay_streams_every_token_fast() {
    let h = start(servebench_sim::SimConfig::from_preset(
        servebench_sim::Preset::ZeroDelay,
    ))
    .await;
    assert!(h.info().zero_delay);
    let c = client();
    let url = format!("{}/v1/chat/completions", h.base_url());
    let body = json!({"messages": [{"role": "user", "content": "go"}], "max_tokens": 3000,
                      "ignore_eos": true, "stream": true, "stream_options": {"include_usage": true}});
    let t0 = std::time::Instant::now();
    let results = futures_util::future::join_all((0..8).map(|_| stream(&c, &url, &body))).await;
    for r in &results {
        assert!(r.done(), "{:?}", r.error);
        assert_eq!(r.token_events().len(), 3000);
        assert_eq!(
            r.last_json()
                .map(|v| v["usage"]["completion_tokens"].clone()),
            Some(json!(3000))
        );
    }
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(30),
        "took {:?}",
        t0.elapsed()
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
