//! `evidence.kernels` and `kernel` verify rules: what the engine's profiler needs at launch,
//! where its traces go, and patterns that compile for every variant.

use super::at;
use crate::diagnostics::Diagnostic;
use crate::engine::{LaunchNeed, Profiler, profile};
use crate::substitute::{Context, resolve};
use crate::types::{ExperimentSpec, KernelCheck, SpecFile};

pub(crate) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let ev = s.evidence.as_ref().and_then(|e| e.kernels.as_ref());
    let mut rules: Vec<(String, &KernelCheck)> = s
        .server
        .iter()
        .flat_map(|sv| sv.verify.iter().enumerate())
        .filter_map(|(i, r)| {
            r.kernel
                .as_ref()
                .map(|k| (format!("server.verify[{i}]"), k))
        })
        .collect();
    for (j, v) in s.variants.iter().enumerate() {
        for (i, r) in v.server.verify.iter().enumerate() {
            if let Some(k) = &r.kernel {
                rules.push((format!("variants[{j}].server.verify[{i}]"), k));
            }
        }
    }
    for (path, k) in &rules {
        check_rule(s, path, k, ev.is_some(), out);
    }
    let Some(ev) = ev else { return };
    if ev.dir.trim().is_empty() {
        out.push(
            Diagnostic::error(at("evidence.kernels.dir"), "`dir` is empty").with_hint(
                "name a directory readable from this host, e.g. `/tmp/servebench-traces`",
            ),
        );
    }
    if let Some(sv) = &s.server
        && sv.launcher.as_ref().is_some_and(|l| l.slurm.is_some())
        && (ev.dir.starts_with("/tmp") || ev.dir.starts_with("/dev/shm"))
    {
        out.push(Diagnostic::warning(
            at("evidence.kernels.dir"),
            format!("`{}` is node-local: under Slurm the ranks write their traces on their own nodes, where servebench cannot read them", ev.dir),
        ).with_hint("put the traces on storage every node and this host share (the results directory's file system, a home or scratch mount)"));
    }
    check_launch(s, &ev.dir, out);
}

/// The engine's profiler: named and driven, and what its launch needs.
fn check_launch(s: &ExperimentSpec, dir: &str, out: &mut Vec<Diagnostic>) {
    let Some(p) = profile(s.target.engine) else {
        return;
    };
    let facts = match &p.profiler {
        Profiler::None { instead } => {
            out.push(
                Diagnostic::error(
                    at("evidence.kernels"),
                    format!(
                        "{} has no profiler servebench can drive ({instead})",
                        p.name
                    ),
                )
                .with_hint(
                    "leave out `evidence.kernels` and its `kernel` verify rules for this engine",
                ),
            );
            return;
        }
        Profiler::Endpoints(f) => f,
    };
    let (Some(need), Some(sv)) = (facts.launch, &s.server) else {
        return;
    };
    check_lean(s, p.name, &need, out);
    for v in &s.variants {
        let argv: Vec<&String> = sv
            .command
            .iter()
            .chain(&sv.args)
            .chain(&v.server.args)
            .collect();
        let has = |t: &str| argv.iter().any(|a| a.contains(t));
        let lacks_arg = !has(need.arg);
        let lacks_dir = need.names_dir && !has(dir);
        if lacks_arg || lacks_dir {
            let what = if lacks_arg {
                format!("`{}`", need.arg)
            } else {
                format!("the directory `{dir}` (evidence.kernels.dir)")
            };
            out.push(
                Diagnostic::error(
                    at("server.args"),
                    format!(
                        "variant `{}`: {}'s profiler needs {what} in the server's arguments, which lack it: no trace would be written",
                        v.name, p.name
                    ),
                )
                .with_hint(need.hint),
            );
        }
    }
}

/// Warns where a variant's launch leaves on a profiler setting that only makes the traces
/// larger and the probe heavier (vLLM's `torch_profiler_with_stack`), at the argument that
/// launches the profiler (once per argument, however many variants share it).
fn check_lean(s: &ExperimentSpec, engine: &str, need: &LaunchNeed, out: &mut Vec<Diagnostic>) {
    let Some(sv) = &s.server else { return };
    let mut warned = std::collections::BTreeSet::new();
    for (j, v) in s.variants.iter().enumerate() {
        let placed: Vec<(String, &str)> = sv
            .args
            .iter()
            .enumerate()
            .map(|(i, a)| (format!("server.args[{i}]"), a.as_str()))
            .chain(
                v.server
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| (format!("variants[{j}].server.args[{i}]"), a.as_str())),
            )
            .collect();
        let argv: Vec<&str> = placed.iter().map(|(_, a)| *a).collect();
        let left = need.left_on(&argv);
        let Some((path, _)) = placed.iter().find(|(_, a)| a.starts_with(need.arg)) else {
            continue;
        };
        if left.is_empty() || !warned.insert(path.clone()) {
            continue;
        }
        let keys = left
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let write = left
            .iter()
            .map(|k| format!("\"{k}\": false"))
            .collect::<Vec<_>>()
            .join(", ");
        out.push(
            Diagnostic::warning(
                at(path),
                format!(
                    "variant `{}`: {engine}'s profiler is launched with {keys} on (its default), which kernel evidence does not read: larger traces and a heavier probe (with_stack records every operator's Python stack)",
                    v.name
                ),
            )
            .with_hint(format!(
                "add {write} to the JSON of `{}` (or `{}.{}=false`)",
                need.arg, need.arg, left[0]
            )),
        );
    }
}

fn check_rule(
    s: &ExperimentSpec,
    path: &str,
    k: &KernelCheck,
    has_evidence: bool,
    out: &mut Vec<Diagnostic>,
) {
    let p = at(&format!("{path}.kernel"));
    if !has_evidence {
        out.push(
            Diagnostic::error(
                p.clone(),
                "a `kernel` rule is judged on kernel evidence, and the spec takes none",
            )
            .with_hint(
                "add `evidence: {kernels: {dir: /tmp/servebench-traces}}` (docs/kernels.md)",
            ),
        );
    }
    if k.matches.is_none() && k.absent.is_none() {
        out.push(
            Diagnostic::error(p.clone(), "a `kernel` rule needs `matches` or `absent`")
                .with_hint("e.g. `kernel: {matches: \"GroupProblemShape\", min_share: 0.05}` or `kernel: {absent: \"GroupProblemShape\"}`"),
        );
    }
    if k.min_share.is_some() && k.matches.is_none() {
        out.push(Diagnostic::error(
            p.key("min_share"),
            "`min_share` applies to `matches`, which this rule lacks",
        ));
    }
    for (key, pat) in [("matches", &k.matches), ("absent", &k.absent)] {
        let Some(pat) = pat else { continue };
        for v in &s.variants {
            let ctx = Context {
                vars: Some(&v.vars),
                ..Context::default()
            };
            let Ok(text) = resolve(pat, &ctx) else {
                continue; // refs.rs says what is wrong with the reference
            };
            if let Err(e) = regex::Regex::new(&text) {
                out.push(
                    Diagnostic::error(
                        p.key(key),
                        format!("`{text}` (variant `{}`) is not a regular expression: {e}", v.name),
                    )
                    .with_hint("escape the characters regular expressions use (`\\(`, `\\<`, `\\.`), or match a shorter part of the name"),
                );
                break;
            }
        }
    }
}
