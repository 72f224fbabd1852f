//! `/metrics` in each engine's names, path and switch, with the engine model's values
//! (names, label sets and types from each engine's source, listed in
//! `crates/engines/src/<engine>/dialect/metrics.rs`).

use std::time::Duration;

use crate::common;

use common::engines::engine;
use common::*;
use serde_json::json;
use servebench_engines::Engine;

/// The value of the first sample of `name` (a name followed by `{` or a space).
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

async fn text(url: &str) -> (u16, String) {
    let r = client()
        .get(url)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let status = r.status().as_u16();
    (status, r.text().await.unwrap_or_default())
}

// With 2 sequences at most (--max-num-seqs below the concurrency) and 4 requests in
// flight, every engine reports 2 running and 2 waiting and KV in use; once they are done,
// 0 and 0.
#[tokio::test]
async fn running_waiting_and_kv_use_in_each_engines_names() {
    let cases = [
        (
            Engine::Openai,
            "/metrics",
            "servebench_sim_requests_running",
            "servebench_sim_requests_waiting",
            "servebench_sim_kv_cache_usage_ratio",
        ),
        (
            Engine::Vllm,
            "/metrics",
            "vllm:num_requests_running",
            "vllm:num_requests_waiting",
            "vllm:kv_cache_usage_perc",
        ),
        (
            Engine::Sglang,
            "/metrics",
            "sglang:num_running_reqs",
            "sglang:num_queue_reqs",
            "sglang:token_usage",
        ),
        (
            Engine::Llamacpp,
            "/metrics",
            "llamacpp:requests_processing",
            "llamacpp:requests_deferred",
            "",
        ),
        (
            Engine::Tgi,
            "/metrics",
            "tgi_batch_current_size",
            "tgi_queue_size",
            "",
        ),
        (
            Engine::Trtllm,
            "/prometheus/metrics",
            "trtllm_num_requests_running",
            "trtllm_num_requests_waiting",
            "trtllm_kv_cache_utilization",
        ),
    ];
    for (p, path, running, waiting, kv) in cases {
        let mut c = engine(p);
        c.engine.max_num_seqs = 2;
        c.engine.max_batched_tokens = 512;
        c.engine.decode_base_ms = 40.0;
        c.wire.enable_metrics = true;
        c.wire.iter_perf_stats = true;
        let h = start(c).await;
        let url = format!("{}/v1/completions", h.base_url());
        // One request first: TensorRT-LLM writes no series before a request has finished.
        stream(
            &client(),
            &url,
            &json!({"model": "sim-model", "prompt": "a", "max_tokens": 1, "stream": true}),
        )
        .await;
        let streams: Vec<_> = (0..4)
            .map(|_| {
                let url = url.clone();
                tokio::spawn(async move {
                    stream(
                        &client(),
                        &url,
                        &json!({"model": "sim-model", "prompt": "a b", "max_tokens": 8,
                                "stream": true}),
                    )
                    .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(150)).await;
        let (s, t) = text(&format!("{}{path}", h.base_url())).await;
        assert_eq!(s, 200, "{p:?}: {t}");
        // TensorRT-LLM's series hold what the last finished request wrote (the 1-token
        // one): `trtllm_series_change_only_when_a_request_finishes`.
        let (now_running, now_waiting) = match p {
            Engine::Trtllm => (0.0, 0.0),
            _ => (2.0, 2.0),
        };
        assert_eq!(sample(&t, running), Some(now_running), "{p:?}: {t}");
        assert_eq!(sample(&t, waiting), Some(now_waiting), "{p:?}: {t}");
        if !kv.is_empty() && p != Engine::Trtllm {
            let used = sample(&t, kv).unwrap_or(0.0);
            assert!(used > 0.0 && used < 1.0, "{p:?}: {t}");
        }
        for s in streams {
            let s = s.await.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.token_events().len(), 8);
        }
        let (_, t) = text(&format!("{}{path}", h.base_url())).await;
        assert_eq!(sample(&t, running), Some(0.0), "{p:?}: {t}");
        assert_eq!(sample(&t, waiting), Some(0.0), "{p:?}: {t}");
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

// The text of a family as the engine writes it: vLLM's multiprocess collector sorts label
// names; llama.cpp writes plain numbers; counters end in `_total`.
#[tokio::test]
async fn families_are_written_as_the_engines_write_them() {
    let mut c = engine(Engine::Vllm);
    c.model = "m".into();
    let h = start(c).await;
    let (_, t) = text(&format!("{}/metrics", h.base_url())).await;
    assert!(
        t.contains(
            "# HELP vllm:num_requests_running Number of requests in model execution batches.\n\
             # TYPE vllm:num_requests_running gauge\n\
             vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 0.0\n"
        ),
        "{t}"
    );
    // prometheus_client names a counter family by its `_total` sample in `# HELP` and
    // `# TYPE` (0.26.0, exposition.py:321-323); before, the personality wrote the bare name.
    assert!(
        t.contains("# TYPE vllm:num_preemptions_total counter\n"),
        "{t}"
    );
    assert!(
        t.contains("vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 0.0\n"),
        "{t}"
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    let mut c = engine(Engine::Llamacpp);
    c.wire.enable_metrics = true;
    let h = start(c).await;
    let (_, t) = text(&format!("{}/metrics", h.base_url())).await;
    assert!(
        t.contains(
            "# HELP llamacpp:requests_processing Number of requests processing\n\
             # TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 0\n"
        ),
        "{t}"
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// SGLang needs --enable-metrics, llama.cpp --metrics (501 otherwise), TensorRT-LLM
// return_perf_metrics for /prometheus/metrics (its /metrics is JSON); transformers serve
// has none; vLLM and TGI always serve theirs.
#[tokio::test]
async fn metrics_switches_per_engine() {
    let cases = [
        (Engine::Sglang, "/metrics", 404),
        (Engine::Llamacpp, "/metrics", 501),
        (Engine::Trtllm, "/prometheus/metrics", 404),
        (Engine::Transformers, "/metrics", 404),
        (Engine::Vllm, "/metrics", 200),
        (Engine::Tgi, "/metrics", 200),
    ];
    for (p, path, want) in cases {
        let h = start(engine(p)).await;
        let (s, t) = text(&format!("{}{path}", h.base_url())).await;
        assert_eq!(s, want, "{p:?}: {t}");
        if p == Engine::Llamacpp {
            assert!(t.contains("not_supported_error"), "{t}");
            assert!(t.contains("Start it with `--metrics`"), "{t}");
        }
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
    let h = start(engine(Engine::Trtllm)).await;
    let (s, v) = get_json(&client(), &format!("{}/metrics", h.base_url())).await;
    assert_eq!((s, v), (200, json!([])));
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// TensorRT-LLM serves its running, waiting and KV gauges only with `enable_iter_perf_stats`
// (metrics/collector.py `log_iteration_stats`, started by openai_server.py's lifespan only
// then); `return_perf_metrics` alone gives the per-request counters. Before: the gauges came
// with `return_perf_metrics` alone, and every series was served before any request ended.
#[tokio::test]
async fn trtllm_gauges_need_iter_perf_stats() {
    for iter in [false, true] {
        let mut c = engine(Engine::Trtllm);
        c.wire.enable_metrics = true;
        c.wire.iter_perf_stats = iter;
        let h = start(c).await;
        let metrics = format!("{}/prometheus/metrics", h.base_url());
        // Every series is recorded when a request finishes, and prometheus_client writes no
        // family without samples: a fresh server serves none.
        let (s, t) = text(&metrics).await;
        assert_eq!(s, 200, "{t}");
        assert!(!t.contains("trtllm_"), "{t}");
        stream(
            &client(),
            &format!("{}/v1/completions", h.base_url()),
            &json!({"model": "sim-model", "prompt": "a b", "max_tokens": 4, "stream": true}),
        )
        .await;
        let (s, t) = text(&metrics).await;
        assert_eq!(s, 200, "{t}");
        assert_eq!(
            sample(&t, "trtllm_num_requests_running").is_some(),
            iter,
            "{t}"
        );
        assert!(sample(&t, "trtllm_prompt_tokens_total").is_some(), "{t}");
        assert_eq!(sample(&t, "trtllm_request_success_total"), Some(1.0), "{t}");
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

// TensorRT-LLM records every series when a request finishes (metrics/collector.py
// `log_metrics_dict`; the gauges by `log_iteration_stats`, woken when a request completes):
// between two finishes a scrape reads what the last finish wrote. Before, the personality
// wrote the engine model's values at each scrape (the running request's prefill showed up).
#[tokio::test]
async fn trtllm_series_change_only_when_a_request_finishes() {
    let mut c = engine(Engine::Trtllm);
    c.wire.enable_metrics = true;
    c.wire.iter_perf_stats = true;
    c.engine.decode_base_ms = 20.0;
    let h = start(c).await;
    let metrics = format!("{}/prometheus/metrics", h.base_url());
    let url = format!("{}/v1/completions", h.base_url());
    let body = |n: u32| {
        json!({"model": "sim-model", "prompt": "a b c", "max_tokens": n,
        "ignore_eos": true, "stream": true})
    };
    stream(&client(), &url, &body(2)).await;
    let (_, first) = text(&metrics).await;
    let prompt_after_first = sample(&first, "trtllm_prompt_tokens_total");
    assert!(prompt_after_first.is_some(), "{first}");
    let long = tokio::spawn({
        let url = url.clone();
        async move { stream(&client(), &url, &body(40)).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, during) = text(&metrics).await;
    assert_eq!(
        sample(&during, "trtllm_prompt_tokens_total"),
        prompt_after_first,
        "{during}"
    );
    assert_eq!(
        sample(&during, "trtllm_num_requests_running"),
        sample(&first, "trtllm_num_requests_running"),
        "{during}"
    );
    long.await.unwrap_or_else(|e| panic!("{e}"));
    let (_, after) = text(&metrics).await;
    assert_eq!(
        sample(&after, "trtllm_request_success_total"),
        Some(2.0),
        "{after}"
    );
    assert!(
        sample(&after, "trtllm_prompt_tokens_total") > prompt_after_first,
        "{after}"
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// TensorRT-LLM labels `trtllm_request_success_total` by `finished_reason`, one series per
// reason seen (metrics/collector.py `log_metrics_dict`). Before, every finished request was
// counted under `length`.
#[tokio::test]
async fn trtllm_counts_a_stopped_request_under_stop() {
    let mut c = engine(Engine::Trtllm);
    c.wire.enable_metrics = true;
    c.engine.eos_mean_tokens = 1.0;
    let h = start(c).await;
    let url = format!("{}/v1/completions", h.base_url());
    stream(
        &client(),
        &url,
        &json!({"model": "sim-model", "prompt": "a b", "max_tokens": 2000, "stream": true}),
    )
    .await;
    let (_, t) = text(&format!("{}/prometheus/metrics", h.base_url())).await;
    assert!(
        t.contains("trtllm_request_success_total{engine_type=\"pytorch\",finished_reason=\"stop\",model_name=\"sim-model\"} 1.0"),
        "{t}"
    );
    assert!(!t.contains("finished_reason=\"length\""), "{t}");
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// SGLang with `--enable-priority-scheduling` (0.5.23, observability/metrics_collector.py:
// 1388-1390, 1413-1428): every series gets `priority=""`, the total; running and waiting are
// also written per priority seen, `priority="<n>"`. A request without a priority gets the
// lowest, -2^63 (scheduler.py:3522-3527). Before, the personality had no priorities.
#[tokio::test]
async fn sglang_counts_requests_by_priority() {
    let mut c = engine(Engine::Sglang);
    c.engine.max_num_seqs = 2;
    c.engine.decode_base_ms = 40.0;
    c.wire.enable_metrics = true;
    c.wire.priority_scheduling = true;
    let h = start(c).await;
    let url = format!("{}/v1/completions", h.base_url());
    let streams: Vec<_> = [Some(1), Some(1), Some(0), None]
        .into_iter()
        .map(|p| {
            let url = url.clone();
            let mut body = json!({"model": "sim-model", "prompt": "a b", "max_tokens": 8,
                "stream": true});
            if let Some(p) = p {
                body["priority"] = json!(p);
            }
            tokio::spawn(async move { stream(&client(), &url, &body).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let (_, t) = text(&format!("{}/metrics", h.base_url())).await;
    let at = |name: &str, priority: &str| {
        let key = format!(
            "{name}{{engine_type=\"unified\",model_name=\"sim-model\",moe_ep_rank=\"0\",\
             pp_rank=\"0\",priority=\"{priority}\",tp_rank=\"0\"}} "
        );
        t.lines()
            .find_map(|l| l.strip_prefix(&key))
            .and_then(|v| v.parse::<f64>().ok())
    };
    assert_eq!(at("sglang:num_running_reqs", ""), Some(2.0), "{t}");
    assert_eq!(at("sglang:num_queue_reqs", ""), Some(2.0), "{t}");
    let by = |name: &str| {
        ["0", "1", "-9223372036854775808"]
            .iter()
            .map(|p| at(name, p).unwrap_or_else(|| panic!("{name} {p}: {t}")))
            .sum::<f64>()
    };
    assert_eq!(by("sglang:num_running_reqs"), 2.0, "{t}");
    assert_eq!(by("sglang:num_queue_reqs"), 2.0, "{t}");
    assert!(at("sglang:token_usage", "").is_some(), "{t}");
    for s in streams {
        s.await.unwrap_or_else(|e| panic!("{e}"));
    }
    let (_, t) = text(&format!("{}/metrics", h.base_url())).await;
    assert!(
        t.contains("priority=\"1\",tp_rank=\"0\"} 0.0"),
        "a priority seen stays, at 0: {t}"
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

// SGLang with `--enable-dp-attention --dp N`: one series per DP rank, labelled `dp_rank` with
// its first global `tp_rank` (observability/metrics_collector.py:1361-1392, 0.5.23), each
// rank its own share of the requests. Before: one series, as without DP.
#[tokio::test]
async fn sglang_writes_one_series_per_dp_rank() {
    let mut c = engine(Engine::Sglang);
    c.engine.max_num_seqs = 2;
    c.engine.decode_base_ms = 40.0;
    c.wire.enable_metrics = true;
    c.wire.tp_size = 4;
    c.wire.dp_size = 2;
    let h = start(c).await;
    let url = format!("{}/v1/completions", h.base_url());
    let streams: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                stream(
                    &client(),
                    &url,
                    &json!({"model": "sim-model", "prompt": "a b", "max_tokens": 8, "stream": true}),
                )
                .await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let (_, t) = text(&format!("{}/metrics", h.base_url())).await;
    for (rank, tp) in [(0, 0), (1, 2)] {
        let line = format!(
            "sglang:num_running_reqs{{dp_rank=\"{rank}\",engine_type=\"unified\",model_name=\"sim-model\",moe_ep_rank=\"{tp}\",pp_rank=\"0\",tp_rank=\"{tp}\"}} 1.0"
        );
        assert!(t.contains(&line), "{line}\n{t}");
    }
    for s in streams {
        let _ = s.await;
    }
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
