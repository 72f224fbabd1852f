//! `${…}` references: every one must resolve.

use super::at;
use crate::diagnostics::{Diagnostic, did_you_mean};
use crate::position::KeyPath;
use crate::substitute::{Reference, references};
use crate::types::SpecFile;

/// Where a string sits, for which references it may hold.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    /// Server launch and verify rules: every kind.
    Server,
    /// `server.worker` (ranks other than the head): every kind, but a `${port}` here does
    /// not tell the head its port.
    Worker,
    /// Target URL: `${port}`, `${variant.*}` and `${env.*}`.
    Target,
    /// Provenance commands and files: no variant, no port.
    Provenance,
    /// Request headers: `${env.*}` only.
    Header,
}

/// Every `${env.NAME}` a spec reads, with where: `(spec.server.env.HF_TOKEN, HF_TOKEN)`.
pub fn env_references(spec: &SpecFile) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, text, _) in spec_strings(spec) {
        for r in references(text).unwrap_or_default() {
            if let Reference::Env(name) = r {
                out.push((path.to_string(), name));
            }
        }
    }
    out
}

/// Every string of a spec that may hold `${…}` references, with where and its scope.
fn spec_strings(spec: &SpecFile) -> Vec<(KeyPath, &str, Scope)> {
    let s = &spec.spec;
    let mut strings: Vec<(KeyPath, &str, Scope)> = Vec::new();
    if let Some(server) = &s.server {
        for (i, c) in server.command.iter().enumerate() {
            strings.push((at(&format!("server.command[{i}]")), c, Scope::Server));
        }
        for (i, c) in server.args.iter().enumerate() {
            strings.push((at(&format!("server.args[{i}]")), c, Scope::Server));
        }
        for (k, v) in &server.env {
            strings.push((at(&format!("server.env.{k}")), v, Scope::Server));
        }
        if let Some(w) = &server.worker {
            for (i, a) in w.args.iter().enumerate() {
                strings.push((at(&format!("server.worker.args[{i}]")), a, Scope::Worker));
            }
            for (k, v) in &w.env {
                strings.push((at(&format!("server.worker.env.{k}")), v, Scope::Worker));
            }
        }
        if let Some(w) = &server.working_dir {
            strings.push((at("server.working_dir"), w, Scope::Server));
        }
        strings.push((
            at("server.readiness.http.path"),
            &server.readiness.http.path,
            Scope::Server,
        ));
        for (i, r) in server.verify.iter().enumerate() {
            if let Some(t) = &r.log_contains {
                strings.push((
                    at(&format!("server.verify[{i}].log_contains")),
                    t,
                    Scope::Server,
                ));
            }
            if let Some(e) = r.server_arg.as_ref().and_then(|a| a.equals.as_str()) {
                strings.push((
                    at(&format!("server.verify[{i}].server_arg.equals")),
                    e,
                    Scope::Server,
                ));
            }
            if let Some(k) = &r.kernel {
                for (key, pat) in [("matches", &k.matches), ("absent", &k.absent)] {
                    if let Some(pat) = pat {
                        strings.push((
                            at(&format!("server.verify[{i}].kernel.{key}")),
                            pat,
                            Scope::Server,
                        ));
                    }
                }
            }
            if let Some(j) = &r.json {
                strings.push((
                    at(&format!("server.verify[{i}].json.path")),
                    &j.path,
                    Scope::Server,
                ));
                if let Some(e) = j.equals.as_str() {
                    strings.push((
                        at(&format!("server.verify[{i}].json.equals")),
                        e,
                        Scope::Server,
                    ));
                }
            }
        }
    }
    if let Some(u) = &s.target.base_url {
        strings.push((at("target.base_url"), u, Scope::Target));
    }
    for (k, v) in &s.target.headers {
        strings.push((at(&format!("target.headers.{k}")), v, Scope::Header));
    }
    for (i, v) in s.variants.iter().enumerate() {
        for (j, a) in v.server.args.iter().enumerate() {
            strings.push((
                at(&format!("variants[{i}].server.args[{j}]")),
                a,
                Scope::Server,
            ));
        }
        for (k, val) in &v.server.env {
            strings.push((
                at(&format!("variants[{i}].server.env.{k}")),
                val,
                Scope::Server,
            ));
        }
        if let Some(u) = &v.base_url {
            strings.push((at(&format!("variants[{i}].base_url")), u, Scope::Target));
        }
    }
    for (i, c) in s.provenance.commands.iter().enumerate() {
        strings.push((
            at(&format!("provenance.commands[{i}]")),
            c,
            Scope::Provenance,
        ));
    }
    for (i, c) in s.provenance.files.iter().enumerate() {
        strings.push((at(&format!("provenance.files[{i}]")), c, Scope::Provenance));
    }
    strings
}

