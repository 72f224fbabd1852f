//! llama.cpp's router mode end to end: the client against the simulator's `llamacpp`
//! personality with `--router-model` (b11434's router, crates/engines/src/llamacpp/dialect/
//! router.rs), the same checks `engine_facts` makes against the router's transcripts: it is
//! llama.cpp, its limit and metrics are asked per model, and a model it does not list is
//! refused before the trials (docs/engines.md, findings 7-10).

use servebench_result::checks::{CheckOutcome, Guarantee};
use servebench_runner::engine::{BlockPlan, Endpoint, block_checks, resolve};
use servebench_runner::loadgen::{ApiKind, Target};
use servebench_sim::{Preset, SimConfig, SimHandle};
use servebench_spec::Engine;

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
