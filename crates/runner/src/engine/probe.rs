//! `servebench probe`: a pre-flight of a running endpoint. It tells the engine and its
//! version, then with a handful of requests checks every guarantee a spec relies on: a
//! streamed request works, `usage` arrives, a request for N output tokens returns N, the
//! tokenizer agrees with `usage.prompt_tokens` for the same prompt, the context limit is
//! read, the spec's verify rules match (and tell its variants apart), the metrics endpoint
//! answers. Each check says what to set where it does not hold.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use servebench_result::checks::{CheckOutcome, CheckRecord, EngineRecord, Guarantee};
use servebench_result::record::RequestRecord;
use servebench_spec::engine::{Profile, StreamUsage};
use servebench_spec::substitute::{Context, resolve as substitute};
use servebench_spec::{Engine, SpecFile, TokenizerSource, VerifyRule};

use super::checks::{BlockPlan, metrics_check, model_check};
use super::{Endpoint, Resolved, Unreachable};
use crate::dataset::{AnyCounter, ChatMessage, Prompt, TokenCounter, TrialPrompts};
use crate::loadgen::{ApiKind, LoadConfig, MinTokens, Target, run_trial};

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
}

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
        model_check(resolved.models.as_ref(), &model, p),
    ];
    let rec = generate(&target, &plan, opts.output_tokens).await;
    checks.push(streaming_check(&rec, p));
    checks.push(usage_check(&rec, p));
    checks.push(length_check(
        &rec,
        &plan,
        p,
        w.ignore_eos,
        opts.output_tokens,
    ));
    checks.push(tokenize_check(spec, &plan, &rec, opts.api).await);
    let limit = crate::server::context_limit(ep.reach(), p, &model).await;
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
                "{} says no limit servebench can read: requests longer than it takes fail one by one",
                p.name
            ),
        ),
    });
    checks.push(verify_check(opts, spec, p).await);
    checks.push(metrics_check(ep, p).await);
    Ok(ProbeReport {
        base_url: ep.base_url.clone(),
        model,
        engine: resolved.record,
        checks,
    })
}

