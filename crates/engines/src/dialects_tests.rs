//! Every dialect at once, each found through the table of engines ([`crate::of`]): their
//! start-up log lines against the engines' log statements, their ids, their metrics against
//! their engines' profiles.

use crate::dialect::request::Api;
use crate::dialect::tests::{addr, config};
use crate::dialect::{Snapshot, engine_names};
use crate::{Engine, of};

#[test]
fn the_other_engines_log_nothing_of_their_own() {
    for p in [
        Engine::Openai,
        Engine::Tgi,
        Engine::Trtllm,
        Engine::Transformers,
    ] {
        assert!(of(p).start_lines(&config(p), addr()).is_empty(), "{p:?}");
        assert!(of(p).worker_lines(&config(p)).is_empty(), "{p:?}");
    }
}

#[test]
fn response_ids_take_each_engines_form() {
    assert_eq!(of(Engine::Tgi).response_id(Api::Chat, 7), "");
    assert!(
        of(Engine::Vllm)
            .response_id(Api::Completions, 7)
            .starts_with("cmpl-")
    );
    assert!(
        of(Engine::Llamacpp)
            .response_id(Api::Completions, 7)
            .starts_with("chatcmpl-")
    );
    let u = of(Engine::Transformers).response_id(Api::Chat, 7);
    let parts: Vec<usize> = u.split('-').map(str::len).collect();
    assert_eq!(parts, vec![8, 4, 4, 4, 12], "{u}");
}

/// Each dialect serves its metrics where its engine's profile says (the path the client
/// scrapes) and writes every series the profile names (running, waiting, KV use,
/// preemptions): a fact changed on one side only fails here.
#[test]
fn each_dialect_serves_the_metrics_its_engines_profile_names() {
    let snapshot = Snapshot {
        running: 3,
        waiting: 2,
        decoding: 3,
        kv_usage: 0.5,
        kv_used_tokens: 100,
        // Some engines write a counter only once it has risen (SGLang's retractions).
        preemptions: 1,
        prompt_tokens: 40,
        generation_tokens: 20,
        steps: 7,
        requests: 5,
        finished: 2,
        finished_stop: 0,
        by_priority: Vec::new(),
    };
    let mut wire = crate::dialect::Served::default().wire;
    wire.enable_metrics = true;
    wire.iter_perf_stats = true;
    for (name, engine) in engine_names() {
        let d = of(engine);
        assert_eq!(d.engine(), engine, "{name}");
        assert_eq!(Some(d.profile()), crate::profile(engine), "{name}");
        let facts = d.profile().metrics;
        assert_eq!(d.metrics_path(), facts.map(|m| m.path), "{name}");
        let Some(m) = facts else { continue };
        let text = d.metrics_text("sim-model", &snapshot, &wire);
        let samples: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split(['{', ' ']).next())
            .collect();
        let named = [Some(m.running), Some(m.waiting), m.kv_usage]
            .into_iter()
            .chain([m.preemptions.map(|p| p.name)])
            .flatten();
        for series in named {
            assert!(
                samples.contains(&series),
                "{name}: no `{series}` in\n{text}"
            );
        }
    }
}
