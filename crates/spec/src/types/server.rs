//! `spec.server`: launching the server, readiness, verification and stopping.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::duration::HumanDuration;
use crate::types::{Launcher, WorkerRanks};

/// How to launch and stop the server under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Server {
    /// The program and its first arguments, e.g. `[python3, -m, sglang.launch_server]`.
    /// `${servebench}` is the running servebench binary.
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Arguments shared by every variant; each variant's `server.args` are appended.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables shared by every variant (a variant may override them).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory of the server process (host-specific: not part of the spec hash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// When the server counts as ready.
    #[serde(default)]
    pub readiness: Readiness,
    /// Rules that prove the variant is in effect; a variant whose rules fail is not measured.
    #[serde(default)]
    pub verify: Vec<VerifyRule>,
    /// How to stop the server.
    #[serde(default)]
    pub stop: StopPolicy,
    /// Where the server runs: leave out to start it on this host; `{slurm: {nodes: 2}}` to
    /// start it across the nodes of a Slurm allocation (docs/slurm.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher: Option<Launcher>,
    /// What ranks other than the head run differently, for servers that span nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<WorkerRanks>,
}

/// Readiness probe: poll until the response has the expected status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Readiness {
    /// The HTTP request that is polled.
    #[serde(default)]
    pub http: HttpProbe,
    /// Time between polls. Each poll waits for its answer up to the interval, at least 5 s
    /// and at most 10 s.
    #[serde(default = "default_ready_interval")]
    pub interval: HumanDuration,
    /// Give up (and show the server log's tail) after this long.
    #[serde(default = "default_ready_timeout")]
    pub timeout: HumanDuration,
}

fn default_ready_interval() -> HumanDuration {
    HumanDuration::from_millis(500)
}
fn default_ready_timeout() -> HumanDuration {
    HumanDuration::from_secs(600)
}

impl Default for Readiness {
    fn default() -> Self {
        Self {
            http: HttpProbe::default(),
            interval: default_ready_interval(),
            timeout: default_ready_timeout(),
        }
    }
}

/// One HTTP request used as a probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpProbe {
    /// HTTP method.
    #[serde(default)]
    pub method: HttpMethod,
    /// Path on the server, e.g. `/v1/models` or `/health`.
    #[serde(default = "default_probe_path")]
    pub path: String,
    /// The status that means ready.
    #[serde(default = "default_expect_status")]
    #[schemars(range(min = 100, max = 599))]
    pub expect_status: u16,
    /// Optional JSON body (sent with `POST`), so a real generation can be the probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<serde_json::Value>,
}

fn default_probe_path() -> String {
    "/v1/models".to_owned()
}
fn default_expect_status() -> u16 {
    200
}

impl Default for HttpProbe {
    fn default() -> Self {
        Self {
            method: HttpMethod::default(),
            path: default_probe_path(),
            expect_status: default_expect_status(),
            body: None,
        }
    }
}

/// HTTP method of a probe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum HttpMethod {
    /// `GET`.
    #[default]
    #[serde(rename = "GET")]
    Get,
    /// `POST`.
    #[serde(rename = "POST")]
    Post,
    /// `HEAD`.
    #[serde(rename = "HEAD")]
    Head,
}

impl HttpMethod {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Head => "HEAD",
        }
    }
}

/// A rule that proves the variant is in effect. Exactly one of its checks is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyRule {
    /// The server log (stdout and stderr) contains this text once the server is ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_contains: Option<String>,
    /// A field of a JSON endpoint has an expected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<JsonCheck>,
    /// A server argument, read back where the engine's profile says it reports it (SGLang:
    /// `/server_info`, then `/get_server_info` of older versions, then its start-up log;
    /// vLLM: the head's `non-default args:` log line; TGI: `/info`), has an expected value.
    /// Checked on the head only, like `json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_arg: Option<ServerArgCheck>,
    /// The kernels the server launched under probe load (`evidence.kernels`, docs/kernels.md):
    /// `{matches: REGEX, min_share: 0.05}` or `{absent: REGEX}`, on every rank's trace.
    /// Judged after the warm-up, before the first trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<crate::types::KernelCheck>,
}

/// A server argument and the value it must have, e.g. `{name: moe_runner_backend, equals:
/// flashinfer_cutedsl}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerArgCheck {
    /// The argument's name as the engine reports it (SGLang and vLLM: the Python field name,
    /// `moe_runner_backend`, not the flag `--moe-runner-backend`).
    pub name: String,
    /// The expected value (compared as JSON; a string also matches the text of a number or
    /// boolean).
    pub equals: serde_json::Value,
}

/// Read `GET path`, take the value at `pointer`, compare it with `equals`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JsonCheck {
    /// Endpoint path, e.g. `/props` (llama.cpp) or `/get_server_info` (SGLang).
    pub path: String,
    /// JSON pointer (RFC 6901) into the response, e.g. `/default_generation_settings/n_ctx`.
    pub pointer: String,
    /// The expected value (compared as JSON; a string also matches the text of a number or
    /// boolean).
    pub equals: serde_json::Value,
}

/// How the server is stopped: a signal to its whole process group, then `SIGKILL`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopPolicy {
    /// The first signal sent to the process group.
    #[serde(default)]
    pub signal: StopSignal,
    /// How long to wait after it before `SIGKILL`.
    #[serde(default = "default_grace")]
    pub grace: HumanDuration,
}

fn default_grace() -> HumanDuration {
    HumanDuration::from_secs(30)
}

impl Default for StopPolicy {
    fn default() -> Self {
        Self {
            signal: StopSignal::default(),
            grace: default_grace(),
        }
    }
}

/// Signals a server may be stopped with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[allow(clippy::upper_case_acronyms)]
pub enum StopSignal {
    /// Terminate (the default).
    #[default]
    SIGTERM,
    /// Interrupt, as Ctrl-C.
    SIGINT,
    /// Quit.
    SIGQUIT,
    /// Hang-up.
    SIGHUP,
    /// Kill at once (no grace).
    SIGKILL,
}
