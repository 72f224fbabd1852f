//! The prefix cache (`--prefix-cache`): shared leading blocks skip prefill and are reported
//! as cached tokens; without the flag nothing changes on the wire.

use crate::common;

use common::*;
use serde_json::{Value, json};
use servebench_sim::{PrefixCacheParams, Preset, SimConfig};

/// A slow prefill (0.05 ms per token) so a cached 1600-token prefix is a visible effect.
fn config(cache: bool) -> SimConfig {
    let mut c = SimConfig::from_preset(Preset::Fast);
    c.engine.prefill_ms_per_token = 0.05;
    c.prefix_cache = cache.then_some(PrefixCacheParams {
        block_tokens: 16,
        capacity_tokens: 1 << 16,
    });
    c
}

fn body(prompt: &str) -> Value {
    json!({"prompt": prompt, "max_tokens": 2, "stream": true,
           "stream_options": {"include_usage": true}, "ignore_eos": true})
}

/// The final usage and timings of one streamed request.
async fn usage(c: &reqwest::Client, base: &str, prompt: &str) -> (Value, Value) {
    let s = stream(c, &format!("{base}/v1/completions"), &body(prompt)).await;
    assert_eq!(s.status, 200);
    let events: Vec<Value> = s.events.iter().filter_map(Event::json).collect();
    let usage = events
        .iter()
        .find_map(|e| e.get("usage").filter(|u| !u.is_null()).cloned())
        .unwrap_or_else(|| panic!("no usage in {:?}", s.events));
    let timings = events
        .iter()
        .find_map(|e| e.get("timings").cloned())
        .unwrap_or_else(|| panic!("no timings in {:?}", s.events));
    (usage, timings)
}

#[tokio::test]
async fn shared_blocks_skip_prefill_and_are_reported() {
    let h = start(config(true)).await;
    let c = client();
    let base = h.base_url();
    let prefix = prompt(1600);
    let a = format!("{prefix} one two three");
    let b = format!("{prefix} four five six seven");
    let (u1, t1) = usage(&c, &base, &a).await;
    assert_eq!(u1["prompt_tokens"], 1603);
    assert_eq!(u1["prompt_tokens_details"]["cached_tokens"], 0, "cold");
    assert_eq!(t1["cache_n"], 0);
    let (u2, t2) = usage(&c, &base, &b).await;
    assert_eq!(u2["prompt_tokens"], 1604);
    assert_eq!(
        u2["prompt_tokens_details"]["cached_tokens"], 1600,
        "100 whole blocks of 16"
    );
    assert_eq!(t2["cache_n"], 1600);
    let (p1, p2) = (
        t1["prompt_ms"].as_f64().unwrap_or(0.0),
        t2["prompt_ms"].as_f64().unwrap_or(0.0),
    );
    // 1603 × 0.05 = 80 ms of prefill against 4 × 0.05 ms (plus the 1 ms step).
    assert!(
        p1 > 70.0 && p2 < 10.0,
        "prefill {p1} ms cold, {p2} ms cached"
    );
    let s = h.stats();
    assert_eq!(s.cached_tokens, 1600);
    assert_eq!(s.prompt_tokens, 1603 + 1604);
    assert_eq!(s.max_prompt_tokens, 1604);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn without_the_flag_nothing_is_cached_or_reported() {
    let h = start(config(false)).await;
    let c = client();
    let base = h.base_url();
    let p = prompt(320);
    for _ in 0..2 {
        let (u, t) = usage(&c, &base, &p).await;
        assert!(u.get("prompt_tokens_details").is_none(), "{u}");
        assert!(t.get("cache_n").is_none(), "{t}");
    }
    assert_eq!(h.stats().cached_tokens, 0);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn chat_turns_hit_the_rendered_history() {
    let h = start(config(true)).await;
    let c = client();
    let url = format!("{}/v1/chat/completions", h.base_url());
    let first = json!([{"role": "user", "content": prompt(200)}]);
    let s = stream(
        &c,
        &url,
        &json!({"messages": first, "max_tokens": 2, "stream": true,
        "stream_options": {"include_usage": true}}),
    )
    .await;
    assert_eq!(s.status, 200);
    let second = json!([{"role": "user", "content": prompt(200)},
        {"role": "assistant", "content": "a b"}, {"role": "user", "content": "more words"}]);
    let s = stream(
        &c,
        &url,
        &json!({"messages": second, "max_tokens": 2, "stream": true,
        "stream_options": {"include_usage": true}}),
    )
    .await;
    let u = s
        .events
        .iter()
        .filter_map(Event::json)
        .find_map(|e| e.get("usage").filter(|u| !u.is_null()).cloned())
        .unwrap_or_default();
    // The first message's 203 rendered tokens (200 + 2 template + its newline-less end)
    // make 12 whole blocks shared with the second prompt.
    let cached = u["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap_or(0);
    assert_eq!(cached, 192, "{u}");
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
