//! Every dialect at once, each found through the table of engines ([`crate::of`]): their
//! start-up log lines against the engines' log statements, their ids, their metrics against
//! their engines' profiles.

use crate::dialect::request::Api;
use crate::dialect::tests::{Ready, addr, config};
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

/// A dialect whose engine's profile lists every request field the engine accepts takes each
/// of them and refuses any other with the profile's status: the list is the profile's, so
/// the simulator and the client's validation cannot disagree (transformers serve's dialect
/// kept a list of its own that lacked openai 3.57.0's `verbosity` and `web_search_options`).
#[test]
fn each_dialect_accepts_the_fields_its_engines_profile_lists() {
    use serde_json::{Map, Value, json};
    let mut lists = 0;
    for (name, engine) in engine_names() {
        let d = of(engine);
        let Some(accepts) = d.profile().request.accepts else {
            continue;
        };
        lists += 1;
        let c = config(engine);
        for (api, fields) in [
            (Api::Chat, accepts.chat),
            (Api::Completions, accepts.completions),
        ] {
            let mut obj: Map<String, Value> = fields
                .iter()
                .map(|f| (f.to_string(), Value::Null))
                .collect();
            obj.insert("model".into(), json!(c.model));
            match api {
                Api::Chat => obj.insert("messages".into(), json!([])),
                Api::Completions => obj.insert("prompt".into(), json!("hi")),
            };
            if let Err(e) = d.check(api, &obj, &c) {
                panic!(
                    "{name} {api:?} refuses a field its profile accepts: {}",
                    e.message
                );
            }
            obj.insert("no_such_field".into(), Value::Null);
            let refused = d.check(api, &obj, &c).err().map(|e| e.status.as_u16());
            assert_eq!(refused, d.profile().refuses_unknown(), "{name} {api:?}");
        }
    }
    assert!(lists > 0, "no profile lists the fields it accepts");
}

/// Every path an engine's profile sends the client to (readiness, info, version, tokenize,
/// server arguments, its concurrency limit, metrics) is a route of its dialect: the client
/// and the simulator read one list of endpoints, and a path changed on one side only fails
/// here. The generic profile is left out: it lists every endpoint a plain server might have,
/// not the simulator's own.
#[tokio::test]
async fn each_dialect_serves_every_path_its_engines_profile_names() {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use tower::ServiceExt as _;
    for (name, engine) in engine_names().filter(|(_, e)| *e != Engine::Openai) {
        let d = of(engine);
        let p = d.profile();
        let mut paths = vec![p.readiness];
        paths.extend(p.info);
        paths.extend(p.version.iter().map(|v| v.path));
        paths.extend(
            p.tokenize
                .iter()
                .flat_map(|t| [Some(t.path), t.chat_path])
                .flatten(),
        );
        paths.extend(p.server_args.iter().filter_map(|a| match a {
            crate::ArgSource::Json { path, .. } | crate::ArgSource::JsonKeys { path, .. } => {
                Some(*path)
            }
            _ => None,
        }));
        paths.extend(p.concurrency_limit.map(|c| c.path));
        paths.extend(p.metrics.map(|m| m.path));
        let mut c = config(engine);
        c.wire.enable_metrics = true;
        let host = std::sync::Arc::new(crate::dialect::Host::new(
            d,
            c,
            0,
            std::sync::Arc::new(Ready(Snapshot::default())),
        ));
        for path in paths {
            let app = crate::dialect::routes(d).with_state(host.clone());
            let req = Request::get(path).body(Body::empty()).expect("request");
            let status = app.oneshot(req).await.expect("infallible").status();
            assert_ne!(status, StatusCode::NOT_FOUND, "{name}: no route at {path}");
        }
    }
}