pub(super) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let strings = spec_strings(spec);

    let var_names: Vec<String> = s
        .variants
        .iter()
        .flat_map(|v| v.vars.keys().map(|k| format!("variant.{k}")))
        .collect();
    let mut port_used = false;
    let errors_before = out.len();
    for (path, text, scope) in strings {
        let refs = match references(text) {
            Ok(r) => r,
            Err(e) => {
                out.push(
                    Diagnostic::error(path, format!("`{text}`: {e}"))
                        .with_hint("close it with `}`, or write `$$` for a literal `$`"),
                );
                continue;
            }
        };
        for r in refs {
            if scope == Scope::Header && !matches!(r, Reference::Env(_)) {
                out.push(
                    Diagnostic::error(
                        path.clone(),
                        "a header value may only read the environment (`${env.NAME}`)",
                    )
                    .with_hint("write the value, or `${env.NAME}` for a secret"),
                );
                continue;
            }
            match r {
                Reference::Unknown(name) => {
                    let mut known: Vec<String> = [
                        "port",
                        "servebench",
                        "node.rank",
                        "node.count",
                        "head.host",
                        "head.port",
                    ]
                    .map(String::from)
                    .to_vec();
                    known.extend(var_names.iter().cloned());
                    let d =
                        Diagnostic::error(path.clone(), format!("unknown reference `${{{name}}}`"));
                    let hint = match did_you_mean(&name, known.iter().map(String::as_str)) {
                        Some(s) => format!("did you mean `${{{s}}}`?"),
                        None => "references are `${port}`, `${servebench}`, `${variant.NAME}`, `${env.NAME}`, and `${node.rank}`, `${node.count}`, `${head.host}`, `${head.port}` in the server block; `$$` is a literal `$`".into(),
                    };
                    out.push(d.with_hint(hint));
                }
                Reference::Port => {
                    if s.server.is_none() {
                        out.push(
                            Diagnostic::error(
                                path.clone(),
                                "`${port}` is only defined when servebench launches the server",
                            )
                            .with_hint("write the port of the running server in the URL"),
                        );
                    } else if scope == Scope::Provenance {
                        out.push(Diagnostic::error(
                            path.clone(),
                            "`${port}` is not defined in provenance commands",
                        ));
                    } else if scope == Scope::Server {
                        port_used = true;
                    }
                }
                Reference::NodeRank
                | Reference::NodeCount
                | Reference::HeadHost
                | Reference::HeadPort => {
                    if !matches!(scope, Scope::Server | Scope::Worker) {
                        out.push(
                            Diagnostic::error(
                                path.clone(),
                                format!(
                                    "`{}` is only defined in the server block (each rank of the server gets its own value)",
                                    node_ref_name(&r)
                                ),
                            )
                            .with_hint("use it in `server.command`, `server.args`, `server.env` or `server.worker`"),
                        );
                    }
                }
                Reference::Servebench => {
                    if !matches!(scope, Scope::Server | Scope::Worker) {
                        out.push(Diagnostic::error(
                            path.clone(),
                            "`${servebench}` is only defined in the server block",
                        ));
                    }
                }
                Reference::Variant(name) => {
                    if scope == Scope::Provenance {
                        out.push(Diagnostic::error(path.clone(), format!("`${{variant.{name}}}` is not defined in provenance: it is recorded once per run, not per variant")));
                        continue;
                    }
                    let missing: Vec<&str> = s
                        .variants
                        .iter()
                        .filter(|v| !v.vars.contains_key(&name))
                        .map(|v| v.name.as_str())
                        .collect();
                    if !missing.is_empty() {
                        out.push(
                            Diagnostic::error(
                                path.clone(),
                                format!(
                                    "`${{variant.{name}}}` is not defined for variant{} {}",
                                    if missing.len() == 1 { "" } else { "s" },
                                    missing
                                        .iter()
                                        .map(|m| format!("`{m}`"))
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                ),
                            )
                            .with_hint(format!("add `vars: {{{name}: …}}` to every variant")),
                        );
                    }
                }
                Reference::Env(_) => {}
            }
        }
    }
    let spans_nodes = s
        .server
        .as_ref()
        .and_then(|sv| sv.launcher.as_ref())
        .is_some_and(|l| l.slurm.is_some());
    if spans_nodes && !port_used && out.len() == errors_before {
        out.push(
            Diagnostic::error(
                at("server.args"),
                "the head of a server launched through Slurm must serve HTTP on `${port}`, which appears nowhere in the command, args or env of the head",
            )
            .with_hint("servebench picks the port on the head's node, checks it is free there and probes it: add e.g. `--port, ${port}` to `server.args` (not only to `server.worker.args`)"),
        );
    } else if s.server.is_some()
        && !port_used
        && s.target.base_url.is_none()
        && out.len() == errors_before
    {
        out.push(
                Diagnostic::error(at("server.args"), "the server is never told its port: `${port}` appears nowhere in the command, args or env")
                    .with_hint("servebench picks a free port and probes it: add e.g. `--port, ${port}` to `server.args`"),
            );
    }
}

/// How a node reference is written in a spec.
fn node_ref_name(r: &Reference) -> &'static str {
    match r {
        Reference::NodeRank => "${node.rank}",
        Reference::NodeCount => "${node.count}",
        Reference::HeadHost => "${head.host}",
        _ => "${head.port}",
    }
}
