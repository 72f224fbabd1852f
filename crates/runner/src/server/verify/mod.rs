//! Verify rules: proof that the variant is really in effect, checked once the server is ready
//! (the log says `moe_runner_backend='flashinfer_cutedsl'`, `/get_server_info` agrees…).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use servebench_engines::Profile;
use servebench_result::{VerifyRecord, describe_rule};
use servebench_spec::{JsonCheck, VerifyRule};
use tokio::time::Instant;

use super::RunningServer;
use super::http::{self, GetJsonError};
use super::log::{ServerLog, is_timeline_line};

mod server_arg;

use server_arg::check_server_arg;

/// How long a `log_contains` rule keeps re-reading the log (servers flush their logs late).
pub const LOG_GRACE: Duration = Duration::from_secs(2);

/// Timeout of a `json` rule's request.
const JSON_TIMEOUT: Duration = Duration::from_secs(10);

/// A passed rule and what proved it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VerifyOutcome {
    /// The rule.
    pub rule: VerifyRule,
    /// The evidence: the log line that contains the text, or the JSON value found.
    pub evidence: String,
}

/// A failed rule.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleFailure {
    /// Position of the rule in `server.verify` (from 1).
    pub number: usize,
    /// The problem.
    pub problem: RuleProblem,
}

/// What a failed rule expected and found.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleProblem {
    /// The log does not contain the text.
    LogTextMissing {
        /// The text.
        text: String,
        /// The log.
        log_path: PathBuf,
        /// How long the log was re-read.
        waited: Duration,
    },
    /// The log could not be read.
    LogUnreadable {
        /// The log.
        log_path: PathBuf,
        /// Why.
        error: String,
    },
    /// The endpoint gave no JSON (no answer, a non-2xx status, or not JSON).
    Endpoint {
        /// The URL.
        url: String,
        /// What happened.
        error: String,
    },
    /// The pointer is not present in the document.
    PointerMissing {
        /// The URL.
        url: String,
        /// The pointer.
        pointer: String,
    },
    /// The value differs.
    Mismatch {
        /// The URL.
        url: String,
        /// The pointer.
        pointer: String,
        /// What the rule expects.
        expected: Value,
        /// What the server said.
        found: Value,
    },
    /// The server argument is reported nowhere the engine's profile says it would be.
    ServerArgNotFound {
        /// The argument.
        name: String,
        /// The engine whose profile was used.
        engine: &'static str,
        /// What each place said, e.g. "GET …/server_info: HTTP 404".
        tried: Vec<String>,
    },
    /// The server argument has another value.
    ServerArgMismatch {
        /// The argument.
        name: String,
        /// Where it was read, e.g. "GET …/server_info" or the log line.
        source: String,
        /// What the rule expects.
        expected: Value,
        /// What the server reported.
        found: Value,
    },
    /// The rule sets neither `log_contains` nor `json` nor `server_arg`.
    Empty,
}

impl fmt::Display for RuleFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.number;
        match &self.problem {
            RuleProblem::LogTextMissing {
                text,
                log_path,
                waited,
            } => write!(
                f,
                "rule {n} (log_contains {text:?}): not found in the server log {} (re-read for {:.1} s)",
                log_path.display(),
                waited.as_secs_f64()
            ),
            RuleProblem::LogUnreadable { log_path, error } => write!(
                f,
                "rule {n} (log_contains): cannot read the server log {}: {error}",
                log_path.display()
            ),
            RuleProblem::Endpoint { url, error } => {
                write!(f, "rule {n} (json, GET {url}): {error}")
            }
            RuleProblem::PointerMissing { url, pointer } => write!(
                f,
                "rule {n} (json, GET {url}): pointer {pointer} not present in the response"
            ),
            RuleProblem::Mismatch {
                url,
                pointer,
                expected,
                found,
            } => write!(
                f,
                "rule {n} (json, GET {url}): {pointer} is {found}, expected {expected}"
            ),
            RuleProblem::ServerArgNotFound {
                name,
                engine,
                tried,
            } => {
                write!(
                    f,
                    "rule {n} (server_arg {name}): {engine} reports no `{name}`"
                )?;
                if tried.is_empty() {
                    write!(
                        f,
                        " ({engine} does not report its server arguments: prove the variant \
                         with `log_contains` or `json`)"
                    )
                } else {
                    write!(f, " ({})", tried.join("; "))
                }
            }
            RuleProblem::ServerArgMismatch {
                name,
                source,
                expected,
                found,
            } => write!(
                f,
                "rule {n} (server_arg {name}): {name} is {found}, expected {expected} ({source})"
            ),
            RuleProblem::Empty => write!(
                f,
                "rule {n} sets neither `log_contains` nor `json` nor `server_arg`"
            ),
        }
    }
}

