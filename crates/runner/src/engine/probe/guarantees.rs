//! The guarantees a probe checks from its generation request and the spec: streaming,
//! usage, output length, the tokenizer against `usage`, the verify rules per variant.

use servebench_engines::{Profile, StreamUsage};
use servebench_result::checks::{CheckOutcome, CheckRecord, Guarantee};
use servebench_result::record::RequestRecord;
use servebench_spec::substitute::{Context, resolve as substitute};
use servebench_spec::{SpecFile, TokenizerSource, VerifyRule};

use super::super::checks::BlockPlan;
use super::{PROMPT, ProbeOptions};
use crate::dataset::{AnyCounter, ChatMessage, TokenCounter};
use crate::loadgen::ApiKind;

pub(super) fn streaming_check(
    rec: &RequestRecord,
    p: &Profile,
    asked: u32,
    deadline: std::time::Duration,
) -> CheckRecord {
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
        Some(kind) => {
            let got: u64 = rec.events.iter().map(|e| u64::from(e.tokens)).sum();
            let cut = if kind == servebench_result::record::ErrorKind::Timeout {
                let more = if got > u64::from(asked) {
                    format!(
                        "; it sent {got} tokens where {asked} were asked and did not end: the \
                         engine ignores max_tokens"
                    )
                } else {
                    format!("; {got} of the {asked} tokens asked had arrived: the stream stalled")
                };
                format!(
                    " — cut at the deadline of {} s (--deadline){more}",
                    deadline.as_secs_f64()
                )
            } else {
                String::new()
            };
            CheckRecord::new(
                g,
                CheckOutcome::Fails,
                format!(
                    "the request failed ({kind}): {}{cut}",
                    rec.error_detail.as_deref().unwrap_or("no detail")
                ),
            )
            .needed(true)
        }
    }
}

pub(super) fn usage_check(rec: &RequestRecord, p: &Profile) -> CheckRecord {
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

pub(super) fn length_check(
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
pub(super) async fn tokenize_check(
    spec: &SpecFile,
    plan: &BlockPlan,
    rec: &RequestRecord,
    api: ApiKind,
    p: &Profile,
    spec_given: bool,
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
    // An engine without a tokenize endpoint (its profile says so): a spec that asks for the
    // server's tokenizer fails here; without a spec it is only not available.
    if spec.spec.target.tokenizer == TokenizerSource::Server && !p.can_tokenize() {
        let detail = format!(
            "{} has no tokenize endpoint: prompt lengths need a local tokenizer",
            p.name
        );
        let set = "target.tokenizer: local with the served model's tokenizer.json";
        return if spec_given {
            CheckRecord::new(g, CheckOutcome::Fails, detail)
                .set(set)
                .needed(true)
        } else {
            CheckRecord::new(g, CheckOutcome::NotAvailable, detail).set(set)
        };
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
pub(super) async fn verify_check(opts: &ProbeOptions, spec: &SpecFile, p: &Profile) -> CheckRecord {
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
