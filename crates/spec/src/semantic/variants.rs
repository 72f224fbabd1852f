//! Variants, the server block, the target and verify rules.

use std::collections::BTreeSet;

use super::at;
use crate::diagnostics::Diagnostic;
use crate::position::KeyPath;
use crate::types::{HttpMethod, SpecFile, StopSignal, TokenizerSource};

/// Whether the spec is a plain load measurement: one variant, one trial per point, no
/// sequential rounds. Nothing is compared and no interval is given, by design, so the
/// warnings about a lone variant and too few trials are not raised; `run` says once what
/// the run is instead.
pub fn is_plain_load(spec: &SpecFile) -> bool {
    let s = &spec.spec;
    s.variants.len() == 1 && s.trials.count == 1 && s.trials.until_decided.is_none()
}

pub(super) fn check(spec: &SpecFile, out: &mut Vec<Diagnostic>) {
    let s = &spec.spec;
    let baselines: Vec<usize> = s
        .variants
        .iter()
        .enumerate()
        .filter(|(_, v)| v.baseline)
        .map(|(i, _)| i)
        .collect();
    match baselines.as_slice() {
        [] => out.push(
            Diagnostic::error(at("variants"), "no variant is the baseline").with_hint(format!(
                "add `baseline: true` to the variant every other is compared against, e.g. `{}`",
                s.variants.first().map(|v| v.name.as_str()).unwrap_or("?")
            )),
        ),
        [_] => {}
        [first, rest @ ..] => {
            for i in rest {
                out.push(
                    Diagnostic::error(
                        at(&format!("variants[{i}].baseline")),
                        format!(
                            "variant `{}` is a second baseline (`{}` is one already); exactly one variant is the baseline",
                            s.variants[*i].name, s.variants[*first].name
                        ),
                    )
                    .with_hint("remove `baseline: true` from all but one variant"),
                );
            }
        }
    }
    let mut seen = BTreeSet::new();
    for (i, v) in s.variants.iter().enumerate() {
        if !seen.insert(v.name.as_str()) {
            out.push(
                Diagnostic::error(
                    at(&format!("variants[{i}].name")),
                    format!("variant name `{}` is used twice", v.name),
                )
                .with_hint(
                    "give every variant its own name: results and comparisons are keyed by it",
                ),
            );
        }
    }
    if s.variants.len() == 1 && !is_plain_load(spec) {
        out.push(Diagnostic::warning(
            at("variants"),
            "only one variant: the run measures it, but there is nothing to compare it with",
        ));
    }
    for (i, a) in s.variants.iter().enumerate() {
        for b in s.variants.iter().skip(i + 1) {
            if a.server == b.server
                && a.base_url == b.base_url
                && a.vars == b.vars
                && a.name != b.name
            {
                out.push(Diagnostic::warning(
                    at("variants"),
                    format!(
                        "variants `{}` and `{}` launch identical servers: this is an A/A comparison",
                        a.name, b.name
                    ),
                ));
            }
        }
    }

    match &s.server {
        None => {
            let all_have_url = s.variants.iter().all(|v| v.base_url.is_some());
            if s.target.base_url.is_none() && !all_have_url {
                out.push(
                    Diagnostic::error(at("target"), "there is no `server` block and no `target.base_url`: nothing to send load to")
                        .with_hint("add `server:` to launch one, or `target.base_url: http://HOST:PORT` for a running server"),
                );
            }
            for (i, v) in s.variants.iter().enumerate() {
                if v.server != Default::default() {
                    out.push(
                        Diagnostic::error(
                            at(&format!("variants[{i}].server")),
                            format!("variant `{}` patches the server launch, but the spec has no `server` block", v.name),
                        )
                        .with_hint("add a `server:` block, or remove the variant's `server:`"),
                    );
                }
            }
        }
        Some(server) => {
            for (i, v) in s.variants.iter().enumerate() {
                if v.base_url.is_some() {
                    out.push(
                        Diagnostic::error(
                            at(&format!("variants[{i}].base_url")),
                            "a variant's `base_url` is for specs without a `server` block: the launched server is reached on its own port",
                        )
                        .with_hint("remove `base_url` from the variant"),
                    );
                }
            }
            if s.target.base_url.is_some() {
                out.push(Diagnostic::warning(
                    at("target.base_url"),
                    "`target.base_url` is set although servebench launches the server: load goes to this URL, not to the launched server's port",
                ));
            }
            let r = &server.readiness;
            if r.interval.is_zero() {
                out.push(
                    Diagnostic::error(
                        at("server.readiness.interval"),
                        "the readiness interval must be greater than 0",
                    )
                    .with_hint("e.g. `interval: 1s`"),
                );
            }
            if r.timeout.is_zero() {
                out.push(
                    Diagnostic::error(
                        at("server.readiness.timeout"),
                        "the readiness timeout must be greater than 0",
                    )
                    .with_hint("e.g. `timeout: 600s`: large models take minutes to load"),
                );
            } else if r.timeout < r.interval {
                out.push(Diagnostic::error(
                    at("server.readiness.timeout"),
                    format!("the readiness timeout ({}) is shorter than the interval ({}): the server would be polled at most once", r.timeout, r.interval),
                ));
            }
            if !r.http.path.starts_with('/') {
                out.push(
                    Diagnostic::error(
                        at("server.readiness.http.path"),
                        format!("the probe path `{}` must start with `/`", r.http.path),
                    )
                    .with_hint(format!("write `/{}`", r.http.path)),
                );
            }
            if r.http.body.is_some() && r.http.method != HttpMethod::Post {
                out.push(
                    Diagnostic::error(
                        at("server.readiness.http.body"),
                        "a probe body is sent only with `method: POST`",
                    )
                    .with_hint("add `method: POST` to the probe"),
                );
            }
            if server.stop.signal == StopSignal::SIGKILL && !server.stop.grace.is_zero() {
                out.push(Diagnostic::warning(at("server.stop.grace"), "`grace` has no effect with `signal: SIGKILL`: the server gets no chance to shut down cleanly"));
            }
            for (i, rule) in server.verify.iter().enumerate() {
                check_rule(s, at(&format!("server.verify[{i}]")), rule, out);
            }
            for (j, v) in s.variants.iter().enumerate() {
                for (i, rule) in v.server.verify.iter().enumerate() {
                    check_rule(
                        s,
                        at(&format!("variants[{j}].server.verify[{i}]")),
                        rule,
                        out,
                    );
                }
            }
            if server.verify.is_empty() && s.variants.len() > 1 {
                out.push(Diagnostic::warning(
                    at("server.verify"),
                    "no verify rule: nothing proves that each variant's change is really in effect",
                ).with_hint("add e.g. `verify: [{log_contains: \"backend='${variant.backend}'\"}]`"));
            }
            for (k, val) in &server.env {
                if is_secret_name(k) && !val.contains("${env.") {
                    out.push(
                        Diagnostic::warning(
                            at(&format!("server.env.{k}")),
                            format!("`{k}` looks like a secret written into the spec"),
                        )
                        .with_hint(format!("read it from the environment: `{k}: ${{env.{k}}}`")),
                    );
                }
            }
        }
    }

    let t = &s.target;
    if t.model.trim().is_empty() {
        out.push(
            Diagnostic::error(at("target.model"), "`model` is empty")
                .with_hint("write the model name the server expects in requests"),
        );
    }
    match (t.tokenizer, &t.tokenizer_path) {
        (TokenizerSource::Local, None) => out.push(
            Diagnostic::error(
                at("target.tokenizer"),
                "`tokenizer: local` needs `tokenizer_path`",
            )
            .with_hint("add `tokenizer_path: path/to/tokenizer.json`"),
        ),
        (TokenizerSource::Server | TokenizerSource::None, Some(_)) => out.push(
            Diagnostic::error(
                at("target.tokenizer_path"),
                "`tokenizer_path` is only read with `tokenizer: local`",
            )
            .with_hint("add `tokenizer: local` or remove `tokenizer_path`"),
        ),
        (TokenizerSource::None, None) => out.push(Diagnostic::warning(
            at("target.tokenizer"),
            "`tokenizer: none`: input lengths are approximate and results will say so",
        )),
        _ => {}
    }
    if let Some(name) = &t.api_key_env {
        let looks_like_key = name.starts_with("sk-") || name.len() > 40 || !is_env_name(name);
        if looks_like_key {
            out.push(
                Diagnostic::error(
                    at("target.api_key_env"),
                    "`api_key_env` must be the NAME of an environment variable, not a key",
                )
                .with_hint(
                    "e.g. `api_key_env: OPENAI_API_KEY`, and export the key in that variable",
                ),
            );
        }
    }
    for (name, value) in &t.headers {
        let path = at(&format!("target.headers.{name}"));
        let token = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token {
            out.push(
                Diagnostic::error(path.clone(), format!("`{name}` is not an HTTP header name"))
                    .with_hint("letters, digits and `-` (e.g. `X-Tenant`)"),
            );
        }
        let reserved = [
            "host",
            "content-length",
            "content-type",
            "transfer-encoding",
            "connection",
            "accept",
        ];
        if reserved.contains(&name.to_ascii_lowercase().as_str()) {
            out.push(
                Diagnostic::error(
                    path.clone(),
                    format!("`{name}` is set by servebench on every request"),
                )
                .with_hint("remove it"),
            );
        }
        if value.bytes().any(|b| b == b'\r' || b == b'\n') {
            out.push(Diagnostic::error(
                path.clone(),
                "a header value cannot hold a line break",
            ));
        }
        let lower = name.to_ascii_lowercase();
        let secret = is_secret_name(name) || lower == "cookie" || lower.contains("auth");
        if secret && !value.contains("${env.") {
            out.push(
                Diagnostic::error(
                    path,
                    format!(
                        "`{name}` carries a secret: the spec (and every result, which stores the spec) would hold it"
                    ),
                )
                .with_hint(format!(
                    "put it in an environment variable and write `{name}: ${{env.NAME}}` (for a bearer key, `api_key_env` does this)"
                )),
            );
        }
        if lower == "authorization" && t.api_key_env.is_some() {
            out.push(Diagnostic::error(
                at(&format!("target.headers.{name}")),
                "`api_key_env` already sends `Authorization`: give one of the two",
            ));
        }
    }
    if t.tls
        .as_ref()
        .and_then(|tls| tls.ca_file.as_deref())
        .is_some_and(|f| f.trim().is_empty())
    {
        out.push(
            Diagnostic::error(at("target.tls.ca_file"), "`ca_file` is empty")
                .with_hint("the path of a PEM file of CA certificates, relative to the spec file"),
        );
    }
    if let Some(u) = &t.base_url
        && !(u.starts_with("http://") || u.starts_with("https://"))
    {
        out.push(
            Diagnostic::error(
                at("target.base_url"),
                format!("`{u}` is not an http(s) URL"),
            )
            .with_hint("e.g. `http://127.0.0.1:8000`"),
        );
    }
}