/// Some rules failed: the variant cannot be shown to be in effect, so it must not be measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the server is not verified to run the variant: {} of {} verify rules failed:\n{}",
    .failures.len(), .failures.len() + .passed.len(),
    .failures.iter().map(|f| format!("  - {f}")).collect::<Vec<_>>().join("\n")
)]
pub struct VerifyError {
    /// The failed rules.
    pub failures: Vec<RuleFailure>,
    /// The rules that passed.
    pub passed: Vec<VerifyOutcome>,
}

/// Checks every rule against `server` (all of them, so one message lists every failure).
/// `log_contains` rules re-read the log for up to [`LOG_GRACE`] in all.
/// `server_arg` rules are read where `profile` says the engine reports its arguments.
pub async fn verify(
    server: &RunningServer,
    rules: &[VerifyRule],
    profile: &Profile,
) -> Result<Vec<VerifyOutcome>, VerifyError> {
    let at = Reach {
        base: &server.base_url,
        ca_file: server.ca_file.as_deref(),
        profile,
    };
    if let Some(step) = &server.slurm {
        return step.verify(at, rules).await;
    }
    verify_rules(&server.log, at, rules, LOG_GRACE).await
}

/// Checks `rules` against a server that servebench did not start (`servebench probe`), at
/// `base_url`, with `log` its log file where one is given: `log_contains` rules fail without
/// it, and a `server_arg` rule reads only the endpoints then.
pub async fn verify_running(
    base_url: &str,
    ca_file: Option<&std::path::Path>,
    log: Option<&std::path::Path>,
    rules: &[VerifyRule],
    profile: &Profile,
) -> Result<Vec<VerifyOutcome>, VerifyError> {
    let at = Reach {
        base: base_url,
        ca_file,
        profile,
    };
    let missing = std::path::PathBuf::from("(no server log: give --log FILE)");
    let log = ServerLog::whole(log.unwrap_or(&missing));
    verify_rules(&log, at, rules, Duration::ZERO).await
}

/// Where `json` rules reach the server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reach<'a> {
    /// e.g. `http://127.0.0.1:8000`.
    pub(crate) base: &'a str,
    /// A CA to trust besides the system's roots.
    pub(crate) ca_file: Option<&'a std::path::Path>,
    /// The engine's profile: where `server_arg` rules are read.
    pub(crate) profile: &'a Profile,
}

pub(crate) async fn verify_rules(
    log: &ServerLog,
    at: Reach<'_>,
    rules: &[VerifyRule],
    grace: Duration,
) -> Result<Vec<VerifyOutcome>, VerifyError> {
    let client = http::client(at.ca_file);
    let deadline = Instant::now() + grace;
    let mut passed = Vec::new();
    let mut failures = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        if rule.kernel.is_some() {
            // Judged on the kernel evidence, after the warm-up (run/start/kernels.rs).
            continue;
        }
        let number = i + 1;
        let mut evidence = Vec::new();
        let mut problem = None;
        if rule.log_contains.is_none() && rule.json.is_none() && rule.server_arg.is_none() {
            problem = Some(RuleProblem::Empty);
        }
        if let (Some(check), None) = (&rule.server_arg, &problem) {
            match check_server_arg(&client, log, at, check, deadline).await {
                Ok(v) => evidence.push(v),
                Err(p) => problem = Some(p),
            }
        }
        if let Some(text) = &rule.log_contains {
            match check_log(log, text, deadline, grace).await {
                Ok(line) => evidence.push(line),
                Err(p) => problem = Some(p),
            }
        }
        if let (Some(check), None) = (&rule.json, &problem) {
            let res = match &client {
                Ok(c) => check_json(c, at.base, check).await,
                Err(e) => Err(RuleProblem::Endpoint {
                    url: http::url(at.base, &check.path),
                    error: e.clone(),
                }),
            };
            match res {
                Ok(v) => evidence.push(v),
                Err(p) => problem = Some(p),
            }
        }
        match problem {
            None => passed.push(VerifyOutcome {
                rule: rule.clone(),
                evidence: evidence.join("; "),
            }),
            Some(problem) => failures.push(RuleFailure { number, problem }),
        }
    }
    if failures.is_empty() {
        Ok(passed)
    } else {
        Err(VerifyError { failures, passed })
    }
}

