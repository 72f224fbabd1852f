//! Token events end to end: the simulator's vLLM personality with `--empty-text-rate` sends
//! a chunk with empty text for a token that decodes to nothing, as vLLM 0.26.0 did on an
//! H100 (docs/engines.md, finding 46); the client, reading vLLM's facts
//! (`stream.token_chunks`), counts every such chunk as a token event, and the OpenAI
//! reading of the same stream counts only the chunks with text.

use std::time::Duration;

use servebench_engines::Engine;
use servebench_engines::profile;
use servebench_runner::dataset::{
    LengthDist, RandomDataset, RandomPromptBuilder, ServerTokenizer, TokenizeStyle,
};
use servebench_runner::loadgen::{ApiKind, LoadConfig, Target, run_trial};
use servebench_sim::{Preset, SimConfig};

const OUT: u32 = 16;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vllms_empty_text_chunks_are_token_events_by_its_facts() {
    let mut c = SimConfig::from_preset(Preset::Fast);
    c.wire.engine = Engine::Vllm;
    c.wire.empty_text_rate = 0.5;
    let s = servebench_sim::spawn(c).await.expect("simulator starts");
    for api in [ApiKind::Chat, ApiKind::Completions] {
        let target = Target {
            base_url: s.base_url(),
            api,
            model: "sim-model".into(),
            api_key: None,
            headers: Vec::new(),
            ca_file: None,
        };
        let tok = ServerTokenizer::new(&s.base_url(), "/tokenize", None, None, TokenizeStyle::Auto)
            .expect("valid URL");
        let dataset = RandomDataset {
            input_tokens: LengthDist::Fixed { tokens: 32 },
            output_tokens: LengthDist::Fixed { tokens: OUT },
            chat: api == ApiKind::Chat,
        };
        let mut b = RandomPromptBuilder::new(dataset, tok).expect("valid dataset");
        let prompts = b.trial_prompts(8, 0, 3, 1, 0).await.expect("prompts");
        let mut cfg = LoadConfig::new(8);
        cfg.request_timeout = Duration::from_secs(30);
        cfg.engine = Some(profile(Engine::Vllm).expect("vllm"));
        let by_facts = run_trial(&target, &cfg, &prompts).await.expect("runs");
        cfg.engine = None;
        let openai = run_trial(&target, &cfg, &prompts).await.expect("runs");
        for (f, o) in by_facts.records.iter().zip(&openai.records) {
            assert!(o.events.len() <= f.events.len(), "{api:?}");
            assert_eq!(f.error, None, "{api:?}: {:?}", f.error_detail);
            assert_eq!(f.usage.map(|u| u.completion_tokens), Some(OUT));
            // One chunk a token, whatever its text.
            assert_eq!(f.events.len(), OUT as usize, "{api:?}");
        }
        // Half the tokens decode to nothing: read as the OpenAI API's stream they are lost.
        let seen: usize = openai.records.iter().map(|r| r.events.len()).sum();
        assert!(
            seen < 8 * OUT as usize * 3 / 4,
            "{api:?}: {seen} text chunks of {} tokens",
            8 * OUT
        );
    }
    s.shutdown().await.expect("stops");
}
