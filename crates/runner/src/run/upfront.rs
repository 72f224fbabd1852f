//! What is checked before anything runs or is written: every `${env.NAME}` the spec reads is
//! set (not found at the first server start, after minutes of loading), and for a spec that
//! launches no server, every endpoint answers and serves the spec's model (a run that reaches
//! no server writes no result file).

use std::collections::BTreeSet;

use servebench_result::checks::CheckOutcome;
use servebench_spec::SpecFile;
use servebench_spec::substitute::{Context, resolve};

use super::RunError;
use crate::engine::{self, Endpoint};

/// The variables the spec reads from the environment that are not set, with where.
pub fn unset_env(spec: &SpecFile) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = servebench_spec::env_references(spec)
        .into_iter()
        .filter(|(_, name)| servebench_spec::substitute::env_value(name).is_none())
        .collect();
    if let Some(name) = &spec.spec.target.api_key_env
        && std::env::var_os(name).is_none()
    {
        out.push(("spec.target.api_key_env".into(), name.clone()));
    }
    out
}

/// Refuses a spec that reads an unset environment variable.
pub(super) fn check_env(spec: &SpecFile) -> Result<(), RunError> {
    let unset = unset_env(spec);
    if unset.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = unset
        .iter()
        .map(|(path, name)| format!("`{name}` (read by {path})"))
        .collect();
    Err(RunError::Setup(format!(
        "the spec reads environment variables that are not set: {}; export them and run \
         again (nothing was started or written)",
        list.join(", ")
    )))
}

/// For a spec that launches no server: each variant's endpoint answers `GET /v1/models` and
/// lists the spec's model.
pub(super) async fn check_endpoints(
    spec: &SpecFile,
    ca_file: Option<std::path::PathBuf>,
) -> Result<(), RunError> {
    let s = &spec.spec;
    if s.server.is_some() {
        return Ok(());
    }
    let api_key = s
        .target
        .api_key_env
        .as_ref()
        .and_then(|n| std::env::var(n).ok());
    let env = Context {
        env: true,
        ..Context::default()
    };
    let mut headers = Vec::new();
    for (k, v) in &s.target.headers {
        if let Ok(v) = resolve(v, &env) {
            headers.push((k.clone(), v));
        }
    }
    let mut seen = BTreeSet::new();
    for v in &s.variants {
        let Some(raw) = v.base_url.as_ref().or(s.target.base_url.as_ref()) else {
            continue;
        };
        let ctx = Context {
            vars: Some(&v.vars),
            env: true,
            ..Context::default()
        };
        // A URL that cannot be resolved is refused when its block opens, with the reason.
        let Ok(url) = resolve(raw, &ctx) else {
            continue;
        };
        let url = url.trim_end_matches('/').to_owned();
        if !seen.insert(url.clone()) {
            continue;
        }
        let ep = Endpoint {
            base_url: url.clone(),
            ca_file: ca_file.clone(),
            api_key: api_key.clone(),
            headers: headers.clone(),
        };
        let resolved = engine::resolve(&ep, s.target.engine).await.map_err(|e| {
            RunError::Setup(format!(
                "nothing answers at {url} ({e}): start the server, or point the spec at it \
                 (`--set target.base_url=URL`); no result file was written"
            ))
        })?;
        let model = if s.target.model == servebench_spec::AUTO_MODEL {
            engine::auto_model(resolved.model_list())
                .map_err(|e| RunError::Setup(format!("{url}: {e}; no result file was written")))?
        } else {
            s.target.model.clone()
        };
        let c = engine::model_check(resolved.model_list(), &model, resolved.profile);
        if c.outcome == CheckOutcome::Fails {
            let set = c
                .set
                .as_deref()
                .map_or_else(String::new, |s| format!("; set {s}"));
            return Err(RunError::Setup(format!(
                "{url}: {}{set}; no result file was written",
                c.detail
            )));
        }
    }
    Ok(())
}
