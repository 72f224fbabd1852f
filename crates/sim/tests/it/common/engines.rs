//! Helpers of the personality tests: a simulator speaking one engine's dialect, and
//! chunks normalised so that a test can compare them with the shape an engine's source
//! writes (ids, times and token words vary; keys, order, nulls and counts must not).

use serde_json::Value;
use servebench_engines::Engine;
use servebench_sim::SimConfig;

use super::fast;

/// A fast simulator speaking `engine`'s dialect.
pub(crate) fn engine(engine: Engine) -> SimConfig {
    let mut c = fast();
    c.wire.engine = engine;
    c
}

/// `v` with `created` set to 0, non-empty `id`s to `"<id>"`, non-empty generated text
/// (`text`, `content`) to `"<tok>"` after checking that it is one generated token (a space
/// and a lowercase word), and every number inside `timings` to 0.
pub(crate) fn normalize(v: &Value) -> Value {
    norm(v, false)
}

fn norm(v: &Value, in_timings: bool) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("created", Value::Number(_)) => Value::from(0),
                        ("id", Value::String(s)) if !s.is_empty() => Value::from("<id>"),
                        (
                            "text" | "content" | "reasoning_content" | "reasoning",
                            Value::String(s),
                        ) if !s.is_empty() => {
                            assert!(
                                s.starts_with(' ')
                                    && s[1..].chars().all(|c| c.is_ascii_lowercase())
                                    && s.len() > 1,
                                "`{k}` is not one generated token: {s:?}"
                            );
                            Value::from("<tok>")
                        }
                        ("timings", t) => norm(t, true),
                        (_, v) => norm(v, in_timings),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| norm(v, in_timings)).collect()),
        Value::Number(_) if in_timings => Value::from(0),
        v => v.clone(),
    }
}

/// The events of a stream, each parsed and normalised; `[DONE]` as the string `"[DONE]"`
/// and an SSE comment as `":"`.
pub(crate) fn shapes(events: &[super::Event]) -> Vec<Value> {
    events
        .iter()
        .map(|e| match e.json() {
            Some(v) => normalize(&v),
            None => Value::from(e.data.trim().to_owned()),
        })
        .collect()
}
