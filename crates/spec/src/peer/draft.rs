//! The spec a peer's command line becomes, as the few keys it sets, written as YAML a
//! person reads (every other key keeps servebench's default).

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::rate::Rate;
use crate::types::{ApiKind, DatasetKind, TokenCount};

/// The dataset of a draft.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftDataset {
    /// Its kind.
    pub kind: DatasetKind,
    /// `input_tokens` (`random`).
    pub input_tokens: Option<TokenCount>,
    /// `output_tokens`.
    pub output_tokens: Option<TokenCount>,
    /// `path` (files and traces).
    pub path: Option<String>,
    /// `shared_prefix`: groups, prompts per group, prefix and suffix lengths.
    pub shared_prefix: Option<(u32, u32, TokenCount, TokenCount)>,
    /// `trace` (Mooncake format): speed, `timestamp_unit: s` instead of ms, block tokens,
    /// requests.
    pub trace: Option<DraftTrace>,
    /// `image` (PNG): count, width, height.
    pub image: Option<DraftImage>,
}

/// The images of a draft's `image` dataset: count per request, width, height.
pub type DraftImage = (u32, u32, u32);

/// A replayed trace.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftTrace {
    /// Replay speed (2: twice as fast).
    pub speed: f64,
    /// Timestamps in seconds (else milliseconds).
    pub seconds: bool,
    /// Tokens per `hash_ids` block.
    pub block_tokens: u32,
    /// At most this many requests.
    pub requests: Option<u32>,
}

/// The keys a peer's command line sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.description`.
    pub description: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `target.base_url`.
    pub base_url: String,
    /// `target.api`.
    pub api: ApiKind,
    /// `target.model` (`None`: the tool asks the server; the spec gets `auto`).
    pub model: Option<String>,
    /// `target.tokenizer_path` with `tokenizer: local` (else `tokenizer: server`).
    pub tokenizer_path: Option<String>,
    /// `target.headers`.
    pub headers: BTreeMap<String, String>,
    /// The one variant's name.
    pub variant: String,
    /// `workload.dataset`.
    pub dataset: DraftDataset,
    /// `workload.requests` (`None` for a trace, whose count is its own).
    pub requests: Option<u32>,
    /// `workload.request_rate`.
    pub request_rate: Rate,
    /// `workload.burstiness` (with `arrival: gamma`), when not 1.
    pub burstiness: Option<f64>,
    /// `workload.max_concurrency`.
    pub max_concurrency: Option<u32>,
    /// `workload.warmup_requests`.
    pub warmup_requests: u32,
    /// `workload.ignore_eos`.
    pub ignore_eos: bool,
    /// `workload.temperature`.
    pub temperature: f64,
    /// `workload.seed`.
    pub seed: u64,
    /// `slo` in ms: ttft, tpot, e2e.
    pub slo: [Option<f64>; 3],
    /// Percentiles the tool was asked to print beyond p50 and p99 (`ttft_p95`): written
    /// into `compare.metrics` after the defaults, so the run's summary shows them.
    pub percentiles: Vec<String>,
    /// `trials.count`.
    pub trials: u32,
    /// `workload.request_body` (the tool's extra request fields).
    pub request_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// `workload.request_body_takes_over`: fields servebench sets that the tool's extra
    /// fields replace.
    pub takes_over: Vec<String>,
}

/// The model of a command line that names none: `auto`, the one model the server's
/// `/v1/models` lists (as the tools ask it).
pub const MODEL_PLACEHOLDER: &str = crate::types::AUTO_MODEL;

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

