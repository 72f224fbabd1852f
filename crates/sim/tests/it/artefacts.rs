//! The knobs that make run-level artefacts on purpose: drift across repetitions, a step scale
//! for chosen server starts and requests, and the time scale.
//!
//! Times are the server's own `timings` (the engine's virtual timeline, which only departs
//! from the model when the host stalls for more than 50 ms, and then only upwards). Each
//! assertion compares minima over several requests, which a stall cannot lower, with generous
//! bounds; which requests were scaled is read from a counter, not from times.

use crate::common;

use common::*;
use serde_json::{Value, json};
use servebench_sim::{Preset, RequestRange, SimConfig, SimError, SimHandle};

/// The timing tests run one at a time, so they do not disturb each other's clocks.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Decode steps of exactly `base_ms`, no noise.
fn config(base_ms: f64) -> SimConfig {
    let mut c = SimConfig::from_preset(Preset::Fast);
    c.engine.decode_base_ms = base_ms;
    c.engine.decode_per_seq_ms = 0.0;
    c.engine.prefill_ms_per_token = 0.0;
    c
}

/// Sends `n` requests one after another; the server's timings of each, in order.
async fn timings(h: &SimHandle, n: usize, max_tokens: u32) -> Vec<Value> {
    let c = client();
    let url = format!("{}/v1/completions", h.base_url());
    let body = json!({"prompt": prompt(4), "max_tokens": max_tokens, "ignore_eos": true});
    let mut out = Vec::new();
    for _ in 0..n {
        let (status, v) = post_json(&c, &url, &body).await;
        assert_eq!(status, 200, "{v}");
        out.push(v["timings"].clone());
    }
    out
}

fn field(t: &[Value], key: &str) -> Vec<f64> {
    t.iter()
        .map(|v| {
            v[key]
                .as_f64()
                .unwrap_or_else(|| panic!("timings.{key}: {v}"))
        })
        .collect()
}

/// Per-request server TPOT (ms).
fn tpot(t: &[Value]) -> Vec<f64> {
    field(t, "predicted_per_token_ms")
}

fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

