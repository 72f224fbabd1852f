//! Checks that need the engine's profile: with an explicit `target.engine`, what that engine
//! cannot do is said at validation; with `auto` it is said when the server has answered.

use super::at;
use crate::diagnostics::Diagnostic;
use crate::engine::profile;
use crate::position::KeyPath;
use crate::types::{SpecFile, TokenizerSource};

pub(crate) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let Some(p) = profile(s.target.engine) else {
        return;
    };
    if s.target.tokenizer == TokenizerSource::Server && !p.can_tokenize() {
        out.push(
            Diagnostic::error(
                at("target.tokenizer"),
                format!(
                    "`tokenizer: server`, but {} has no tokenize endpoint, so no prompt could \
                     be counted",
                    p.name
                ),
            )
            .with_hint(
                "count with the model's own tokenizer: `tokenizer: local` and \
                 `tokenizer_path: path/to/tokenizer.json` (or `tokenizer: none` for \
                 approximate lengths)",
            ),
        );
    }
    let w = &s.workload;
    let plan = p.body_plan(w.ignore_eos, w.send_min_tokens);
    for warning in plan.warnings {
        let key = if warning.contains("min_tokens") && !warning.contains("ignore_eos") {
            "workload.send_min_tokens"
        } else {
            "workload.ignore_eos"
        };
        out.push(Diagnostic::warning(at(key), warning));
    }
}

/// A `server_arg` rule at `rule` needs an engine that reports its arguments, and, where the
/// engine's sources hold a closed list of names (TGI's `/info`), one of them.
pub(crate) fn check_server_arg(
    s: &crate::types::ExperimentSpec,
    rule: &KeyPath,
    name: &str,
    out: &mut Vec<Diagnostic>,
) {
    let Some(p) = profile(s.target.engine) else {
        return;
    };
    if !p.reads_server_args() {
        out.push(
            Diagnostic::error(
                rule.key("server_arg"),
                format!(
                    "{} does not report its server arguments, so a `server_arg` rule cannot \
                     be checked",
                    p.name
                ),
            )
            .with_hint(
                "prove the variant another way: `log_contains: TEXT` (a line the server \
                 prints) or `json: {path, pointer, equals}`",
            ),
        );
        return;
    }
    if let Some(names) = p.server_arg_names()
        && !name.trim().is_empty()
        && !names.contains(&name)
    {
        let where_: Vec<String> = p
            .server_args
            .iter()
            .filter_map(|a| match a {
                crate::engine::ArgSource::JsonKeys { path, .. } => Some(format!("`{path}`")),
                _ => None,
            })
            .collect();
        out.push(
            Diagnostic::warning(
                rule.key("server_arg").key("name"),
                format!(
                    "{} reports only {} of its arguments at {}, and `{name}` is not one: the \
                     rule would fail at every start (`server argument not found`)",
                    p.name,
                    names.len(),
                    where_.join(", ")
                ),
            )
            .with_hint(format!(
                "prove the variant with `log_contains: TEXT` (a line the server prints with \
                 the setting) or `json: {{path, pointer, equals}}` on an endpoint that shows \
                 it; `server_arg` can read {}",
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        );
    }
}
