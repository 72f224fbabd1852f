//! Types of the result file. Everything a reader needs to trust, compare and re-run the
//! measurement is here: the resolved spec and its hash, versions, host, accelerators,
//! provenance, each server start, and each trial's summary and histograms.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use servebench_spec::plan::Plan;
use servebench_spec::{Rate, SpecFile, TokenCount};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::metrics::TrialSummary;
use crate::record::{ReceiveStamps, RequestRecord};
use crate::server::{ServerInfo, ServerRecord, StopReport};

pub mod cluster;
mod host_probe;
mod provenance;

pub use host_probe::{HostLoad, HostProbe};
pub use provenance::{Accelerator, CommandOutput, FileHash, HostInfo, RepoInfo, ToolInfo};

/// Where a result came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Measured by `servebench run`.
    #[default]
    Measured,
    /// Converted from another tool's output (`servebench import`); provenance may be absent.
    Imported,
}

/// State of the run as last written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Trials are being measured (or the runner was killed: see `updated_at`).
    Running,
    /// Every planned trial has a record.
    Complete,
    /// Stopped by Ctrl-C or a signal; finished trials are kept; `run --resume` continues.
    Interrupted,
    /// Stopped by an error that is not a trial's own (see `error`).
    Failed,
}

/// One run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    /// Result format version.
    pub schema_version: u32,
    /// Measured or imported.
    #[serde(default)]
    pub origin: Origin,
    /// Unique id: UTC start time and a random suffix, e.g. `20261129T221500Z-3fa2`.
    pub run_id: String,
    /// State as last written.
    pub status: RunStatus,
    /// Why the run stopped early, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// UTC RFC 3339.
    pub created_at: String,
    /// UTC RFC 3339 of the last write.
    pub updated_at: String,
    /// Each resume of this run (`run --resume`): when the interrupted run last wrote and when
    /// the resume began. The time between is nobody's: the wall-time split leaves it out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumes: Vec<Resume>,
    /// The spec's `metadata.name`.
    pub spec_name: String,
    /// Canonical spec hash (`sha256:…`).
    pub spec_hash: String,
    /// The resolved spec: defaults filled in, before `${port}` / `${env.*}` substitution.
    pub spec: SpecFile,
    /// Path of the spec file as given to `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_path: Option<String>,
    /// The `--set KEY=VALUE` overrides given to `run`, in order: `spec` and `spec_hash` are
    /// the spec file's with them applied, and `run --resume` applies them again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<String>,
    /// The servebench that measured.
    pub tool: ToolInfo,
    /// The git state of the repository holding the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<RepoInfo>,
    /// The machine that ran the load generator (and launched the servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostInfo>,
    /// The host probe run when the run began, before any server start (absent in results
    /// from before the probe existed, and in imported ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_probe: Option<HostProbe>,
    /// GPUs from `nvidia-smi`, when present.
    #[serde(default)]
    pub accelerators: Vec<Accelerator>,
    /// Output of `provenance.commands` and hashes of `provenance.files`.
    #[serde(default)]
    pub provenance: ProvenanceRecord,
    /// The sweep points, indexed by `TrialResult::point`.
    pub points: Vec<PointInfo>,
    /// One entry per server start, in order.
    #[serde(default)]
    pub servers: Vec<ServerStart>,
    /// One entry per finished trial (ok or failed), in run order.
    #[serde(default)]
    pub trials: Vec<TrialResult>,
    /// File name of the per-request sidecar, beside this file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_file: Option<String>,
    /// Where an imported result came from and how its definitions differ (`origin:
    /// imported` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import: Option<ImportInfo>,
    /// Sequential runs (`trials.until_decided`): every look, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub looks: Vec<crate::LookRecord>,
    /// Capacity searches (`spec.search`): every server start's steps and every look. The
    /// trials are in `trials` as usual, each at its own point of `points`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::SearchLog>,
    /// Per block, before its trials: the engine the server runs (named or detected, with its
    /// version) and the guarantees checked (docs/engines.md). Absent in results from before
    /// the checks existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preflight: Vec<crate::checks::BlockChecks>,
    /// The model's figures the decode ceiling of each trial was computed from
    /// (`spec.model_facts`, a `config.json` read when the run began).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_facts: Option<servebench_spec::model_facts::ResolvedModelFacts>,
    /// The output-equivalence probe (`spec.equivalence`): per server start and probe
    /// concurrency, each prompt's greedy completion. Absent without the probe, and in
    /// results from before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub equivalence: Vec<crate::ProbeRecord>,
    /// Kernel evidence (`spec.evidence.kernels`, docs/kernels.md): per server start, what
    /// the engine's profiler saw under probe load, per rank. Absent without it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<crate::kernels::KernelEvidence>,
}

