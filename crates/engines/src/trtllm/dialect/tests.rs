//! The TensorRT-LLM dialect against its engine's metrics (files and lines named
//! beside each test).

use super::Trtllm;
use crate::dialect::*;

/// TensorRT-LLM records every series when a request finishes, and prometheus_client writes
/// no family without samples: before the first request ends the endpoint serves none (before,
/// the personality served zeros and the gauges at once).
#[test]
fn trtllm_serves_no_series_before_a_request_has_finished() {
    let mut s = Snapshot {
        running: 1,
        waiting: 0,
        decoding: 1,
        kv_usage: 0.1,
        kv_used_tokens: 10,
        preemptions: 0,
        prompt_tokens: 8,
        generation_tokens: 0,
        steps: 1,
        requests: 1,
        finished: 0,
        finished_stop: 0,
        by_priority: Vec::new(),
    };
    let wire = WireParams {
        iter_perf_stats: true,
        ..WireParams::default()
    };
    let d = Trtllm;
    let before = d.metrics_text("m", &s, &wire);
    assert!(!before.contains("trtllm_"), "{before}");
    s.finished = 1;
    let after = d.metrics_text("m", &s, &wire);
    assert!(after.contains("trtllm_prompt_tokens_total{"), "{after}");
    assert!(after.contains("trtllm_num_requests_running{"), "{after}");
    assert!(
        after.contains("trtllm_request_success_total{engine_type=\"pytorch\",finished_reason=\"length\",model_name=\"m\"} 1.0"),
        "{after}"
    );
}
