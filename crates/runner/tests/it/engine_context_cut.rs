//! Finding 48 end to end: the simulator's vLLM personality with `--engine-version 0.33.0`
//! cuts `max_tokens` to what `--max-model-len` leaves after the prompt, silently, as vLLM
//! 0.33.0 does (serve/utils/api_utils.py:233-264); the record says so (`length_cut`). By
//! default it refuses the request, as 0.26.0 did on an H100.

use std::time::Duration;

use servebench_engines::Engine;
use servebench_engines::profile;
use servebench_result::record::{ErrorKind, RequestFlag};
use servebench_runner::dataset::{
    LengthDist, RandomDataset, RandomPromptBuilder, ServerTokenizer, TokenizeStyle,
};
use servebench_runner::loadgen::{ApiKind, LoadConfig, Target, TrialOutcome, run_trial};
use servebench_sim::{Preset, SimConfig};

/// 4 requests of 40 prompt + 40 output tokens against a 64-token context, the personality
/// reporting `version`.
async fn trial(version: Option<&str>) -> TrialOutcome {
    let mut c = SimConfig::from_preset(Preset::Fast);
    c.wire.engine = Engine::Vllm;
    c.wire.engine_version = version.map(str::to_owned);
    c.engine.max_model_len = 64;
    let s = servebench_sim::spawn(c).await.expect("simulator starts");
    let target = Target {
        base_url: s.base_url(),
        api: ApiKind::Completions,
        model: "sim-model".into(),
        api_key: None,
        headers: Vec::new(),
        ca_file: None,
    };
    let tok = ServerTokenizer::new(&s.base_url(), "/tokenize", None, None, TokenizeStyle::Auto)
        .expect("valid URL");
    let dataset = RandomDataset {
        input_tokens: LengthDist::Fixed { tokens: 40 },
        output_tokens: LengthDist::Fixed { tokens: 40 },
        chat: false,
    };
    let mut b = RandomPromptBuilder::new(dataset, tok).expect("valid dataset");
    let prompts = b.trial_prompts(4, 0, 3, 1, 0).await.expect("prompts");
    let mut cfg = LoadConfig::new(4);
    cfg.request_timeout = Duration::from_secs(30);
    cfg.engine = Some(profile(Engine::Vllm).expect("vllm"));
    let out = run_trial(&target, &cfg, &prompts).await.expect("runs");
    s.shutdown().await.expect("stops");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vllm_0_33_0_cuts_max_tokens_silently_and_the_record_says_so() {
    let cut = trial(Some("0.33.0")).await;
    for r in &cut.records {
        assert_eq!(r.error, None, "{:?}", r.error_detail);
        assert_eq!(r.max_tokens, 40);
        assert_eq!(r.usage.map(|u| u.completion_tokens), Some(24), "64 - 40");
        assert_eq!(r.finish_reason.as_deref(), Some("length"));
    }
    assert_eq!(cut.summary.flags.get(&RequestFlag::LengthCut), Some(&4));
    // 0.26.0's rule, the default: refused, nothing cut.
    let refused = trial(None).await;
    assert!(
        refused
            .records
            .iter()
            .all(|r| r.error == Some(ErrorKind::Http { status: 400 })),
        "{:?}",
        refused.records[0].error_detail
    );
}