fn count(t: TokenCount) -> String {
    match t {
        TokenCount::Fixed(n) => n.to_string(),
        TokenCount::Range(r) => format!("{{min: {}, max: {}}}", r.min, r.max),
    }
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

fn ms(x: f64) -> String {
    format!("{}ms", num(x))
}

impl Draft {
    /// The spec as YAML.
    pub fn to_yaml(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "apiVersion: servebench/v1alpha1");
        let _ = writeln!(s, "kind: Experiment");
        let _ = writeln!(s, "metadata:");
        let _ = writeln!(s, "  name: {}", q(&self.name));
        let _ = writeln!(s, "  description: {}", q(&self.description));
        if !self.labels.is_empty() {
            let _ = writeln!(s, "  labels:");
            for (k, v) in &self.labels {
                let _ = writeln!(s, "    {}: {}", q(k), q(v));
            }
        }
        let _ = writeln!(s, "spec:");
        let _ = writeln!(s, "  target:");
        let _ = writeln!(s, "    base_url: {}", q(&self.base_url));
        let api = match self.api {
            ApiKind::OpenaiCompletions => "openai-completions",
            ApiKind::OpenaiChat => "openai-chat",
        };
        let _ = writeln!(s, "    api: {api}");
        let _ = writeln!(
            s,
            "    model: {}",
            q(self.model.as_deref().unwrap_or(MODEL_PLACEHOLDER))
        );
        match &self.tokenizer_path {
            Some(p) => {
                let _ = writeln!(s, "    tokenizer: local");
                let _ = writeln!(s, "    tokenizer_path: {}", q(p));
            }
            None => {
                let _ = writeln!(s, "    tokenizer: server");
            }
        }
        if !self.headers.is_empty() {
            let _ = writeln!(s, "    headers:");
            for (k, v) in &self.headers {
                let _ = writeln!(s, "      {}: {}", q(k), q(v));
            }
        }
        let _ = writeln!(s, "  variants:");
        let _ = writeln!(s, "    - name: {}", q(&self.variant));
        let _ = writeln!(s, "      baseline: true");
        let _ = writeln!(s, "  workload:");
        let _ = writeln!(s, "    dataset:");
        let d = &self.dataset;
        let kind = match d.kind {
            DatasetKind::Random => "random",
            DatasetKind::Jsonl => "jsonl",
            DatasetKind::Sharegpt => "sharegpt",
            DatasetKind::SharedPrefix => "shared_prefix",
            DatasetKind::MultiTurn => "multi_turn",
            DatasetKind::Trace => "trace",
            DatasetKind::Image => "image",
        };
        let _ = writeln!(s, "      kind: {kind}");
        if let Some(t) = d.input_tokens {
            let _ = writeln!(s, "      input_tokens: {}", count(t));
        }
        if let Some(t) = d.output_tokens {
            let _ = writeln!(s, "      output_tokens: {}", count(t));
        }
        if let Some(p) = &d.path {
            let _ = writeln!(s, "      path: {}", q(p));
        }
        if let Some((groups, per, prefix, suffix)) = d.shared_prefix {
            let _ = writeln!(s, "      shared_prefix:");
            let _ = writeln!(s, "        groups: {groups}");
            let _ = writeln!(s, "        prompts_per_group: {per}");
            let _ = writeln!(s, "        prefix_tokens: {}", count(prefix));
            let _ = writeln!(s, "        suffix_tokens: {}", count(suffix));
        }
        if let Some((count, width, height)) = d.image {
            let _ = writeln!(
                s,
                "      image: {{count: {count}, width: {width}, height: {height}, format: png}}"
            );
        }
        if let Some(t) = &d.trace {
            let _ = writeln!(s, "      trace:");
            let _ = writeln!(s, "        format: mooncake");
            if t.seconds {
                let _ = writeln!(s, "        timestamp_unit: s");
            }
            let _ = writeln!(s, "        speed: {}", num(t.speed));
            let _ = writeln!(s, "        block_tokens: {}", t.block_tokens);
            if let Some(n) = t.requests {
                let _ = writeln!(s, "        requests: {n}");
            }
        }
        if let Some(n) = self.requests {
            let _ = writeln!(s, "    requests: {n}");
        }
        match self.request_rate {
            Rate::Inf => {
                let _ = writeln!(s, "    request_rate: inf");
            }
            Rate::PerSecond(r) => {
                let _ = writeln!(s, "    request_rate: {}", num(r));
            }
        }
        if let Some(b) = self.burstiness {
            let _ = writeln!(s, "    arrival: gamma");
            let _ = writeln!(s, "    burstiness: {}", num(b));
        }
        if let Some(c) = self.max_concurrency {
            let _ = writeln!(s, "    max_concurrency: {c}");
        }
        let _ = writeln!(s, "    warmup_requests: {}", self.warmup_requests);
        let _ = writeln!(s, "    ignore_eos: {}", self.ignore_eos);
        let _ = writeln!(s, "    temperature: {}", num(self.temperature));
        let _ = writeln!(s, "    seed: {}", self.seed);
        if let Some(b) = &self.request_body {
            // JSON is YAML's flow style: the fields exactly as the tool sent them.
            let _ = writeln!(
                s,
                "    request_body: {}",
                serde_json::Value::Object(b.clone())
            );
        }
        if !self.takes_over.is_empty() {
            let _ = writeln!(
                s,
                "    request_body_takes_over: [{}]",
                self.takes_over.join(", ")
            );
        }
        if self.slo.iter().any(Option::is_some) {
            let _ = writeln!(s, "  slo:");
            for (key, v) in ["ttft", "tpot", "e2e"].iter().zip(self.slo) {
                if let Some(v) = v {
                    let _ = writeln!(s, "    {key}: {}", ms(v));
                }
            }
        }
        if !self.percentiles.is_empty() {
            let metrics: Vec<String> = crate::types::CompareSettings::default()
                .metrics
                .into_iter()
                .chain(self.percentiles.iter().cloned())
                .collect();
            let _ = writeln!(s, "  compare:");
            let _ = writeln!(s, "    metrics: [{}]", metrics.join(", "));
        }
        let _ = writeln!(s, "  trials:");
        let _ = writeln!(s, "    count: {}", self.trials);
        s
    }
}