async fn info(h: &SimHandle) -> Value {
    let (status, v) = get_json(&client(), &format!("{}/v1/sim/info", h.base_url())).await;
    assert_eq!(status, 200);
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_per_repetition_slows_later_repetitions_only() {
    let _serial = SERIAL.lock().await;
    let mut cfg = config(4.0);
    cfg.engine.drift_per_repetition = 0.15;
    let mut mins = Vec::new();
    for t in [1, 3] {
        cfg.repetition = t;
        let h = start(cfg.clone()).await;
        let i = info(&h).await;
        assert_eq!(i["repetition"], t);
        assert_eq!(i["engine"]["drift_per_repetition"], 0.15);
        let factor = i["repetition_factor"].as_f64().unwrap_or_default();
        assert!(
            (factor - (1.0 + 0.15 * f64::from(t - 1))).abs() < 1e-9,
            "{i}"
        );
        mins.push(min(&tpot(&timings(&h, 3, 30).await)));
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
    eprintln!("min server TPOT at t=1 and t=3: {mins:?} ms (model 4 and 5.2)");
    assert!(
        mins[0] <= 4.0 * 1.1,
        "repetition 1 is as modelled: {mins:?}"
    );
    assert!(mins[1] >= 1.15 * mins[0], "t=3 is 1.3x slower: {mins:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_scale_hits_only_the_chosen_requests_of_the_chosen_repetition() {
    let _serial = SERIAL.lock().await;
    let mut cfg = config(4.0);
    cfg.engine.step_scale = 1.3;
    cfg.engine.step_scale_repetitions = Some(vec![3]);
    cfg.engine.step_scale_requests = Some(RequestRange {
        first: 3,
        last: Some(4),
    });

    cfg.repetition = 3;
    let h = start(cfg.clone()).await;
    let i = info(&h).await;
    assert_eq!(i["step_scale_active"], true, "{i}");
    assert_eq!(i["engine"]["step_scale"], 1.3);
    assert_eq!(i["engine"]["step_scale_repetitions"], json!([3]));
    assert_eq!(i["engine"]["step_scale_requests"], "3..4");
    let t = tpot(&timings(&h, 6, 30).await);
    assert_eq!(h.stats().step_scaled_requests, 2, "requests 3 and 4 only");
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    let chosen = [t[2], t[3]];
    let others = [t[0], t[1], t[4], t[5]];
    eprintln!("repetition 3, server TPOT per request: {t:?} ms (model 4, 4, 5.2, 5.2, 4, 4)");
    assert!(min(&others) <= 4.0 * 1.1, "{t:?}");
    for x in chosen {
        assert!(
            x >= 1.15 * min(&others),
            "a chosen request is 1.3x slower: {t:?}"
        );
    }

    // Another repetition of the same variant: nothing is scaled.
    cfg.repetition = 2;
    let h = start(cfg.clone()).await;
    assert_eq!(info(&h).await["step_scale_active"], false);
    let t = tpot(&timings(&h, 5, 30).await);
    assert_eq!(h.stats().step_scaled_requests, 0);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    assert!(min(&t) <= 4.0 * 1.1, "{t:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_scale_on_the_first_repetition_makes_a_cold_start() {
    let _serial = SERIAL.lock().await;
    let mut cfg = config(4.0);
    cfg.engine.step_scale = 1.3;
    cfg.engine.step_scale_repetitions = Some(vec![1]);
    let h = start(cfg.clone()).await;
    let cold = tpot(&timings(&h, 3, 30).await);
    assert_eq!(
        h.stats().step_scaled_requests,
        3,
        "every request of the start"
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    cfg.repetition = 2;
    let h = start(cfg).await;
    let warm = tpot(&timings(&h, 3, 30).await);
    assert_eq!(h.stats().step_scaled_requests, 0);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    eprintln!("server TPOT, repetition 1: {cold:?}, repetition 2: {warm:?} ms");
    assert!(min(&cold) >= 1.15 * min(&warm), "{cold:?} vs {warm:?}");
    assert!(min(&warm) <= 4.0 * 1.1, "{warm:?}");

    // Below 1 is faster: a level-specific speed-up.
    let mut cfg = config(10.0);
    cfg.engine.step_scale = 0.6;
    cfg.engine.step_scale_requests = Some(RequestRange {
        first: 4,
        last: None,
    });
    let h = start(cfg).await;
    let t = tpot(&timings(&h, 6, 20).await);
    assert_eq!(h.stats().step_scaled_requests, 3);
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    eprintln!("step scale 0.6 from request 4: {t:?} ms (model 10, 10, 10, 6, 6, 6)");
    assert!(min(&t[3..]) <= 0.8 * min(&t[..3]), "{t:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_scale_shrinks_every_modelled_time() {
    let _serial = SERIAL.lock().await;
    let mut cfg = config(20.0);
    cfg.engine.prefill_ms_per_token = 2.0;
    let mut runs = Vec::new();
    for scale in [1.0, 0.25] {
        cfg.engine.time_scale = scale;
        let h = start(cfg.clone()).await;
        assert_eq!(info(&h).await["engine"]["time_scale"], scale);
        runs.push(timings(&h, 3, 12).await);
        h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
    // TTFT: 20 + 4 × 2 = 28 ms; TPOT 20 ms; both × 0.25.
    let (ttft1, ttft2) = (
        min(&field(&runs[0], "ttft_ms")),
        min(&field(&runs[1], "ttft_ms")),
    );
    let (tpot1, tpot2) = (min(&tpot(&runs[0])), min(&tpot(&runs[1])));
    eprintln!("TTFT {ttft1} -> {ttft2} ms, TPOT {tpot1} -> {tpot2} ms (model 28 -> 7, 20 -> 5)");
    assert!(ttft2 <= ttft1 / 3.0 && tpot2 <= tpot1 / 3.0, "{runs:?}");
    assert!(tpot2 >= 5.0 * 0.9 && ttft2 >= 7.0 * 0.9, "{runs:?}");
}

/// A change to a valid configuration.
type Edit = fn(&mut SimConfig);

#[tokio::test]
async fn bad_values_are_refused_at_spawn() {
    let cases: [(Edit, &str); 5] = [
        (
            |c| c.engine.step_scale = 0.0,
            "step_scale must be a number > 0",
        ),
        (
            |c| c.engine.time_scale = f64::NAN,
            "time_scale must be a number > 0",
        ),
        (
            |c| c.engine.drift_per_repetition = -2.0,
            "drift_per_repetition must be finite and > -1",
        ),
        (
            |c| c.engine.step_scale_repetitions = Some(vec![0]),
            "step_scale_repetitions counts from 1",
        ),
        (|c| c.repetition = 0, "repetition counts from 1"),
    ];
    for (edit, want) in cases {
        let mut cfg = config(1.0);
        edit(&mut cfg);
        match servebench_sim::spawn(cfg).await {
            Err(SimError::InvalidConfig(m)) => assert!(m.contains(want), "{m} lacks {want}"),
            Err(e) => panic!("{want}: {e}"),
            Ok(_) => panic!("{want}: accepted"),
        }
    }
}