/// Names that hold secrets: their values are redacted everywhere.
pub fn is_secret_name(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "AUTH"]
        .iter()
        .any(|w| up.contains(w))
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// One verify rule at `p` (`server.verify[i]`, or a variant's `variants[j].server.verify[i]`).
fn check_rule(
    s: &crate::types::ExperimentSpec,
    p: KeyPath,
    rule: &crate::types::VerifyRule,
    out: &mut Vec<Diagnostic>,
) {
    let checks = usize::from(rule.log_contains.is_some())
        + usize::from(rule.json.is_some())
        + usize::from(rule.server_arg.is_some())
        + usize::from(rule.kernel.is_some());
    if let Some(a) = &rule.server_arg {
        if checks == 1 && a.name.trim().is_empty() {
            out.push(
                Diagnostic::error(
                    p.key("server_arg").key("name"),
                    "`server_arg.name` is empty",
                )
                .with_hint(
                    "write the argument's name as the engine reports it, e.g. `moe_runner_backend`",
                ),
            );
        }
        super::engine::check_server_arg(s, &p, &a.name, out);
    }
    match (&rule.log_contains, &rule.json) {
        _ if checks > 1 => {
            let n = ["two", "three", "four"][checks.min(4) - 2];
            out.push(
                Diagnostic::error(p, format!("a verify rule has one check, this one has {n}"))
                    .with_hint(format!("split it into {n} rules")),
            );
        }
        (None, None) if rule.server_arg.is_none() && rule.kernel.is_none() => out.push(
            Diagnostic::error(p, "a verify rule needs one check").with_hint(
                "write `log_contains: TEXT`, `json: {path, pointer, equals}` or \
                 `server_arg: {name, equals}` or `kernel: {matches: REGEX}`",
            ),
        ),
        (Some(t), None) if t.trim().is_empty() => out.push(Diagnostic::error(
            p.key("log_contains"),
            "`log_contains` is empty: it would match any log",
        )),
        (None, Some(j)) => {
            if !j.path.starts_with('/') {
                out.push(Diagnostic::error(
                    p.key("json").key("path"),
                    format!("the endpoint path `{}` must start with `/`", j.path),
                ));
            }
            if !j.pointer.is_empty() && !j.pointer.starts_with('/') {
                out.push(
                    Diagnostic::error(
                        p.key("json").key("pointer"),
                        format!("`{}` is not a JSON pointer", j.pointer),
                    )
                    .with_hint(format!(
                        "JSON pointers start with `/`, e.g. `/{}`",
                        j.pointer.replace('.', "/")
                    )),
                );
            }
        }
        _ => {}
    }
}
