//! The TensorRT-LLM dialect against its engine's metrics (files and lines named
//! beside each test).

use super::Trtllm;
use crate::dialect::request::Api;
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

/// The dialect's events of a 3-token answer on `api` with `include_usage`, as JSON values
/// (`[DONE]` as a string), and a failure after them.
fn answer(api: Api) -> (Vec<serde_json::Value>, Option<Vec<String>>) {
    let ctx = Ctx {
        api,
        id: "req-7".into(),
        created: 1_796_115_607,
        model: "m".into(),
        include_usage: true,
        reasoning_tokens: 0,
        logprobs: false,
        tokens_as_ids: false,
        token_ids: false,
    };
    let mut s = super::Shape::new(ctx);
    let finish = crate::dialect::finish::Finish {
        reason: crate::dialect::finish::FinishReason::Length,
        timings: crate::dialect::finish::Timings {
            queue_ms: 0.0,
            prompt_n: 5,
            prompt_ms: 1.0,
            ttft_ms: 1.0,
            predicted_n: 3,
            predicted_ms: 2.0,
            predicted_per_token_ms: Some(1.0),
            e2e_ms: 3.0,
            cached_n: None,
        },
    };
    let tok = |index| Tok {
        index,
        id: 7,
        text: " word",
        lp: None,
    };
    let mut out = Vec::new();
    s.token(&tok(0), &mut out);
    s.token(&tok(1), &mut out);
    s.last(Some(&tok(2)), &finish, &mut out);
    let events = out
        .iter()
        .map(|b| {
            let t = String::from_utf8_lossy(b);
            let d = t.trim().trim_start_matches("data: ");
            serde_json::from_str(d).unwrap_or_else(|_| serde_json::Value::String(d.into()))
        })
        .collect();
    let failure = s.failure("boom").map(|v| {
        v.iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    });
    (events, failure)
}

/// postprocess_handlers.py as the search index holds it newest (2026 header):
/// `_ensure_stream_metadata` gives a stream one id, `cmpl-<request id>` or
/// `chatcmpl-<request id>`, that every chunk carries; with `include_usage` the completions
/// usage chunk is a `CompletionStreamResponse` (`object: "text_completion"`, `choices: []`).
/// Before, the dialect drew a new id per chunk and wrote the usage chunk as
/// `chat.completion.chunk`.
#[test]
fn a_trtllm_stream_has_one_id_and_its_usage_chunk_is_of_its_api() {
    for (api, prefix, object) in [
        (Api::Completions, "cmpl-", "text_completion"),
        (Api::Chat, "chatcmpl-", "chat.completion.chunk"),
    ] {
        let (events, _) = answer(api);
        let chunks: Vec<&serde_json::Value> = events.iter().filter(|e| e.is_object()).collect();
        let ids: std::collections::BTreeSet<&str> =
            chunks.iter().filter_map(|c| c["id"].as_str()).collect();
        assert_eq!(ids.len(), 1, "{api:?}: {ids:?}");
        assert!(ids.iter().all(|i| i.starts_with(prefix)), "{ids:?}");
        let usage = chunks.last().expect("a usage chunk");
        assert_eq!(usage["object"], object, "{api:?}: {usage}");
        assert_eq!(usage["choices"], serde_json::json!([]), "{usage}");
        assert_eq!(usage["usage"]["completion_tokens"], 3, "{usage}");
        assert_eq!(events.last(), Some(&serde_json::json!("[DONE]")));
    }
}

/// openai_server.py (newest): `completion_generator` answers a generation error with an
/// error event and `[DONE]`; `chat_stream_generator` re-raises and the body is cut.
#[test]
fn a_trtllm_generation_error_is_an_event_in_completions_and_a_cut_in_chat() {
    let (_, cmpl) = answer(Api::Completions);
    let cmpl = cmpl.expect("completions answer it");
    assert_eq!(cmpl.len(), 2, "{cmpl:?}");
    let err: serde_json::Value =
        serde_json::from_str(cmpl[0].trim().trim_start_matches("data: ")).expect("json");
    assert_eq!(
        err,
        serde_json::json!({"error": {"message": "boom", "type": "server_error", "code": null, "param": null}})
    );
    assert_eq!(cmpl[1], "data: [DONE]\n\n");
    let (_, chat) = answer(Api::Chat);
    assert_eq!(chat, None, "chat: nothing said, the connection cut");
}
