//! Output equivalence: greedy (`temperature: 0`) text as a function of the prompt and the
//! model's identity, `--numerics-change F`, `--batch-variance F`.

use crate::common;

use common::engines::engine;
use common::*;
use futures_util::future::join_all;
use serde_json::{Value, json};
use servebench_engines::Engine;
use servebench_sim::{SimConfig, SimHandle};

fn greedy(prompt: &str, max_tokens: u32) -> Value {
    json!({"model": "sim-model", "prompt": prompt, "max_tokens": max_tokens,
           "ignore_eos": true, "temperature": 0})
}

/// The words of a completion's text.
async fn words(h: &SimHandle, body: &Value) -> Vec<String> {
    let url = format!("{}/v1/completions", h.base_url());
    let (s, v) = post_json(&client(), &url, body).await;
    assert_eq!(s, 200, "{v}");
    v["choices"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn prompts(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("question number {i} about x"))
        .collect()
}

fn with(seed: u64, f: impl FnOnce(&mut SimConfig)) -> SimConfig {
    let mut c = engine(Engine::Vllm);
    c.seed = seed;
    f(&mut c);
    c
}

#[tokio::test]
async fn two_servers_answer_a_prompt_greedily_with_the_same_tokens() {
    // Different seeds: greedy text does not depend on the seed, only on model and prompt.
    let a = start(with(1, |_| {})).await;
    let b = start(with(2, |_| {})).await;
    let other_model = start(with(1, |c| c.wire.model_path = Some("other/model".into()))).await;
    let mut distinct = std::collections::HashSet::new();
    for p in prompts(6) {
        let body = greedy(&p, 12);
        let x = words(&a, &body).await;
        assert_eq!(x.len(), 12);
        assert_eq!(x, words(&a, &body).await, "the same server again");
        assert_eq!(x, words(&b, &body).await, "another server, another seed");
        assert_ne!(x, words(&other_model, &body).await, "another model");
        distinct.insert(x);
    }
    assert_eq!(distinct.len(), 6, "each prompt has its own answer");
    // Sampled text (no temperature) stays a draw per request.
    let sampled = json!({"prompt": "q", "max_tokens": 12, "ignore_eos": true});
    assert_ne!(words(&a, &sampled).await, words(&a, &sampled).await);
    for h in [a, b, other_model] {
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Positions up to the first difference, or `None` when equal.
fn diverges_at(a: &[String], b: &[String]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

#[tokio::test]
async fn a_numerics_change_alters_a_share_of_prompts_from_a_position_on() {
    let base = start(with(1, |_| {})).await;
    let changed = start(with(1, |c| c.output.numerics_change = 0.25)).await;
    let n = 80;
    let mut differ = 0;
    let mut positions = std::collections::HashSet::new();
    for p in prompts(n) {
        let body = greedy(&p, 16);
        let x = words(&base, &body).await;
        let y = words(&changed, &body).await;
        assert_eq!(y.len(), 16);
        if let Some(at) = diverges_at(&x, &y) {
            differ += 1;
            positions.insert(at);
        }
        // Deterministic by prompt: the same prompts change at every request.
        assert_eq!(y, words(&changed, &body).await);
    }
    let share = f64::from(differ) / n as f64;
    assert!((0.1..=0.45).contains(&share), "share {share}");
    assert!(
        positions.len() > 2,
        "positions drawn per prompt: {positions:?}"
    );
    for h in [base, changed] {
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

#[tokio::test]
async fn batch_variance_makes_concurrent_answers_differ() {
    let invariant = start(with(1, |_| {})).await;
    let variant = start(with(1, |c| c.output.batch_variance = 1.0)).await;
    let ps = prompts(8);
    // One at a time (batch 1): the batch-invariant answer.
    let mut alone = Vec::new();
    for p in &ps {
        let body = greedy(p, 24);
        let x = words(&variant, &body).await;
        assert_eq!(
            x,
            words(&invariant, &body).await,
            "batch 1 is the invariant path"
        );
        alone.push(x);
    }
    // Eight at once: the answers depend on the batch.
    let together = join_all(ps.iter().map(|p| {
        let body = greedy(p, 24);
        let h = &variant;
        async move { words(h, &body).await }
    }))
    .await;
    let differ = alone
        .iter()
        .zip(&together)
        .filter(|(a, t)| diverges_at(a, t).is_some())
        .count();
    assert!(differ >= 6, "{differ} of 8 differ");
    // Without the knob, concurrency changes nothing.
    let together = join_all(ps.iter().map(|p| {
        let body = greedy(p, 24);
        let h = &invariant;
        async move { words(h, &body).await }
    }))
    .await;
    assert_eq!(together, alone);
    for h in [invariant, variant] {
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}
