//! `workload.request_body`, `variants[].request_body` and `request_body_takes_over`: owned
//! fields refused where they are written, what the engine does with the rest.

use super::at;
use crate::diagnostics::Diagnostic;
use crate::engine::profile;
use crate::request_body::{BodyMap, OWNED_FIELDS, RENDER_FIELDS, owned};
use crate::types::{ApiKind, SpecFile};

pub(super) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let w = &s.workload;
    for (i, name) in w.request_body_takes_over.iter().enumerate() {
        if owned(name).is_none() {
            let list: Vec<&str> = OWNED_FIELDS.iter().map(|(k, _)| *k).collect();
            out.push(
                Diagnostic::error(
                    at(&format!("workload.request_body_takes_over[{i}]")),
                    format!(
                        "`{name}` is not a field servebench sets, so there is nothing to take over"
                    ),
                )
                .with_hint(format!(
                    "set `{name}` in `request_body` directly; the fields servebench sets are {}",
                    list.join(", ")
                )),
            );
        }
    }
    let mut bodies: Vec<(String, &BodyMap)> = Vec::new();
    if let Some(b) = &w.request_body {
        bodies.push(("workload.request_body".into(), b));
    }
    for (i, v) in s.variants.iter().enumerate() {
        if let Some(b) = &v.request_body {
            bodies.push((format!("variants[{i}].request_body"), b));
        }
    }
    for (key_path, body) in &bodies {
        for key in body.keys() {
            check_key(spec, key_path, key, out);
        }
    }
}

fn check_key(spec: &SpecFile, key_path: &str, key: &str, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let w = &s.workload;
    let chat = s.target.api == ApiKind::OpenaiChat;
    if let Some(why) = owned(key)
        && !w.request_body_takes_over.iter().any(|k| k == key)
    {
        out.push(
            Diagnostic::error(
                at(&format!("{key_path}.{key}")),
                format!("`{key}` is a field servebench sets: {why}"),
            )
            .with_hint(format!(
                "remove it, or add `request_body_takes_over: [{key}]` to `workload` to send \
                 yours instead (the result then says the spec took it over)"
            )),
        );
        return;
    }
    if RENDER_FIELDS.contains(&key) && !chat {
        out.push(Diagnostic::warning(
            at(&format!("{key_path}.{key}")),
            format!(
                "`{key}` changes how a chat prompt is rendered, but `target.api` is \
                 `openai-completions`: the engine may ignore or refuse it"
            ),
        ));
    }
    let Some(p) = profile(s.target.engine) else {
        return;
    };
    if let Some(d) = p.drops_field(key) {
        out.push(
            Diagnostic::warning(
                at(&format!("{key_path}.{key}")),
                format!(
                    "{} drops `{key}` without a word (not a field of its request type, and it \
                     refuses none): requests with it are the requests without it, so variants \
                     that differ only there measure one configuration twice",
                    p.name
                ),
            )
            .with_hint(d.instead),
        );
        return;
    }
    if let Some(status) = p.refuses_field(key, chat) {
        out.push(
            Diagnostic::warning(
                at(&format!("{key_path}.{key}")),
                format!(
                    "{} answers HTTP {status} to `{key}`: it is not a field of its request type",
                    p.name
                ),
            )
            .with_hint("`servebench probe --spec` sends one request with the body and says whether it was accepted"),
        );
    } else if p.request.accepts.is_none()
        && let Some(status) = p.refuses_unknown()
    {
        out.push(
            Diagnostic::warning(
                at(&format!("{key_path}.{key}")),
                format!(
                    "{} answers HTTP {status} to a field outside its request type; whether \
                     `{key}` is one of its fields is not known here",
                    p.name
                ),
            )
            .with_hint("`servebench probe --spec` sends one request with the body and says whether it was accepted"),
        );
    }
}