/// The source of an imported result (`servebench import`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImportInfo {
    /// The tool that measured: `sglang` (`bench_serving`) or `vllm` (`vllm bench serve`).
    pub tool: String,
    /// The file as given to `import`.
    pub source_file: String,
    /// sha256 of the source file (`sha256:…`).
    pub source_sha256: String,
    /// Line of a JSONL source (from 1), when the file holds several results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The tool's own record of when it ran, as it wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_at: Option<String>,
    /// Source fields read, and the catalogue metric each became.
    #[serde(default)]
    pub mapped: BTreeMap<String, String>,
    /// Source fields not read (no servebench counterpart).
    #[serde(default)]
    pub ignored: Vec<String>,
    /// Where the tool's definitions differ from servebench's, and what was unknown.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// Recorded provenance.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProvenanceRecord {
    /// One entry per `provenance.commands` item.
    #[serde(default)]
    pub commands: Vec<CommandOutput>,
    /// One entry per `provenance.files` item.
    #[serde(default)]
    pub files: Vec<FileHash>,
    /// The workload's own files (`workload.dataset.path`, `target.tokenizer_path`), hashed
    /// when the run began: `run --resume` refuses when one changed since, so that trials of
    /// two different files are never pooled in one result. Absent in results written before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<FileHash>,
    /// A server that spans nodes: the Slurm allocations, the batch script and each node's
    /// hardware (absent for a server on one host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<cluster::ClusterRecord>,
    /// The `${env.NAME}` values the spec read when the run began, by name; a secret's
    /// (`servebench_spec::is_secret_name`) as `***`. `rerun` uses this environment's
    /// value, names each that differs, and falls back to the recorded one when it is unset
    /// (docs/rerun.md). Absent in results written before, and when the spec read none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

/// A sweep point as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PointInfo {
    /// Index in the plan.
    pub index: usize,
    /// Short label, e.g. `c=64 rate=inf in=512 out=128`.
    pub label: String,
    /// Concurrency limit (`None`: unlimited).
    pub max_concurrency: Option<u32>,
    /// Requests per second (`None`: `inf`).
    pub request_rate: Option<f64>,
    /// Fixed input length, when fixed.
    pub input_tokens: Option<u32>,
    /// Fixed output length, when fixed.
    pub output_tokens: Option<u32>,
    /// Measured requests per trial at this point (absent in results from before per-point
    /// request counts: then `workload.requests`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u32>,
}

/// The result's description of each sweep point of `plan`.
pub fn point_info(plan: &Plan) -> Vec<PointInfo> {
    let fixed = |t: Option<TokenCount>| match t {
        Some(TokenCount::Fixed(n)) => Some(n),
        _ => None,
    };
    plan.points
        .iter()
        .enumerate()
        .map(|(index, p)| PointInfo {
            index,
            label: p.to_string(),
            max_concurrency: p.max_concurrency,
            request_rate: match p.request_rate {
                Rate::Inf => None,
                Rate::PerSecond(r) => Some(r),
            },
            input_tokens: fixed(p.input_tokens),
            output_tokens: fixed(p.output_tokens),
            requests: p.requests,
        })
        .collect()
}

/// Now, UTC, RFC 3339 (every time stamp of the result file is written so).
pub fn now_rfc3339() -> String {
    rfc3339(OffsetDateTime::now_utc())
}

/// A UTC instant as RFC 3339.
pub fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&Rfc3339)
        .unwrap_or_else(|_| t.unix_timestamp().to_string())
}

