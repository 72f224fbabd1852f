//! What was checked about a server before it was measured: the engine it runs (named in the
//! spec or detected from what it answered) and the guarantees a spec relies on, each holding,
//! failing or not available. `servebench probe` prints the same records; `run` keeps the
//! cheap ones of every block's start in [`crate::RunResult::preflight`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use servebench_engines::Engine;

/// How the engine of a target was known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EngineSource {
    /// `target.engine` named it.
    Spec,
    /// Detected from what the server answered (`target.engine: auto`).
    Detected,
}

/// The engine a target runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EngineRecord {
    /// The engine whose profile was used.
    pub engine: Engine,
    /// Its version as the server reported it, where it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Named or detected.
    pub source: EngineSource,
    /// What told it, e.g. "`owned_by: sglang` in /v1/models".
    pub evidence: String,
}

impl EngineRecord {
    /// "sglang 0.5.23 (detected: `owned_by: sglang` in /v1/models)".
    pub fn describe(&self) -> String {
        let version = self
            .version
            .as_deref()
            .map_or_else(String::new, |v| format!(" {v}"));
        let how = match self.source {
            EngineSource::Spec => "named by target.engine",
            EngineSource::Detected => "detected",
        };
        format!("{}{version} ({how}: {})", self.engine, self.evidence)
    }
}

/// A guarantee a spec relies on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Guarantee {
    /// The engine was told apart (or named) and its profile used.
    Engine,
    /// The spec's model is among `/v1/models`.
    ModelServed,
    /// A streamed request returns token events and ends as a stream should.
    Streaming,
    /// The stream carries `usage` (the server's own token counts).
    Usage,
    /// A request for N output tokens returns N.
    OutputLength,
    /// The tokenize endpoint answers, and agrees with `usage.prompt_tokens`.
    Tokenize,
    /// The longest request the server takes is read.
    ContextLimit,
    /// The spec's verify rules match what the server reports.
    Verify,
    /// The Prometheus metrics endpoint answers.
    Metrics,
    /// A request carrying the spec's `request_body` is accepted.
    RequestBody,
}

impl Guarantee {
    /// Its name for people.
    pub fn label(self) -> &'static str {
        match self {
            Guarantee::Engine => "engine",
            Guarantee::ModelServed => "model served",
            Guarantee::Streaming => "streaming works",
            Guarantee::Usage => "usage arrives",
            Guarantee::OutputLength => "output length honoured",
            Guarantee::Tokenize => "tokenize agrees with usage",
            Guarantee::ContextLimit => "context limit read",
            Guarantee::Verify => "verify rules match",
            Guarantee::Metrics => "metrics endpoint",
            Guarantee::RequestBody => "request body accepted",
        }
    }
}

/// Whether a guarantee holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    /// It holds.
    Holds,
    /// It does not.
    Fails,
    /// The engine offers no way to have it (or it was not checked).
    NotAvailable,
}

impl CheckOutcome {
    /// `holds`, `fails`, `not available`.
    pub fn label(self) -> &'static str {
        match self {
            CheckOutcome::Holds => "holds",
            CheckOutcome::Fails => "fails",
            CheckOutcome::NotAvailable => "not available",
        }
    }
}

/// One guarantee checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckRecord {
    /// Which.
    pub guarantee: Guarantee,
    /// Holds, fails or not available.
    pub outcome: CheckOutcome,
    /// What was seen.
    pub detail: String,
    /// What to set (a server flag, a spec field) where it does not hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<String>,
    /// Whether the spec relies on it (a failure of one that it needs stops `probe` with exit
    /// 1, and refuses the block in `run`).
    #[serde(default)]
    pub needed: bool,
}

impl CheckRecord {
    /// A check with its outcome and detail, nothing to set, not needed.
    pub fn new(guarantee: Guarantee, outcome: CheckOutcome, detail: impl Into<String>) -> Self {
        CheckRecord {
            guarantee,
            outcome,
            detail: detail.into(),
            set: None,
            needed: false,
        }
    }

    /// With what to set.
    pub fn set(mut self, what: impl Into<String>) -> Self {
        self.set = Some(what.into());
        self
    }

    /// Marked as needed by the spec.
    pub fn needed(mut self, needed: bool) -> Self {
        self.needed = needed;
        self
    }

    /// A needed guarantee that fails.
    pub fn is_blocking(&self) -> bool {
        self.needed && self.outcome == CheckOutcome::Fails
    }
}

/// What was checked at the start of one block, before its trials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BlockChecks {
    /// The block (0-based).
    pub block: usize,
    /// Its variant.
    pub variant: String,
    /// The engine, where it was known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineRecord>,
    /// The model the block measured: the spec's `target.model`, or for `target.model: auto`
    /// the one model the server listed. Absent in results from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The guarantees checked.
    #[serde(default)]
    pub checks: Vec<CheckRecord>,
    /// What the engine cannot do that the spec asked (e.g. no `ignore_eos`), said once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}
