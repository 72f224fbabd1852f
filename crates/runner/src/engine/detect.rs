//! Which engine a target runs, and its version: named by `target.engine`, or told apart from
//! what it answers (servebench_engines::detect says what each answer means).

use std::time::Duration;

use serde_json::Value;
use servebench_engines::Engine;
use servebench_engines::{GENERIC, Profile, detect, profile};
use servebench_result::checks::{EngineRecord, EngineSource};

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
    /// The `/v1/models` answer, when it was a model list (the model check reads it).
    pub models: Option<Value>,
    /// What `/v1/models` answered instead, in words, when it was not a model list (an HTML
    /// page, a 404, a 500, bytes that are not JSON): the messages that need a model say it.
    pub models_seen: Option<String>,
}

impl Resolved {
    /// The `/v1/models` model list, else what `/v1/models` answered instead, in words.
    pub fn model_list(&self) -> Result<&Value, &str> {
        self.models.as_ref().ok_or_else(|| {
            self.models_seen
                .as_deref()
                .unwrap_or("GET /v1/models gave no model list")
        })
    }
}

/// Nothing answered at the target: why, e.g. "GET http://127.0.0.1:9/v1/models: connection
/// refused (nothing listens there)".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unreachable(pub String);

/// What one GET answered: its status, its JSON body (when it is JSON), and the answer in
/// words ([`crate::net::answer_words`]) for a message that refuses it.
pub(crate) struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The body, when it is JSON.
    pub json: Option<Value>,
    /// "GET URL answered HTTP 404, text/html, 36 bytes starting `<html>…`".
    pub words: String,
}

/// One GET of `path`: what it answered, or why there was no answer.
pub(crate) async fn get(
    client: &reqwest::Client,
    ep: &Endpoint,
    path: &str,
) -> Result<Answer, String> {
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
    let kind = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = resp.bytes().await.unwrap_or_default();
    Ok(Answer {
        status,
        json: serde_json::from_slice(&body).ok(),
        words: format!(
            "GET {url} answered {}",
            crate::net::answer_words(status, kind.as_deref(), &body)
        ),
    })
}

/// A 2xx JSON answer of `path`, else `None`.
pub(crate) async fn get_ok(client: &reqwest::Client, ep: &Endpoint, path: &str) -> Option<Value> {
    match get(client, ep, path).await {
        Ok(a) if (200..300).contains(&a.status) => a.json,
        _ => None,
    }
}

/// The `/v1/models` answer: its JSON when it is a 2xx model list (an object with a `data`
/// array), else what it was in words, with what to write instead of a URL ending in `/v1`.
fn model_list(a: Answer, base_url: &str) -> Result<Value, String> {
    let listed = (200..300).contains(&a.status)
        && a.json
            .as_ref()
            .is_some_and(|d| d.get("data").is_some_and(Value::is_array));
    match a.json {
        Some(doc) if listed => Ok(doc),
        _ => Err(match crate::net::v1_suffix_hint(base_url) {
            Some(hint) => format!("{}; {hint}", a.words),
            None => format!("{}: not an OpenAI model list", a.words),
        }),
    }
}

/// The engine of the target at `ep`: `named` unless it is `auto`, else detected. Fails only
/// when nothing answers `GET /v1/models` at all (connection refused, no such host, timed out).
pub async fn resolve(ep: &Endpoint, named: Engine) -> Result<Resolved, Unreachable> {
    let client = crate::server::probe_client(ep.ca_file.as_deref()).map_err(Unreachable)?;
    let (models, models_seen) = match get(&client, ep, "/v1/models").await {
        Ok(a) => match model_list(a, &ep.base_url) {
            Ok(doc) => (Some(doc), None),
            Err(seen) => (None, Some(seen)),
        },
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
        models_seen,
    })
}
