//! `server_arg` rules: a server argument read back where the engine's profile says it is
//! reported (servebench_engines, `server_args`).

use std::time::Duration;

use serde_json::Value;
use servebench_engines::{ArgSource, args};
use servebench_spec::ServerArgCheck;
use tokio::time::Instant;

use super::super::http::{self, GetJsonError};
use super::super::log::{ServerLog, is_timeline_line};
use super::{JSON_TIMEOUT, Reach, RuleProblem, json_matches};

/// A server argument read where the profile says, in order: the first place that reports it
/// decides. Log sources are re-read until `deadline` (servers flush their logs late).
pub(super) async fn check_server_arg(
    client: &Result<reqwest::Client, String>,
    log: &ServerLog,
    at: Reach<'_>,
    check: &ServerArgCheck,
    deadline: Instant,
) -> Result<String, RuleProblem> {
    let name = &check.name;
    let decide = |found: &Value, source: String| {
        if json_matches(&check.equals, found) {
            Ok(format!("{name} = {found} ({source})"))
        } else {
            Err(RuleProblem::ServerArgMismatch {
                name: name.clone(),
                source,
                expected: check.equals.clone(),
                found: found.clone(),
            })
        }
    };
    let mut tried = Vec::new();
    for src in at.profile.server_args {
        let (ArgSource::Json { path } | ArgSource::JsonKeys { path, .. }) = src else {
            continue;
        };
        let url = http::url(at.base, path);
        let client = match client {
            Ok(c) => c,
            Err(e) => {
                tried.push(format!("GET {url}: {e}"));
                continue;
            }
        };
        match http::get_json(client, &url, JSON_TIMEOUT).await {
            Ok(doc) => match args::from_json(&doc, name) {
                Some(v) => return decide(v, format!("GET {url}")),
                None => tried.push(format!("GET {url}: no `{name}` in the answer")),
            },
            Err(GetJsonError::Request(e)) => tried.push(format!("GET {url}: no answer: {e}")),
            Err(GetJsonError::Status(s, _)) => tried.push(format!("GET {url}: HTTP {s}")),
            Err(GetJsonError::NotJson(e)) => tried.push(format!("GET {url}: not JSON: {e}")),
        }
    }
    let log_sources: Vec<(&str, bool)> = at
        .profile
        .server_args
        .iter()
        .filter_map(|s| match s {
            ArgSource::LogDict { marker } => Some((*marker, true)),
            ArgSource::LogRepr { marker } => Some((*marker, false)),
            ArgSource::Json { .. } | ArgSource::JsonKeys { .. } => None,
        })
        .collect();
    if !log_sources.is_empty() {
        loop {
            match log.read() {
                Ok(content) => {
                    let server: String = content
                        .lines()
                        .filter(|l| !is_timeline_line(l))
                        .collect::<Vec<_>>()
                        .join("\n");
                    for (marker, dict) in &log_sources {
                        if let Some((v, line)) = args::from_log(&server, marker, *dict, name) {
                            return decide(&v, format!("the log line `{line}`"));
                        }
                    }
                }
                Err(e) => {
                    tried.push(format!("the server log {}: {e}", log.path().display()));
                    break;
                }
            }
            if Instant::now() >= deadline {
                let markers: Vec<&str> = log_sources.iter().map(|(m, _)| *m).collect();
                tried.push(format!(
                    "no `{}` line with `{name}` in the server log {}",
                    markers.join("` or `"),
                    log.path().display()
                ));
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Err(RuleProblem::ServerArgNotFound {
        name: name.clone(),
        engine: at.profile.name,
        tried,
    })
}