/// One server start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerStart {
    /// Block index in the plan.
    pub block: usize,
    /// Variant name.
    pub variant: String,
    /// Exact argv, secrets redacted.
    pub argv: Vec<String>,
    /// Environment set for the server (on top of the runner's), secrets redacted.
    pub env: BTreeMap<String, String>,
    /// Process id (absent when the spawn failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Process group, stopped as a whole (equal to `pid`: the server leads its group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgid: Option<i32>,
    /// Port passed as `${port}`.
    pub port: u16,
    /// Server log (stdout and stderr).
    pub log_path: String,
    /// UTC RFC 3339.
    pub started_at: String,
    /// Seconds from spawn until the readiness probe passed.
    pub ready_after_s: Option<f64>,
    /// Verify rules and what they found.
    #[serde(default)]
    pub verify: Vec<VerifyRecord>,
    /// What the server reports about itself (version/info endpoint), with the endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info: Option<ServerInfo>,
    /// How it was stopped; absent while it runs (or if the runner was killed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopReport>,
    /// Why the start failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A server launched through Slurm: its step and ranks (absent for a local server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm: Option<cluster::SlurmStepRecord>,
    /// The server's GPUs just before it started (`spec.telemetry`): memory in use and the
    /// processes holding it (`gpu-busy-at-start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_before_start: Option<crate::telemetry::GpuCheck>,
    /// The host probe run just before this start, with no server of the run running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_probe: Option<HostProbe>,
}

/// One verify rule's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VerifyRecord {
    /// The rule, in words.
    pub rule: String,
    /// Whether it held.
    pub passed: bool,
    /// What was found.
    pub detail: String,
}

/// Whether a trial measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrialStatus {
    /// Measured (it may still contain failed requests: see the summary's errors).
    Ok,
    /// Not measured, or cut short: see `failure`.
    Failed,
}

/// One trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrialResult {
    /// Position in the plan (from 0).
    pub seq: usize,
    /// Block (server start) it ran in.
    pub block: usize,
    /// Variant name.
    pub variant: String,
    /// Repetition index t (from 1).
    pub trial: u32,
    /// Sweep point index.
    pub point: usize,
    /// Repeat r of the cell within its server start, from 1 (`trials.per_start`): the trials
    /// of one variant, point and t with different repeats share a start.
    #[serde(default = "first_repeat", skip_serializing_if = "is_first_repeat")]
    pub repeat: u32,
    /// Seed of its prompts.
    pub prompt_seed: u64,
    /// Ok or failed.
    pub status: TrialStatus,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// UTC RFC 3339 of the measured phase.
    pub started_at: String,
    /// UTC RFC 3339.
    pub ended_at: String,
    /// Failed requests by kind (also inside the summary; here for quick reading).
    #[serde(default)]
    pub errors: BTreeMap<String, usize>,
    /// Metrics, histograms and flags of the measured requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<TrialSummary>,
    /// How the client dated what it read in the measured phase: reads stamped by the
    /// kernel on arrival, and reads dated by a clock reading after the read (docs/metrics.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_stamps: Option<ReceiveStamps>,
    /// What else used the host's CPUs during the trial (steal, other processes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_load: Option<HostLoad>,
}

fn first_repeat() -> u32 {
    1
}
fn is_first_repeat(r: &u32) -> bool {
    *r == 1
}

impl ServerStart {
    /// The record a later run needs to find this server's group again, if it started.
    pub fn server_record(&self) -> Option<ServerRecord> {
        Some(ServerRecord {
            argv: self.argv.clone(),
            env: self.env.clone(),
            working_dir: None,
            pid: self.pid?,
            pgid: self.pgid?,
            port: self.port,
            log_path: self.log_path.clone().into(),
            started_at: self.started_at.clone(),
            ready_after_s: self.ready_after_s.unwrap_or(0.0),
        })
    }
}

/// A verify rule in words.
pub fn describe_rule(r: &servebench_spec::VerifyRule) -> String {
    match (&r.log_contains, &r.json, &r.server_arg) {
        (Some(t), _, _) => format!("log contains {t:?}"),
        (None, Some(j), _) => format!("GET {} {} == {}", j.path, j.pointer, j.equals),
        (None, None, Some(a)) => format!("server argument {} == {}", a.name, a.equals),
        (None, None, None) => match &r.kernel {
            Some(k) => describe_kernel_rule(k),
            None => "empty rule".into(),
        },
    }
}