/// The first log line holding `text`, re-reading until `deadline`.
async fn check_log(
    log: &ServerLog,
    text: &str,
    deadline: Instant,
    grace: Duration,
) -> Result<String, RuleProblem> {
    loop {
        match log.read() {
            Ok(content) => {
                // Only the server's own output counts: servebench's timeline lines hold the
                // argv, which would prove nothing about what the server did with it.
                let server_lines: Vec<&str> =
                    content.lines().filter(|l| !is_timeline_line(l)).collect();
                if let Some(line) = server_lines.iter().find(|l| l.contains(text)) {
                    return Ok(line.trim().to_owned());
                }
                // A text spanning lines still counts.
                if server_lines.join("\n").contains(text) {
                    return Ok(text.to_owned());
                }
            }
            Err(e) => {
                return Err(RuleProblem::LogUnreadable {
                    log_path: log.path().to_owned(),
                    error: e.to_string(),
                });
            }
        }
        if Instant::now() >= deadline {
            return Err(RuleProblem::LogTextMissing {
                text: text.to_owned(),
                log_path: log.path().to_owned(),
                waited: grace,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn check_json(
    client: &reqwest::Client,
    base: &str,
    check: &JsonCheck,
) -> Result<String, RuleProblem> {
    let url = http::url(base, &check.path);
    let doc = http::get_json(client, &url, JSON_TIMEOUT)
        .await
        .map_err(|e| RuleProblem::Endpoint {
            url: url.clone(),
            error: match e {
                GetJsonError::Request(e) => format!("no answer: {e}"),
                GetJsonError::Status(s, body) => format!("HTTP {s}: {body}"),
                GetJsonError::NotJson(e) => format!("the response is not JSON: {e}"),
            },
        })?;
    let Some(found) = doc.pointer(&check.pointer) else {
        return Err(RuleProblem::PointerMissing {
            url,
            pointer: check.pointer.clone(),
        });
    };
    if json_matches(&check.equals, found) {
        Ok(format!("{} = {found}", check.pointer))
    } else {
        Err(RuleProblem::Mismatch {
            url,
            pointer: check.pointer.clone(),
            expected: check.equals.clone(),
            found: found.clone(),
        })
    }
}

/// Equal as JSON (numbers by value: `1` equals `1.0`), or a string equal to the text of a
/// number or boolean on the other side (`"8"` matches `8`, `"true"` matches `true`).
pub(crate) fn json_matches(expected: &Value, found: &Value) -> bool {
    match (expected, found) {
        (Value::Number(a), Value::Number(b)) => a == b || a.as_f64() == b.as_f64(),
        (Value::String(s), Value::Number(n)) | (Value::Number(n), Value::String(s)) => {
            let s = s.trim();
            s == n.to_string() || s.parse::<f64>().ok() == n.as_f64()
        }
        (Value::String(s), Value::Bool(b)) | (Value::Bool(b), Value::String(s)) => {
            s.trim() == b.to_string()
        }
        _ => expected == found,
    }
}

impl From<&VerifyOutcome> for VerifyRecord {
    fn from(o: &VerifyOutcome) -> Self {
        VerifyRecord {
            rule: describe_rule(&o.rule),
            passed: true,
            detail: o.evidence.clone(),
        }
    }
}

impl From<&RuleFailure> for VerifyRecord {
    fn from(f: &RuleFailure) -> Self {
        VerifyRecord {
            rule: format!("rule {}", f.number),
            passed: false,
            detail: f.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::json_matches;
    use serde_json::json;

    #[test]
    fn json_comparison() {
        assert!(json_matches(&json!("flashinfer"), &json!("flashinfer")));
        assert!(!json_matches(&json!("flashinfer"), &json!("triton")));
        assert!(json_matches(&json!("8"), &json!(8)));
        assert!(json_matches(&json!(8), &json!("8")));
        assert!(json_matches(&json!(1), &json!(1.0)));
        assert!(json_matches(&json!("0.5"), &json!(0.5)));
        assert!(json_matches(&json!("true"), &json!(true)));
        assert!(!json_matches(&json!("false"), &json!(true)));
        assert!(!json_matches(&json!("8"), &json!("08")));
        assert!(json_matches(&json!({"a": [1, 2]}), &json!({"a": [1, 2]})));
        assert!(!json_matches(&json!(null), &json!("null")));
    }
}
