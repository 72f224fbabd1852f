//! Which engine a target runs, and its version: named by `target.engine`, or told apart from
//! what it answers (servebench_spec::engine::detect says what each answer means).

use std::time::Duration;

use serde_json::Value;
use servebench_result::checks::{EngineRecord, EngineSource};
use servebench_spec::Engine;
use servebench_spec::engine::{GENERIC, Profile, detect, profile};

use super::Endpoint;

/// Timeout of each read.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The engine of a target, with what told it.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Its profile.
    pub profile: &'static Profile,
    /// What the result records.
    pub record: EngineRecord,
    /// The `/v1/models` answer, when there was one (the model check reads it).
    pub models: Option<Value>,
}

/// Nothing answered at the target: why, e.g. "GET http://127.0.0.1:9/v1/models: connection
/// refused (nothing listens there)".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unreachable(pub String);

/// One GET of `path`: the status and the JSON body (when it is JSON), or why there was no
/// answer.
pub(crate) async fn get(
    client: &reqwest::Client,
    ep: &Endpoint,
    path: &str,
) -> Result<(u16, Option<Value>), String> {
    let url = crate::server::probe_url(&ep.base_url, path);
    let mut req = client.get(&url).timeout(TIMEOUT);
    if let Some(k) = &ep.api_key {
        req = req.bearer_auth(k);
    }
    for (k, v) in &ep.headers {
        req = req.header(k, v);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| format!("GET {url}: {}", crate::net::describe(&e)))?;
    let status = resp.status().as_u16();
    let body = resp.bytes().await.unwrap_or_default();
    Ok((status, serde_json::from_slice(&body).ok()))
}

/// A 2xx JSON answer of `path`, else `None`.
pub(crate) async fn get_ok(client: &reqwest::Client, ep: &Endpoint, path: &str) -> Option<Value> {
    match get(client, ep, path).await {
        Ok((s, Some(v))) if (200..300).contains(&s) => Some(v),
        _ => None,
    }
}

/// The engine of the target at `ep`: `named` unless it is `auto`, else detected. Fails only
/// when nothing answers `GET /v1/models` at all (connection refused, no such host, timed out).
pub async fn resolve(ep: &Endpoint, named: Engine) -> Result<Resolved, Unreachable> {
    let client = crate::server::probe_client(ep.ca_file.as_deref()).map_err(Unreachable)?;
    let models = match get(&client, ep, "/v1/models").await {
        Ok((s, doc)) => doc.filter(|_| (200..300).contains(&s)),
        Err(e) => return Err(Unreachable(e)),
    };
    let (profile, source, evidence) = match profile(named) {
        Some(p) => (p, EngineSource::Spec, "target.engine".to_owned()),
        None => {
            let mut found = models.as_ref().and_then(detect::from_models);
            for path in detect::PROBES {
                if found.is_some() {
                    break;
                }
                if let Some(doc) = get_ok(&client, ep, path).await {
                    found = detect::from_probe(path, &doc);
                }
            }
            match found.and_then(|d| profile(d.engine).map(|p| (p, d.evidence))) {
                Some((p, evidence)) => (p, EngineSource::Detected, evidence),
                None => (
                    &GENERIC,
                    EngineSource::Detected,
                    "nothing engine-specific answered (/v1/models' owned_by, /info, /props, \
                     /server_info): a plain OpenAI-compatible server"
                        .to_owned(),
                ),
            }
        }
    };
    let mut version = None;
    for src in profile.version {
        if let Some(doc) = get_ok(&client, ep, src.path).await
            && let Some(v) = detect::version(profile, src.path, &doc)
        {
            version = Some(v);
            break;
        }
    }
    Ok(Resolved {
        profile,
        record: EngineRecord {
            engine: profile.engine,
            version,
            source,
            evidence,
        },
        models,
    })
}