/// A `kernel` rule in words: `kernels matching /X/ ≥ 5% of busy time`, `no kernel matching /Y/`.
pub fn describe_kernel_rule(k: &servebench_spec::KernelCheck) -> String {
    let mut parts = Vec::new();
    if let Some(m) = &k.matches {
        parts.push(match k.min_share {
            Some(s) => format!("kernels matching /{m}/ ≥ {:.1}% of busy time", s * 100.0),
            None => format!("kernels matching /{m}/ ran"),
        });
    }
    if let Some(a) = &k.absent {
        parts.push(format!("no kernel matching /{a}/"));
    }
    if parts.is_empty() {
        "empty kernel rule".into()
    } else {
        parts.join(" and ")
    }
}

/// One resume of an interrupted run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Resume {
    /// UTC RFC 3339: the interrupted run's last write.
    pub interrupted_at: String,
    /// UTC RFC 3339: the resume's start.
    pub resumed_at: String,
}

impl RunResult {
    /// The share of token events that arrived in one read with another
    /// (`TrialSummary::batched_event_share`), mean over the ok trials of `variant` at `point`;
    /// `None` when no trial recorded one (results from before the share existed).
    pub fn batched_share(&self, variant: &str, point: usize) -> Option<f64> {
        let v: Vec<f64> = self
            .trials
            .iter()
            .filter(|t| t.status == TrialStatus::Ok && t.variant == variant && t.point == point)
            .filter_map(|t| t.summary.as_ref()?.batched_event_share)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// Trials recorded as failed.
    pub fn failed_trials(&self) -> usize {
        self.trials
            .iter()
            .filter(|t| t.status != TrialStatus::Ok)
            .count()
    }

    /// Trials that ran but in which no request succeeded (a server refusing everything):
    /// measured, kept, and not a success.
    pub fn trials_without_a_success(&self) -> usize {
        self.trials
            .iter()
            .filter(|t| t.status == TrialStatus::Ok)
            .filter(|t| {
                t.summary
                    .as_ref()
                    .is_some_and(|s| s.all.requests > 0 && s.all.completed == 0)
            })
            .count()
    }

    /// The trial with plan position `seq`, if recorded.
    pub fn trial(&self, seq: usize) -> Option<&TrialResult> {
        self.trials.iter().find(|t| t.seq == seq)
    }
}

/// One line of the sidecar: a request of a trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestLine {
    /// Trial position in the plan.
    pub seq: usize,
    /// Variant name.
    pub variant: String,
    /// Repetition index.
    pub trial: u32,
    /// Sweep point index.
    pub point: usize,
    /// Whether it was a warm-up request (excluded from metrics).
    #[serde(default)]
    pub warmup: bool,
    /// The line's format ([`crate::REQUEST_RECORD_VERSION`]): 2 writes the request's
    /// `flags`; a line without it is version 1, whose flags are derived from the record
    /// ([`crate::metrics::derive`]) when read.
    #[serde(default = "record_version_1")]
    pub record_version: u32,
    /// Conditions of the request that are not failures (version 2; derived from the record
    /// when it is written, so a reader of the sidecar sees them without re-deriving).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<crate::record::RequestFlag>,
    /// The raw record (instants in ns from the trial's measured start).
    #[serde(flatten)]
    pub record: RequestRecord,
}

fn record_version_1() -> u32 {
    1
}

impl RequestLine {
    /// A line of the current version, its flags derived from `record`.
    pub fn new(
        seq: usize,
        variant: String,
        trial: u32,
        point: usize,
        warmup: bool,
        record: RequestRecord,
    ) -> Self {
        let flags = if record.error.is_none() {
            crate::metrics::derive(&record).flags
        } else {
            Vec::new()
        };
        Self {
            seq,
            variant,
            trial,
            point,
            warmup,
            record_version: crate::REQUEST_RECORD_VERSION,
            flags,
            record,
        }
    }

    /// The request's flags: those written (version 2), else derived from the record.
    pub fn request_flags(&self) -> Vec<crate::record::RequestFlag> {
        if self.record_version >= 2 || self.record.error.is_some() {
            self.flags.clone()
        } else {
            crate::metrics::derive(&self.record).flags
        }
    }
}
