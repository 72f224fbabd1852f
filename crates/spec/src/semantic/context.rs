//! A workload longer than the context a variant's server is started with, on an engine that
//! cuts `max_tokens` to what the context leaves instead of refusing (the profile's
//! `context_clip`: vLLM 0.33.0, docs/engines.md finding 48): such requests would return fewer
//! tokens than asked, with no error, and the run would measure shorter outputs.

use std::collections::BTreeSet;

use super::at;
use crate::diagnostics::Diagnostic;
use crate::engine::{ContextClip, profile};
use crate::types::{DatasetKind, ExperimentSpec, SpecFile, TokenCount};

pub(crate) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let Some(clip) = profile(s.target.engine).and_then(|p| p.context_clip) else {
        return;
    };
    let (Some((input, output)), Some(sv)) = (longest(s), &s.server) else {
        return;
    };
    let mut warned = BTreeSet::new();
    for (j, v) in s.variants.iter().enumerate() {
        let placed: Vec<(String, &str)> = [("command", &sv.command), ("args", &sv.args)]
            .into_iter()
            .flat_map(|(key, list)| {
                list.iter()
                    .enumerate()
                    .map(move |(i, a)| (format!("server.{key}[{i}]"), a.as_str()))
            })
            .chain(
                v.server
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| (format!("variants[{j}].server.args[{i}]"), a.as_str())),
            )
            .collect();
        let Some((path, context)) = context_arg(&placed, clip.flag) else {
            continue;
        };
        if input + output > context && warned.insert(path.clone()) {
            out.push(warning(&path, clip, (input, output), context));
        }
    }
}

fn warning(path: &str, clip: ContextClip, (input, output): (u64, u64), context: u64) -> Diagnostic {
    let total = input + output;
    Diagnostic::warning(
        at(path),
        format!(
            "requests of up to {input} prompt + {output} output = {total} tokens exceed \
             `{} {context}`: vLLM {} cuts their `max_tokens` to what the context leaves, \
             without an error, so they would return fewer tokens than asked and the run would \
             measure shorter outputs ({} refuses them with HTTP 400); the run refuses them \
             before measuring where prompt lengths are exact, and a reply cut short is flagged \
             `length_cut`",
            clip.flag, clip.clips_in, clip.refuses_in
        ),
    )
    .with_hint(format!(
        "shorten `workload.dataset` (input_tokens, output_tokens; or the sweep's), or start \
         the server with `{} {total}` or more",
        clip.flag
    ))
}

/// The longest prompt and the longest output a `random` or `image` workload asks for (the
/// sweep's values where it sweeps them: every combination is measured).
fn longest(s: &ExperimentSpec) -> Option<(u64, u64)> {
    let d = &s.workload.dataset;
    if !matches!(d.kind, DatasetKind::Random | DatasetKind::Image) {
        return None;
    }
    let most = |swept: &Option<Vec<u32>>, own: Option<TokenCount>| {
        swept
            .as_ref()
            .and_then(|v| v.iter().max().copied())
            .or(own.map(TokenCount::max))
            .map(u64::from)
    };
    Some((
        most(&s.sweep.input_tokens, d.input_tokens)?,
        most(&s.sweep.output_tokens, d.output_tokens)?,
    ))
}

/// The context `flag` sets in `args` (`--flag N` or `--flag=N`; the last one wins, as
/// argparse reads it), and where; `None` where it is not set or not a number.
fn context_arg(args: &[(String, &str)], flag: &str) -> Option<(String, u64)> {
    let mut found = None;
    for (i, (path, a)) in args.iter().enumerate() {
        if let Some(v) = a.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            found = Some((path.clone(), v.trim().parse().ok()));
        } else if *a == flag {
            found = Some((
                path.clone(),
                args.get(i + 1).and_then(|(_, v)| v.trim().parse().ok()),
            ));
        }
    }
    let (path, n) = found?;
    Some((path, n?))
}
