//! Client-observed latency and throughput against what the engine parameters predict.
//! Steps of several milliseconds and no jitter, so timer lateness stays a few percent.

use crate::common;

use std::time::Instant;

use common::*;
use serde_json::json;
use servebench_sim::{Preset, SimConfig};

fn engine_config() -> SimConfig {
    let mut c = SimConfig::from_preset(Preset::Default);
    c.engine.max_num_seqs = 16;
    c.engine.max_batched_tokens = 256;
    c.engine.prefill_ms_per_token = 0.1;
    c.engine.decode_base_ms = 8.0;
    c.engine.decode_per_seq_ms = 2.0;
    c.engine.jitter_cv = 0.0;
    c.engine.speed_cv = 0.0;
    c
}

/// The timing tests run one at a time, so they do not disturb each other's clocks.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn within(measured: f64, predicted: f64, tol: f64) -> bool {
    (measured - predicted).abs() <= tol * predicted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_one_matches_the_model_within_5_percent() {
    let _serial = SERIAL.lock().await;
    // 800 prompt tokens in chunks of 256: 4 steps of 8 ms + 800 × 0.2 ms = 192 ms.
    let mut cfg = engine_config();
    cfg.engine.prefill_ms_per_token = 0.2;
    let predicted_ttft = 4.0 * 8.0 + 800.0 * 0.2;
    let h = start(cfg).await;
    let c = client();
    let url = format!("{}/v1/completions", h.base_url());
    // One decoding sequence: 8 + 2 × 1 = 10 ms per token.
    let predicted_tpot = 10.0;
    let body = json!({"prompt": prompt(800), "max_tokens": 31, "ignore_eos": true, "stream": true});
    stream(&c, &url, &body).await; // warm the connection
    let (mut ttft, mut tpot) = (Vec::new(), Vec::new());
    let (mut server_ttft, mut server_tpot): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for _ in 0..8 {
        let r = stream(&c, &url, &body).await;
        assert!(r.done(), "{r:?}");
        assert_eq!(r.token_events().len(), 31);
        ttft.push(ms(r.ttft().unwrap_or_default()));
        tpot.push(ms(r.tpot().unwrap_or_default()));
        let t = r
            .last_json()
            .map(|v| v["timings"].clone())
            .unwrap_or_default();
        let field = |k: &str| t[k].as_f64().unwrap_or_else(|| panic!("timings.{k}: {t}"));
        let wire = field("ttft_ms");
        let model = field("queue_ms") + field("prompt_ms");
        // A streamed ttft_ms is measured at the HTTP layer: from after the client sent the
        // request to before it read the first token, and never before the modelled step end.
        let client = ms(r.ttft().unwrap_or_default());
        assert!(
            wire <= client + 0.001,
            "server ttft {wire} > client ttft {client}"
        );
        assert!(wire + 0.002 >= model, "wire ttft {wire} < modelled {model}");
        server_ttft.push(wire);
        server_tpot.push(field("predicted_per_token_ms"));
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (s_ttft, s_tpot) = (mean(&server_ttft), mean(&server_tpot));
    eprintln!("server timings: mean ttft_ms {s_ttft:.2}, mean predicted_per_token_ms {s_tpot:.3}");
    assert!(within(s_ttft, predicted_ttft, 0.05), "server ttft {s_ttft}");
    assert!(within(s_tpot, predicted_tpot, 0.05), "server tpot {s_tpot}");
    let (ttft, tpot) = (mean(&ttft), mean(&tpot));
    eprintln!(
        "mean TTFT {ttft:.2} ms (model {predicted_ttft}), mean TPOT {tpot:.3} ms (model {predicted_tpot})"
    );
    // The client's TTFT adds its own HTTP and scheduling time to the server's: under the
    // whole suite on 2 cores it once read 203.2 ms against a server-side 198.9 ms (model
    // 192). The server's figure is held to 5% above; the client's gets 10 ms more.
    assert!(
        (ttft - predicted_ttft).abs() <= 0.05 * predicted_ttft + 10.0,
        "TTFT {ttft} vs {predicted_ttft}"
    );
    assert!(
        within(tpot, predicted_tpot, 0.05),
        "TPOT {tpot} vs {predicted_tpot}"
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throughput_rises_and_per_token_time_grows_with_concurrency() {
    let _serial = SERIAL.lock().await;
    let h = start(engine_config()).await;
    let c = client();
    let url = format!("{}/v1/completions", h.base_url());
    let n_out = 40u32;
    let body =
        json!({"prompt": prompt(8), "max_tokens": n_out, "ignore_eos": true, "stream": true});
    stream(&c, &url, &body).await;
    let mut rows = Vec::new();
    for conc in [1u32, 4, 8] {
        let t0 = Instant::now();
        let results =
            futures_util::future::join_all((0..conc).map(|_| stream(&c, &url, &body))).await;
        let wall = ms(t0.elapsed());
        assert!(
            results
                .iter()
                .all(|r| r.done() && r.token_events().len() == n_out as usize)
        );
        let tpot = results
            .iter()
            .map(|r| ms(r.tpot().unwrap_or_default()))
            .sum::<f64>()
            / f64::from(conc);
        let throughput = f64::from(conc * n_out) / wall * 1000.0;
        // Model: every sequence decodes in lockstep, step = 8 + 2 × conc ms.
        let model_tpot = 8.0 + 2.0 * f64::from(conc);
        let model_wall = (8.0 + 0.1 * 8.0 * f64::from(conc)) + f64::from(n_out - 1) * model_tpot;
        let model_throughput = f64::from(conc * n_out) / model_wall * 1000.0;
        eprintln!(
            "c={conc}: TPOT {tpot:.2} ms (model {model_tpot}), {throughput:.0} tok/s (model {model_throughput:.0})"
        );
        assert!(
            within(tpot, model_tpot, 0.10),
            "c={conc}: TPOT {tpot} vs {model_tpot}"
        );
        assert!(
            within(throughput, model_throughput, 0.10),
            "c={conc}: {throughput} vs {model_throughput}"
        );
        rows.push((tpot, throughput));
    }
    assert!(
        rows.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 > w[0].1),
        "{rows:?}"
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_beyond_max_num_seqs_queue_on_the_server() {
    let _serial = SERIAL.lock().await;
    let mut cfg = engine_config();
    cfg.engine.max_num_seqs = 2;
    let h = start(cfg).await;
    let c = client();
    let url = format!("{}/v1/completions", h.base_url());
    let body = json!({"prompt": "x", "max_tokens": 10, "ignore_eos": true, "stream": true});
    let results = futures_util::future::join_all((0..4).map(|_| stream(&c, &url, &body))).await;
    let mut queued: Vec<f64> = results
        .iter()
        .map(|r| {
            r.last_json()
                .and_then(|v| v["timings"]["queue_ms"].as_f64())
                .unwrap_or(-1.0)
        })
        .collect();
    queued.sort_by(f64::total_cmp);
    // Two run at once (about 8.2 + 9 × 12 ms), the other two wait for them.
    assert!(
        queued[1] < 20.0 && queued[2] > 80.0,
        "queue times {queued:?}"
    );
    assert_eq!(
        h.stats().max_in_flight,
        4,
        "the server saw all four in flight"
    );
    h.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
