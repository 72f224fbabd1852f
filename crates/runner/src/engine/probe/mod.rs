//! `servebench probe`: a pre-flight of a running endpoint. It tells the engine and its
//! version, then with a handful of requests checks every guarantee a spec relies on: a
//! streamed request works, `usage` arrives, a request for N output tokens returns N, the
//! tokenizer agrees with `usage.prompt_tokens` for the same prompt, the context limit is
//! read, the spec's verify rules match (and tell its variants apart), the metrics endpoint
//! answers. Each check says what to set where it does not hold.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use servebench_engines::Engine;
use servebench_result::checks::{CheckOutcome, CheckRecord, EngineRecord, Guarantee};
use servebench_result::record::RequestRecord;
use servebench_spec::SpecFile;

use super::checks::{BlockPlan, metrics_check, model_check};
use super::{Endpoint, Resolved, Unreachable};
use crate::dataset::{Prompt, TrialPrompts};
use crate::loadgen::{ApiKind, LoadConfig, MinTokens, Target, run_trial};

mod body;
mod guarantees;

use guarantees::{length_check, streaming_check, tokenize_check, usage_check, verify_check};

/// What to probe and how.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// Where the server is.
    pub endpoint: Endpoint,
    /// The model requests name; `None`: the spec's, else the only one `/v1/models` lists.
    pub model: Option<String>,
    /// The API generation requests use.
    pub api: ApiKind,
    /// `auto` to detect, else the engine whose profile is used.
    pub engine: Engine,
    /// The spec whose guarantees are checked (its workload's `ignore_eos`, `tokenizer`,
    /// verify rules); `None`: a spec's defaults (`ignore_eos: true`, `tokenizer: server`).
    pub spec: Option<SpecFile>,
    /// Where a spec's relative paths are read from (`tokenizer_path`).
    pub spec_dir: PathBuf,
    /// The server's log, for `log_contains` rules.
    pub log: Option<PathBuf>,
    /// Output tokens asked of the generation requests.
    pub output_tokens: u32,
    /// The longest any one step may wait on the server (the generation request, the
    /// tokenizer, the context limit, the verify rules, the metrics), `probe --deadline`.
    pub deadline: Duration,
    /// Say each step on stderr as it begins (not with `--json`).
    pub progress: bool,
}

/// The default of [`ProbeOptions::deadline`]: a probe's request for a few tokens takes well
/// under a second on a warm server; a stream that stalls or never ends is cut here.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);

/// What the probe found.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    /// The endpoint.
    pub base_url: String,
    /// The model the requests named.
    pub model: String,
    /// The engine, as told.
    pub engine: EngineRecord,
    /// Every guarantee, in order.
    pub checks: Vec<CheckRecord>,
    /// Whether a spec was given (`--spec`): without one, a check is needed when a run with
    /// servebench's defaults would rely on it, and what the engine cannot do at all is not
    /// available rather than failed.
    pub spec_given: bool,
}

impl ProbeReport {
    /// A guarantee the spec needs fails.
    pub fn needed_fails(&self) -> bool {
        self.checks.iter().any(CheckRecord::is_blocking)
    }
}

/// Why the probe could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// Nothing answers at the URL.
    #[error(transparent)]
    Unreachable(#[from] Unreachable),
    /// No model given and the server does not name exactly one.
    #[error("{0}")]
    Model(String),
}

/// A prompt of ordinary English words, the same for every probe.
const PROMPT: &str = "Write a short story about a lighthouse keeper who finds a message in a \
                      bottle washed up on the rocks one stormy night.";

/// Probes the endpoint of `opts`.
pub async fn probe(opts: &ProbeOptions) -> Result<ProbeReport, ProbeError> {
    let ep = &opts.endpoint;
    let resolved = super::resolve(ep, opts.engine).await?;
    let p = resolved.profile;
    let model = pick_model(opts, &resolved)?;
    let default_spec;
    let spec = match &opts.spec {
        Some(s) => s,
        None => {
            default_spec = default_spec_for(&model, opts.api)?;
            &default_spec
        }
    };
    let target = Target {
        base_url: ep.base_url.clone(),
        api: opts.api,
        model: model.clone(),
        api_key: ep.api_key.clone(),
        headers: ep.headers.clone(),
        ca_file: ep.ca_file.clone(),
    };
    let plan = BlockPlan::new(spec, &target, &opts.spec_dir, p);
    let w = &spec.spec.workload;
    let mut checks = vec![
        CheckRecord::new(
            Guarantee::Engine,
            CheckOutcome::Holds,
            resolved.record.describe(),
        ),
        model_check(resolved.model_list(), &model, p),
    ];
    let step = Step::new(opts);
    step.say("streaming request");
    let rec = generate(&target, &plan, opts.output_tokens, opts.deadline).await;
    checks.push(streaming_check(&rec, p, opts.output_tokens, opts.deadline));
    checks.push(usage_check(&rec, p));
    checks.push(length_check(
        &rec,
        &plan,
        p,
        w.ignore_eos,
        opts.output_tokens,
    ));
    checks.push(
        step.run(
            Guarantee::Tokenize,
            tokenize_check(spec, &plan, &rec, opts.api, p, opts.spec.is_some()),
        )
        .await,
    );
    step.say("context limit");
    let limit = tokio::time::timeout(
        opts.deadline,
        crate::server::context_limit(ep.reach(), p, &model),
    )
    .await
    .ok()
    .flatten();
    checks.push(match limit {
        Some(l) => CheckRecord::new(
            Guarantee::ContextLimit,
            CheckOutcome::Holds,
            format!("{} tokens ({})", l.tokens, l.source),
        ),
        None => CheckRecord::new(
            Guarantee::ContextLimit,
            CheckOutcome::NotAvailable,
            format!(
                "{} says no limit servebench can read (or none within the deadline): requests \
                 longer than it takes fail one by one",
                p.name
            ),
        ),
    });
    checks.extend(body::request_body_checks(&target, &plan, spec, opts.deadline).await);
    checks.push(
        step.run(Guarantee::Verify, verify_check(opts, spec, p))
            .await,
    );
    checks.push(
        step.run(Guarantee::Metrics, metrics_check(ep, p, &model))
            .await,
    );
    Ok(ProbeReport {
        base_url: ep.base_url.clone(),
        model,
        engine: resolved.record,
        checks,
        spec_given: opts.spec.is_some(),
    })
}

