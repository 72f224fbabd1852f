//! Engine modes end to end, the client against the simulator's personalities speaking them:
//! llama.cpp's router mode (`--router-model`, b11434's router, crates/engines/src/llamacpp/
//! dialect/router.rs), with the same checks `engine_facts` makes against the router's
//! transcripts — it is llama.cpp, its limit and metrics are asked per model, and a model it
//! does not list is refused before the trials (docs/engines.md, findings 7-10); SGLang's
//! priority scheduling, whose per-priority series are a breakdown of the total, read once
//! (finding 4).

use servebench_engines::Engine;
use servebench_result::checks::{CheckOutcome, Guarantee};
use servebench_runner::engine::{BlockPlan, Endpoint, block_checks, resolve};
use servebench_runner::loadgen::{ApiKind, Target};
use servebench_runner::telemetry::prom::{MetricNames, read_scrape};
use servebench_sim::{Preset, SimConfig, SimHandle};

async fn router() -> SimHandle {
    let mut c = SimConfig::from_preset(Preset::Fast);
    c.model = "qwen3-0.6b".into();
    c.engine.max_model_len = 4096;
    c.wire.engine = Engine::Llamacpp;
    c.wire.enable_metrics = true;
    c.wire.router_models = vec!["gemma-3-1b".into()];
    servebench_sim::spawn(c).await.expect("simulator starts")
}

fn spec() -> servebench_spec::SpecFile {
    let yaml = "apiVersion: servebench/v1alpha1\nkind: Experiment\nmetadata: {name: t}\nspec:\n  target: {base_url: http://127.0.0.1:1, model: m, api: openai-completions, tokenizer: none}\n  variants: [{name: a, baseline: true}]\n  workload: {dataset: {kind: random, input_tokens: 8, output_tokens: 8}, requests: 1}\n";
    servebench_spec::parse_str(yaml, "t.yaml")
        .expect("valid")
        .file
}

#[tokio::test]
async fn the_simulators_llamacpp_router_is_read_as_the_real_one() {
    let h = router().await;
    let t = Target {
        base_url: h.base_url(),
        api: ApiKind::Completions,
        model: "qwen3-0.6b".into(),
        api_key: None,
        headers: Vec::new(),
        ca_file: None,
    };
    let ep = Endpoint::of(&t);
    let resolved = resolve(&ep, Engine::Auto).await.expect("answers");
    assert_eq!(
        resolved.profile.engine,
        Engine::Llamacpp,
        "{:?}",
        resolved.record
    );
    let plan = BlockPlan::new(&spec(), &t, std::path::Path::new("."), resolved.profile);
    let (checks, limit) = block_checks(&ep, &resolved, "qwen3-0.6b", &plan, true).await;
    assert_eq!(
        limit.expect("a limit").tokens,
        4096,
        "the model's, not the router's 0"
    );
    let metrics = checks
        .iter()
        .find(|c| c.guarantee == Guarantee::Metrics)
        .expect("metrics check");
    assert_eq!(metrics.outcome, CheckOutcome::Holds, "{}", metrics.detail);
    assert!(
        metrics.detail.contains("/metrics?model=qwen3-0.6b"),
        "{}",
        metrics.detail
    );
    let (checks, _) = block_checks(&ep, &resolved, "other", &plan, true).await;
    let served = checks
        .iter()
        .find(|c| c.guarantee == Guarantee::ModelServed)
        .expect("model check");
    assert_eq!(served.outcome, CheckOutcome::Fails, "{}", served.detail);
    h.shutdown().await.expect("stops");
}

/// A plain HTTP client with the runner's TLS configuration (reqwest brings no crypto
/// provider of its own here).
fn client() -> reqwest::Client {
    let tls = servebench_runner::tls::client_config(None).expect("TLS configuration");
    reqwest::Client::builder()
        .tls_backend_preconfigured(rustls::ClientConfig::clone(&tls))
        .build()
        .expect("client")
}

#[tokio::test]
async fn sglangs_priority_breakdown_is_not_counted_twice() {
    let mut c = SimConfig::from_preset(Preset::Fast);
    c.engine.max_num_seqs = 2;
    c.engine.decode_base_ms = 40.0;
    c.wire.engine = Engine::Sglang;
    c.wire.enable_metrics = true;
    c.wire.priority_scheduling = true;
    let h = servebench_sim::spawn(c).await.expect("simulator starts");
    let url = format!("{}/v1/completions", h.base_url());
    let requests: Vec<_> = [0, 1, 1]
        .into_iter()
        .map(|p| {
            let url = url.clone();
            tokio::spawn(async move {
                client()
                    .post(url)
                    .json(&serde_json::json!({"model": "sim-model", "prompt": "a b",
                        "max_tokens": 8, "priority": p}))
                    .send()
                    .await
            })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    let text = client()
        .get(format!("{}/metrics", h.base_url()))
        .send()
        .await
        .expect("scrape")
        .text()
        .await
        .expect("text");
    let facts = servebench_engines::profile(Engine::Sglang)
        .and_then(|p| p.metrics)
        .expect("metrics");
    let names = MetricNames::of(&facts, facts.path.to_owned());
    let m = read_scrape(&text, &names).expect("a scrape");
    assert_eq!((m.running, m.waiting), (Some(2.0), Some(1.0)), "{text}");
    for r in requests {
        r.await.expect("joins").expect("answered");
    }
    h.shutdown().await.expect("stops");
}