/// `--model`, else the spec's, else the only model the server lists.
fn pick_model(opts: &ProbeOptions, r: &Resolved) -> Result<String, ProbeError> {
    if let Some(m) = opts
        .model
        .clone()
        .or_else(|| opts.spec.as_ref().map(|s| s.spec.target.model.clone()))
    {
        return Ok(m);
    }
    let ids: Vec<String> = r
        .models
        .as_ref()
        .and_then(|d| d.get("data"))
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|m| m.get("id").and_then(serde_json::Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    match ids.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(ProbeError::Model(
            "the server lists no model in /v1/models: give --model NAME".into(),
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

/// One streamed request for `n` output tokens, with the body the profile decides.
async fn generate(target: &Target, plan: &BlockPlan, n: u32) -> RequestRecord {
    let mut cfg = LoadConfig::new(1);
    cfg.max_concurrency = Some(1);
    cfg.request_timeout = Duration::from_secs(120);
    cfg.ignore_eos = plan.body.ignore_eos;
    cfg.min_tokens = if plan.body.min_tokens {
        MinTokens::MatchMax
    } else {
        MinTokens::Omit
    };
    cfg.stream_options = plan.body.stream_options;
    cfg.generation_config = plan.body.generation_config;
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

fn streaming_check(rec: &RequestRecord, p: &Profile) -> CheckRecord {
    let g = Guarantee::Streaming;
    match rec.error {
        None => {
            let end = match (&rec.finish_reason, p.stream.sends_done) {
                (Some(f), true) => format!("finish_reason {f}"),
                (Some(f), false) => {
                    format!("finish_reason {f}, no [DONE] ({} never sends one)", p.name)
                }
                (None, _) => "[DONE]".to_owned(),
            };
            let held = if rec.content_held_back {
                "; no content chunk, every token in the final one (content_held_back)"
            } else {
                ""
            };
            CheckRecord::new(
                g,
                CheckOutcome::Holds,
                format!("{} token events, ended by {end}{held}", rec.events.len()),
            )
            .needed(true)
        }
        Some(kind) => CheckRecord::new(
            g,
            CheckOutcome::Fails,
            format!(
                "the request failed ({kind}): {}",
                rec.error_detail.as_deref().unwrap_or("no detail")
            ),
        )
        .needed(true),
    }
}

fn usage_check(rec: &RequestRecord, p: &Profile) -> CheckRecord {
    let g = Guarantee::Usage;
    if rec.error.is_some() {
        return CheckRecord::new(g, CheckOutcome::NotAvailable, "no stream to read it from");
    }
    match rec.usage {
        Some(u) => CheckRecord::new(
            g,
            CheckOutcome::Holds,
            format!(
                "prompt_tokens {}, completion_tokens {}",
                u.prompt_tokens, u.completion_tokens
            ),
        )
        .needed(true),
        None => {
            let set = match p.stream.usage {
                StreamUsage::WhenAsked | StreamUsage::CompletionsAlwaysChatWhenAsked => {
                    "the engine sends usage only when asked with stream_options.include_usage, which servebench sends: check a proxy does not drop it"
                }
                StreamUsage::Always => {
                    "nothing: the engine is said to send usage in its final chunk"
                }
            };
            CheckRecord::new(
                g,
                CheckOutcome::Fails,
                "the stream carried no usage: output lengths would be the client's count of events",
            )
            .set(set)
            .needed(true)
        }
    }
}

fn length_check(
    rec: &RequestRecord,
    plan: &BlockPlan,
    p: &Profile,
    asked: bool,
    n: u32,
) -> CheckRecord {
    let g = Guarantee::OutputLength;
    let got = rec.usage.map(|u| u.completion_tokens);
    if !plan.body.lengths_fixed {
        let detail = if asked {
            plan.body.warnings.first().cloned().unwrap_or_default()
        } else {
            "not asked (`workload.ignore_eos: false`)".to_owned()
        };
        let seen = got.map_or_else(String::new, |c| format!(" (asked {n}, got {c})"));
        return CheckRecord::new(g, CheckOutcome::NotAvailable, format!("{detail}{seen}"));
    }
    let how = if plan.body.ignore_eos {
        "ignore_eos"
    } else if plan.body.generation_config {
        "generation_config min_new_tokens"
    } else {
        "min_tokens"
    };
    match got {
        Some(c) if c == n => CheckRecord::new(
            g,
            CheckOutcome::Holds,
            format!("asked {n}, got {n} (by {how})"),
        )
        .needed(asked),
        Some(c) => {
            let why = rec
                .finish_reason
                .as_deref()
                .map_or_else(String::new, |f| format!(", finish_reason {f}"));
            let set = if plan.body.generation_config {
                format!(
                    "start {} without --continuous-batching (its continuous batching drops min_new_tokens), or workload.ignore_eos: false",
                    p.name
                )
            } else {
                format!(
                    "a {} build that honours {how}, or workload.ignore_eos: false",
                    p.name
                )
            };
            CheckRecord::new(
                g,
                CheckOutcome::Fails,
                format!("asked {n}, got {c} (by {how}{why}): output lengths are not fixed"),
            )
            .set(set)
            .needed(asked)
        }
        None => CheckRecord::new(
            g,
            CheckOutcome::NotAvailable,
            "no usage to count the output with",
        ),
    }
}

/// The spec's tokenizer counts the probe's prompt as the server's `usage` does.
async fn tokenize_check(
    spec: &SpecFile,
    plan: &BlockPlan,
    rec: &RequestRecord,
    api: ApiKind,
) -> CheckRecord {
    let g = Guarantee::Tokenize;
    let needed = spec.spec.target.tokenizer != TokenizerSource::None;
    if spec.spec.target.tokenizer == TokenizerSource::None {
        return CheckRecord::new(
            g,
            CheckOutcome::NotAvailable,
            "not used (`tokenizer: none`)",
        );
    }
    let Some(usage) = rec.usage else {
        return CheckRecord::new(g, CheckOutcome::NotAvailable, "no usage to compare with");
    };
    let mut counter = match AnyCounter::from_spec(&plan.tokenizer) {
        Ok(c) => c,
        Err(e) => {
            return CheckRecord::new(g, CheckOutcome::Fails, e.to_string())
                .set("target.tokenizer: local with the model's tokenizer.json")
                .needed(needed);
        }
    };
    let counted = match api {
        ApiKind::Completions => counter.count(PROMPT).await.map(Some),
        ApiKind::Chat => {
            counter
                .count_chat(&[ChatMessage {
                    role: "user".into(),
                    content: PROMPT.into(),
                }])
                .await
        }
    };
    let which = match spec.spec.target.tokenizer {
        TokenizerSource::Local => "the local tokenizer",
        _ => "the server's tokenizer",
    };
    match counted {
        Ok(Some(c)) if c == usage.prompt_tokens => CheckRecord::new(
            g,
            CheckOutcome::Holds,
            format!("{which} counts {c}, usage.prompt_tokens is {c}"),
        )
        .needed(needed),
        Ok(Some(c)) => CheckRecord::new(
            g,
            CheckOutcome::Fails,
            format!(
                "{which} counts {c}, usage.prompt_tokens is {}: input lengths would be off by {}",
                usage.prompt_tokens,
                i64::from(usage.prompt_tokens) - i64::from(c)
            ),
        )
        .set("target.tokenizer: local with the served model's own tokenizer.json")
        .needed(needed),
        Ok(None) => CheckRecord::new(
            g,
            CheckOutcome::NotAvailable,
            format!(
                "{which} does not count chat messages (no chat template): chat prompts' lengths are estimates; completions prompts are exact"
            ),
        ),
        Err(e) => CheckRecord::new(g, CheckOutcome::Fails, e.to_string())
            .set("target.tokenizer: local with the model's tokenizer.json")
            .needed(needed),
    }
}

/// The spec's verify rules against the server, once per variant: they hold for exactly one.
async fn verify_check(opts: &ProbeOptions, spec: &SpecFile, p: &Profile) -> CheckRecord {
    let g = Guarantee::Verify;
    let Some(rules) = spec
        .spec
        .server
        .as_ref()
        .map(|s| &s.verify)
        .filter(|r| !r.is_empty())
    else {
        return CheckRecord::new(
            g,
            CheckOutcome::NotAvailable,
            "the spec has no verify rules",
        );
    };
    let ep = &opts.endpoint;
    let mut matched = Vec::new();
    let mut failures = Vec::new();
    for v in &spec.spec.variants {
        let ctx = Context {
            vars: Some(&v.vars),
            env: true,
            ..Context::default()
        };
        let resolved: Result<Vec<VerifyRule>, String> =
            rules.iter().map(|r| resolve_rule(r, &ctx)).collect();
        let rules = match resolved {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("variant `{}`: {e}", v.name));
                continue;
            }
        };
        match crate::server::verify_running(
            &ep.base_url,
            ep.ca_file.as_deref(),
            opts.log.as_deref(),
            &rules,
            p,
        )
        .await
        {
            Ok(outcomes) => matched.push(format!(
                "`{}` ({})",
                v.name,
                outcomes
                    .iter()
                    .map(|o| o.evidence.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            Err(e) => failures.push(format!(
                "variant `{}`: {}",
                v.name,
                e.failures
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        }
    }
    match matched.as_slice() {
        [one] => CheckRecord::new(
            g,
            CheckOutcome::Holds,
            format!("the server runs variant {one}"),
        )
        .needed(true),
        [] => CheckRecord::new(
            g,
            CheckOutcome::Fails,
            format!("no variant's rules hold: {}", failures.join(" | ")),
        )
        .set(
            if opts.log.is_none() && rules.iter().any(|r| r.log_contains.is_some()) {
                "--log FILE (the server's log) for log_contains rules"
            } else {
                "rules that read what this engine reports (docs/engines.md)"
            },
        )
        .needed(true),
        many => CheckRecord::new(
            g,
            CheckOutcome::Fails,
            format!(
                "the rules hold for {} variants ({}): they do not tell the variants apart",
                many.len(),
                many.join(", ")
            ),
        )
        .needed(true),
    }
}

/// A verify rule with `${variant.*}` and `${env.*}` resolved.
fn resolve_rule(r: &VerifyRule, ctx: &Context<'_>) -> Result<VerifyRule, String> {
    let sub = |s: &str| substitute(s, ctx).map_err(|e| e.to_string());
    let mut r = r.clone();
    if let Some(t) = &r.log_contains {
        r.log_contains = Some(sub(t)?);
    }
    if let Some(j) = &mut r.json {
        j.path = sub(&j.path)?;
        if let Some(s) = j.equals.as_str() {
            j.equals = serde_json::Value::String(sub(s)?);
        }
    }
    if let Some(a) = &mut r.server_arg
        && let Some(s) = a.equals.as_str()
    {
        a.equals = serde_json::Value::String(sub(s)?);
    }
    Ok(r)
}