/// `--model`, else the spec's, else the only model the server lists.
fn pick_model(opts: &ProbeOptions, r: &Resolved) -> Result<String, ProbeError> {
    if let Some(m) = opts
        .model
        .clone()
        .or_else(|| opts.spec.as_ref().map(|s| s.spec.target.model.clone()))
        .filter(|m| m != servebench_spec::AUTO_MODEL)
    {
        return Ok(m);
    }
    let list = r.model_list().map_err(|seen| {
        ProbeError::Model(format!(
            "/v1/models gave no model list to pick the model from ({seen}): is this the \
             server's OpenAI-compatible address? If it is, give --model NAME to probe it anyway"
        ))
    })?;
    let ids: Vec<&str> = list
        .get("data")
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|m| m.get("id").and_then(serde_json::Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    match ids.as_slice() {
        [only] => Ok((*only).to_owned()),
        [] => Err(ProbeError::Model(
            "the server's /v1/models lists no model: give --model NAME".into(),
        )),
        many => Err(ProbeError::Model(format!(
            "the server lists {} models ({}): give --model NAME",
            many.len(),
            many.join(", ")
        ))),
    }
}

/// A spec with servebench's defaults, for a probe without `--spec`.
fn default_spec_for(model: &str, api: ApiKind) -> Result<SpecFile, ProbeError> {
    let api = match api {
        ApiKind::Chat => "openai-chat",
        ApiKind::Completions => "openai-completions",
    };
    let doc = serde_json::json!({
        "apiVersion": "servebench/v1alpha1",
        "kind": "Experiment",
        "metadata": {"name": "probe"},
        "spec": {
            "target": {"model": model, "api": api},
            "variants": [{"name": "a", "baseline": true}],
            "workload": {
                "dataset": {"kind": "random", "input_tokens": 16, "output_tokens": 16},
                "requests": 1
            }
        }
    });
    serde_json::from_value(doc)
        .map_err(|e| ProbeError::Model(format!("the model name `{model}` cannot be probed: {e}")))
}

/// Each step of a probe bounded by the deadline, and said on stderr as it begins.
struct Step {
    deadline: Duration,
    progress: bool,
}

impl Step {
    fn new(opts: &ProbeOptions) -> Step {
        Step {
            deadline: opts.deadline,
            progress: opts.progress,
        }
    }

    fn say(&self, what: &str) {
        if self.progress {
            eprintln!(
                "servebench probe: {what} (deadline {} s) …",
                self.deadline.as_secs_f64()
            );
        }
    }

    /// `check`, or a failure that says it did not answer within the deadline.
    async fn run(
        &self,
        g: Guarantee,
        check: impl std::future::Future<Output = CheckRecord>,
    ) -> CheckRecord {
        self.say(g.label());
        match tokio::time::timeout(self.deadline, check).await {
            Ok(c) => c,
            Err(_) => CheckRecord::new(
                g,
                CheckOutcome::Fails,
                format!(
                    "no answer within the deadline of {} s: the server stalled (raise it with \
                     --deadline SECS if it is only slow)",
                    self.deadline.as_secs_f64()
                ),
            ),
        }
    }
}

/// One streamed request for `n` output tokens, with the body the profile decides, cut at
/// `deadline` (a stream that stalls, or never ends, fails as `timeout` there).
async fn generate(target: &Target, plan: &BlockPlan, n: u32, deadline: Duration) -> RequestRecord {
    generate_with(target, plan, n, deadline, serde_json::Map::new()).await
}

/// [`generate`] with `extra` merged into the body (`request_body`).
async fn generate_with(
    target: &Target,
    plan: &BlockPlan,
    n: u32,
    deadline: Duration,
    extra: serde_json::Map<String, serde_json::Value>,
) -> RequestRecord {
    let mut cfg = LoadConfig::new(1);
    cfg.max_concurrency = Some(1);
    cfg.request_timeout = deadline;
    cfg.ignore_eos = plan.body.ignore_eos;
    cfg.min_tokens = if plan.body.min_tokens {
        MinTokens::MatchMax
    } else {
        MinTokens::Omit
    };
    cfg.stream_options = plan.body.stream_options;
    cfg.generation_config = plan.body.generation_config;
    cfg.extra_body = extra;
    let prompts = TrialPrompts {
        measured: vec![Prompt::text(PROMPT, n)],
        ..TrialPrompts::default()
    };
    match run_trial(target, &cfg, &prompts).await {
        Ok(mut o) => o.records.pop().unwrap_or_default(),
        Err(e) => {
            let mut r = RequestRecord::default();
            r.fail(
                servebench_result::record::ErrorKind::Internal,
                e.to_string(),
            );
            r
        }
    }
}
