//! `workload.request_body` and `variants[].request_body`: fields merged into every generation
//! request's JSON body (docs/spec.md, "Request bodies").
//!
//! The merge is a JSON merge patch (RFC 7396): a mapping is merged key by key, recursively;
//! any other value replaces; `null` removes the key. The workload's patch is applied to the
//! body servebench builds, then the variant's over the result.

use serde_json::{Map, Value};

use crate::types::SpecFile;

/// A request-body mapping.
pub type BodyMap = Map<String, Value>;

/// The fields servebench sets itself, and why a spec may not set them by accident.
pub const OWNED_FIELDS: &[(&str, &str)] = &[
    ("model", "servebench sends `target.model`"),
    ("prompt", "servebench sends the dataset's prompt"),
    ("messages", "servebench sends the dataset's messages"),
    (
        "stream",
        "servebench measures streamed responses: TTFT and ITL need the stream",
    ),
    (
        "stream_options",
        "servebench asks for `include_usage` where the engine takes it, to count tokens",
    ),
    (
        "max_tokens",
        "servebench sends the dataset's output length (`workload.dataset.output_tokens`)",
    ),
    ("temperature", "servebench sends `workload.temperature`"),
    (
        "ignore_eos",
        "servebench sends it to fix output lengths (`workload.ignore_eos`)",
    ),
    (
        "min_tokens",
        "servebench sends it to fix output lengths (`workload.send_min_tokens`)",
    ),
    (
        "generation_config",
        "servebench sends it to transformers serve to fix output lengths",
    ),
];

/// Fields that change how a chat prompt is rendered, so its token count: sent to the chat
/// `/tokenize` endpoint where the engine's profile says it takes them, otherwise the prompt
/// lengths are estimates.
pub const RENDER_FIELDS: &[&str] = &[
    "chat_template_kwargs",
    "chat_template",
    "tools",
    "tool_choice",
    "reasoning_effort",
];

/// Why servebench owns `key`, when it does.
pub fn owned(key: &str) -> Option<&'static str> {
    OWNED_FIELDS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, why)| *why)
}

/// Applies `patch` to `target` as a JSON merge patch: mappings merge recursively, `null`
/// removes the key, anything else replaces.
pub fn apply(target: &mut BodyMap, patch: &BodyMap) {
    for (k, v) in patch {
        match v {
            Value::Null => {
                target.remove(k);
            }
            Value::Object(p) => match target.get_mut(k) {
                Some(Value::Object(t)) => apply(t, p),
                _ => {
                    let mut fresh = Map::new();
                    apply(&mut fresh, p);
                    target.insert(k.clone(), Value::Object(fresh));
                }
            },
            other => {
                target.insert(k.clone(), other.clone());
            }
        }
    }
}

impl crate::types::Variant {
    /// The variant's whole patch in words, as every place that shows variants shows it
    /// (compare's source lines, the report's variant table): its server args, its env as
    /// `KEY=value`, and its `request_body` as `request_body {json}` (issue 51: a
    /// request-field A/B showed nothing of the field it tested).
    pub fn patch_words(&self) -> Vec<String> {
        let mut out = self.server.args.clone();
        out.extend(self.server.env.iter().map(|(k, v)| format!("{k}={v}")));
        if let Some(b) = &self.request_body {
            out.push(format!("request_body {}", Value::Object(b.clone())));
        }
        out
    }
}

impl SpecFile {
    /// The patches of variant `variant`'s generation requests, in the order they apply: the
    /// workload's, then the variant's (each absent when not given).
    pub fn request_body_patches(&self, variant: &str) -> Vec<&BodyMap> {
        let s = &self.spec;
        let v = s
            .variants
            .iter()
            .find(|v| v.name == variant)
            .and_then(|v| v.request_body.as_ref());
        s.workload.request_body.iter().chain(v).collect()
    }

    /// The fields variant `variant` sends through `request_body` (both patches merged; a
    /// `null` of the workload's patch stays, as it removes a field of servebench's body).
    pub fn request_body(&self, variant: &str) -> BodyMap {
        let mut out = Map::new();
        for p in self.request_body_patches(variant) {
            for (k, v) in p {
                match (out.get_mut(k), v) {
                    (Some(Value::Object(t)), Value::Object(p)) => apply(t, p),
                    _ => {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        out
    }

    /// The render fields (`RENDER_FIELDS`) of variant `variant`'s body.
    pub fn render_fields(&self, variant: &str) -> BodyMap {
        self.request_body(variant)
            .into_iter()
            .filter(|(k, v)| RENDER_FIELDS.contains(&k.as_str()) && !v.is_null())
            .collect()
    }

    /// The render fields of the workload's own `request_body` (the same for every variant:
    /// prompts are fitted with them, so every variant gets the same prompts).
    pub fn workload_render_fields(&self) -> BodyMap {
        let mut out = Map::new();
        if let Some(b) = &self.spec.workload.request_body {
            apply(&mut out, b);
        }
        out.retain(|k, _| RENDER_FIELDS.contains(&k.as_str()));
        out
    }

    /// Whether any request body is given.
    pub fn has_request_body(&self) -> bool {
        let s = &self.spec;
        s.workload
            .request_body
            .as_ref()
            .is_some_and(|m| !m.is_empty())
            || s.variants
                .iter()
                .any(|v| v.request_body.as_ref().is_some_and(|m| !m.is_empty()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> BodyMap {
        v.as_object().expect("object").clone()
    }

    #[test]
    fn merge_patch_merges_mappings_replaces_values_and_null_removes() {
        let mut body = map(
            json!({"model": "m", "stream_options": {"include_usage": true},
            "ck": {"a": 1, "b": 2}, "top_k": 5}),
        );
        apply(
            &mut body,
            &map(
                json!({"ck": {"b": null, "c": 3}, "top_k": 20, "stream_options": null,
                "new": {"x": null, "y": 1}}),
            ),
        );
        assert_eq!(
            Value::Object(body),
            json!({"model": "m", "ck": {"a": 1, "c": 3}, "top_k": 20, "new": {"y": 1}})
        );
    }
}
