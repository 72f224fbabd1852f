//! The checks of a block's start that send no generation request: the engine, the model
//! among `/v1/models`, the tokenize endpoint, the context limit, the metrics endpoint, and
//! whether the request fields the engine takes can fix output lengths.

use std::path::Path;

use serde_json::Value;
use servebench_engines::{BodyPlan, Profile};
use servebench_result::checks::{CheckOutcome, CheckRecord, Guarantee};
use servebench_spec::{SpecFile, TokenizerSource};

use super::Endpoint;
use super::detect::Resolved;
use crate::dataset::{AnyCounter, TokenCounter, TokenizeStyle, TokenizerSpec};
use crate::loadgen::Target;
use crate::server::ContextLimit;

/// What a block sends, decided by the engine's profile from the spec.
#[derive(Debug, Clone)]
pub struct BlockPlan {
    /// The request fields.
    pub body: BodyPlan,
    /// Where prompts are counted.
    pub tokenizer: TokenizerSpec,
    /// Where the engine serves its Prometheus metrics and their names (telemetry scrapes
    /// them), where its profile knows, with the path to scrape for the spec's model.
    pub metrics: Option<(servebench_engines::MetricsFacts, String)>,
    /// The engine's profile, by which the trials' streams are read (its finish words, a
    /// stream it cuts on a generation error).
    pub profile: &'static Profile,
}

impl BlockPlan {
    /// What requests to `target` carry and where their prompts are counted, by the engine's
    /// `profile`, for what the spec asks (`workload.ignore_eos`, `send_min_tokens`,
    /// `target.tokenizer`; a local `tokenizer_path` is read from `spec_dir`).
    pub fn new(
        spec: &SpecFile,
        target: &Target,
        spec_dir: &Path,
        profile: &'static Profile,
    ) -> Self {
        let w = &spec.spec.workload;
        BlockPlan {
            body: profile.body_plan(w.ignore_eos, w.send_min_tokens),
            tokenizer: tokenizer(spec, target, spec_dir, profile),
            metrics: profile.metrics.zip(profile.metrics_path(&target.model)),
            profile,
        }
    }
}

/// The tokenizer the spec asks for, pointed at `target`: the server's where its engine
/// `profile` says it tokenizes.
fn tokenizer(
    spec: &SpecFile,
    target: &Target,
    spec_dir: &Path,
    profile: &Profile,
) -> TokenizerSpec {
    // An engine without one (transformers serve) is refused by the block's checks; the
    // generic endpoint is named so the message says where it was looked for.
    let t = profile.tokenize.or(servebench_engines::GENERIC.tokenize);
    // `request_body` fields that change how a chat prompt renders go to the chat endpoint
    // where the profile says it takes them; otherwise chat prompts are not counted there
    // (their lengths are estimates, docs/spec.md "Request bodies").
    let chat_fields = spec.workload_render_fields();
    let names: Vec<&str> = chat_fields.keys().map(String::as_str).collect();
    let renders = profile.tokenize.is_none() || profile.tokenizes_with(&names);
    match spec.spec.target.tokenizer {
        TokenizerSource::Server => TokenizerSpec::Server {
            base_url: target.base_url.clone(),
            path: t.map_or("/tokenize", |t| t.path).into(),
            style: t.map_or(TokenizeStyle::Auto, |t| t.body.into()),
            chat_path: t
                .and_then(|t| t.chat_path)
                .filter(|_| renders)
                .map(str::to_owned),
            chat_fields,
            model: Some(target.model.clone()),
            api_key: target.api_key.clone(),
            headers: target.headers.clone(),
            ca_file: target.ca_file.clone(),
        },
        TokenizerSource::Local => TokenizerSpec::Local {
            path: spec_dir.join(spec.spec.target.tokenizer_path.clone().unwrap_or_default()),
        },
        TokenizerSource::None => TokenizerSpec::None,
    }
}

/// The model ids of a `/v1/models` answer.
fn model_ids(models: &Value) -> Vec<&str> {
    models
        .get("data")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|m| m.get("id").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// `target.model: auto`: the one model a `/v1/models` answer lists (`models`: the list, or
/// what the server answered instead, [`super::Resolved::model_list`]); an error saying what
/// it lists (none, or several by name) or what was answered instead otherwise.
pub fn auto_model(models: Result<&Value, &str>) -> Result<String, String> {
    let models = models.map_err(|seen| {
        format!(
            "`target.model: auto`, but /v1/models gave no model list ({seen}): name the model \
             in `target.model` (--set target.model=NAME), or check `target.base_url`"
        )
    })?;
    match model_ids(models).as_slice() {
        [only] => Ok((*only).to_owned()),
        [] => Err(
            "`target.model: auto`, but GET /v1/models lists no model: name it in `target.model`"
                .into(),
        ),
        many => Err(format!(
            "`target.model: auto`, but GET /v1/models lists {} models ({}): name one in \
             `target.model` (--set target.model=NAME)",
            many.len(),
            many.iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Whether `model` is among a `/v1/models` answer (`models`: the list, or what the server
/// answered instead), needed where the engine refuses a request for a model it does not
/// serve (`profile.request.checks_model`); the others answer any name with their one model.
pub fn model_check(models: Result<&Value, &str>, model: &str, profile: &Profile) -> CheckRecord {
    let models = match models {
        Ok(m) => m,
        Err(seen) => {
            return CheckRecord::new(
                Guarantee::ModelServed,
                CheckOutcome::NotAvailable,
                format!("/v1/models gave no model list: {seen}"),
            );
        }
    };
    let ids = model_ids(models);
    if ids.contains(&model) {
        return CheckRecord::new(
            Guarantee::ModelServed,
            CheckOutcome::Holds,
            format!("`{model}` is among /v1/models"),
        )
        .needed(true);
    }
    let served = ids
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let router = servebench_engines::detect::is_router(models);
    if !profile.request.checks_model && !router {
        return CheckRecord::new(
            Guarantee::ModelServed,
            CheckOutcome::Holds,
            format!(
                "`{model}` is not among /v1/models ({served}), but {} does not check the \
                 requested name: its one model answers",
                profile.name
            ),
        );
    }
    let mut c = CheckRecord::new(
        Guarantee::ModelServed,
        CheckOutcome::Fails,
        format!("the server serves {served}, not `{model}`: every request would be refused"),
    )
    .needed(true);
    if let [only] = ids.as_slice() {
        c = c.set(format!("target.model: {only} (--set target.model={only})"));
    }
    c
}

/// The output-length plan as a check: fixed by a field the engine honours, or not.
fn length_check(profile: &Profile, body: &BodyPlan, asked: bool) -> CheckRecord {
    let g = Guarantee::OutputLength;
    if !asked {
        return CheckRecord::new(
            g,
            CheckOutcome::NotAvailable,
            "not asked (`workload.ignore_eos: false`): outputs end at the model's end of sequence",
        );
    }
    let how = if body.ignore_eos {
        format!("`ignore_eos: true` ({} honours it)", profile.name)
    } else if body.generation_config {
        "`generation_config` with min_new_tokens = max_new_tokens".to_owned()
    } else {
        String::new()
    };
    if body.lengths_fixed {
        CheckRecord::new(
            g,
            CheckOutcome::Holds,
            format!("fixed by {how}; each request's N_out is checked against its max_tokens"),
        )
    } else {
        CheckRecord::new(
            g,
            CheckOutcome::NotAvailable,
            body.warnings.first().cloned().unwrap_or_default(),
        )
        .set("workload.ignore_eos: false (lengths then vary, and are measured)")
    }
}

/// Every check of a block's start, and the context limit read. `tokenizer`: the spec's, when
/// it is the server's (`None` for a local tokenizer or none).
pub async fn block_checks(
    ep: &Endpoint,
    resolved: &Resolved,
    model: &str,
    plan: &BlockPlan,
    ignore_eos: bool,
) -> (Vec<CheckRecord>, Option<ContextLimit>) {
    let p = resolved.profile;
    let mut out = vec![
        CheckRecord::new(
            Guarantee::Engine,
            CheckOutcome::Holds,
            resolved.record.describe(),
        ),
        model_check(resolved.model_list(), model, p),
        length_check(p, &plan.body, ignore_eos),
    ];
    out.push(tokenize_check(p, &plan.tokenizer).await);
    let limit = crate::server::context_limit(ep.reach(), p, model).await;
    out.push(match &limit {
        Some(l) => CheckRecord::new(
            Guarantee::ContextLimit,
            CheckOutcome::Holds,
            format!("{} tokens ({})", l.tokens, l.source),
        ),
        None => CheckRecord::new(
            Guarantee::ContextLimit,
            CheckOutcome::NotAvailable,
            format!(
                "{} says no limit servebench can read: a request longer than it takes fails on \
                 its own, not before the trial",
                p.name
            ),
        ),
    });
    out.push(metrics_check(ep, p, model).await);
    (out, limit)
}

/// One count through the tokenizer a block uses.
async fn tokenize_check(p: &Profile, tokenizer: &TokenizerSpec) -> CheckRecord {
    let g = Guarantee::Tokenize;
    let TokenizerSpec::Server { path, .. } = tokenizer else {
        return CheckRecord::new(
            g,
            CheckOutcome::NotAvailable,
            "not used (`target.tokenizer` is not `server`)",
        );
    };
    if !p.can_tokenize() {
        return CheckRecord::new(
            g,
            CheckOutcome::Fails,
            format!(
                "{} has no tokenize endpoint, so no prompt can be counted",
                p.name
            ),
        )
        .set("target.tokenizer: local with target.tokenizer_path: the model's tokenizer.json")
        .needed(true);
    }
    let text = "The quick brown fox jumps over the lazy dog";
    let counted = match AnyCounter::from_spec(tokenizer) {
        Ok(mut c) => c.count(text).await,
        Err(e) => Err(e),
    };
    match counted {
        Ok(n) => CheckRecord::new(
            g,
            CheckOutcome::Holds,
            format!("POST {path} answers ({n} tokens for a 9-word text)"),
        )
        .needed(true),
        Err(e) => CheckRecord::new(g, CheckOutcome::Fails, e.to_string())
            .set("target.tokenizer: local with the model's tokenizer.json")
            .needed(true),
    }
}

/// Whether the engine's Prometheus endpoint answers for `model`, with the series its profile
/// names; an endpoint that answers without them says what to set.
pub(crate) async fn metrics_check(ep: &Endpoint, p: &Profile, model: &str) -> CheckRecord {
    let g = Guarantee::Metrics;
    let (Some(m), Some(path)) = (p.metrics, p.metrics_path(model)) else {
        return CheckRecord::new(
            g,
            CheckOutcome::NotAvailable,
            format!(
                "{} serves no Prometheus metrics servebench knows of",
                p.name
            ),
        );
    };
    let client = match crate::server::probe_client(ep.ca_file.as_deref()) {
        Ok(c) => c,
        Err(e) => return CheckRecord::new(g, CheckOutcome::Fails, e),
    };
    match get_text(&client, ep, &path).await {
        Ok((s, body)) if (200..300).contains(&s) => metrics_body(&m, &path, &body),
        Ok((s, _)) => {
            let c = CheckRecord::new(
                g,
                CheckOutcome::NotAvailable,
                format!("GET {path} answered HTTP {s}"),
            );
            match m.enable {
                Some(e) => c.set(format!("start the server with {e}")),
                None => c,
            }
        }
        Err(e) => CheckRecord::new(g, CheckOutcome::Fails, e),
    }
}

/// The metrics check of an answer `body` of `path`.
pub(crate) fn metrics_body(
    m: &servebench_engines::MetricsFacts,
    path: &str,
    body: &str,
) -> CheckRecord {
    let g = Guarantee::Metrics;
    if let Some(w) = m.written_on_finish
        && !crate::telemetry::prom::has_sample(body, w)
    {
        return CheckRecord::new(
            g,
            CheckOutcome::NotAvailable,
            format!(
                "GET {path} answers, but not yet with any series: the engine writes them only \
                 once a request has finished ({w} has no sample), so they are judged by the \
                 trials' telemetry"
            ),
        );
    }
    let names = crate::telemetry::prom::MetricNames::of(m, path.to_owned());
    let missing = crate::telemetry::prom::missing(body, &names);
    let updated = m
        .updated
        .map_or_else(String::new, |u| format!("; they are updated {u}"));
    if missing.is_empty() {
        return CheckRecord::new(
            g,
            CheckOutcome::Holds,
            format!(
                "GET {path} answers with {} and {}{updated}",
                m.running, m.waiting
            ),
        );
    }
    let c = CheckRecord::new(
        g,
        CheckOutcome::Fails,
        format!(
            "GET {path} answers without {}: telemetry would record none of it{updated}",
            missing.join(", ")
        ),
    );
    match m.series_need.or(m.enable) {
        Some(s) => c.set(s),
        None => c,
    }
}

/// One GET of `path` as text.
async fn get_text(
    client: &reqwest::Client,
    ep: &Endpoint,
    path: &str,
) -> Result<(u16, String), String> {
    let url = crate::server::probe_url(&ep.base_url, path);
    let mut req = client.get(&url).timeout(std::time::Duration::from_secs(5));
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
    let text = resp.text().await.unwrap_or_default();
    Ok((status, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_model_not_served_is_named_with_what_is() {
        // The simulator's answer (crates/sim/src/server/endpoints.rs) to a spec asking for
        // `default` while it serves `sim-model`.
        let models = json!({"object": "list", "data": [{"id": "sim-model", "object": "model", "owned_by": "servebench-sim"}]});
        let sim = servebench_engines::GENERIC;
        let c = model_check(Ok(&models), "default", &sim);
        assert_eq!(c.outcome, CheckOutcome::Fails);
        assert!(c.is_blocking());
        assert!(
            c.detail.contains("`sim-model`, not `default`"),
            "{}",
            c.detail
        );
        assert_eq!(
            c.set.as_deref(),
            Some("target.model: sim-model (--set target.model=sim-model)")
        );
        assert_eq!(
            model_check(Ok(&models), "sim-model", &sim).outcome,
            CheckOutcome::Holds
        );
        assert_eq!(
            model_check(Err("GET /v1/models answered HTTP 404"), "m", &sim).outcome,
            CheckOutcome::NotAvailable
        );
        // llama.cpp (llama-cpp-python 0.3.36, tools/server/server-common.cpp:1487) lists the
        // model's path and echoes whatever name a request sends: not a failure.
        let llama =
            servebench_engines::profile(servebench_engines::Engine::Llamacpp).expect("profile");
        let models = json!({"object": "list", "data": [{"id": "/models/gemma.gguf", "object": "model", "owned_by": "llamacpp"}]});
        let c = model_check(Ok(&models), "gemma", llama);
        assert_eq!(c.outcome, CheckOutcome::Holds);
        assert!(
            !c.is_blocking() && c.detail.contains("does not check"),
            "{}",
            c.detail
        );
    }

    /// TensorRT-LLM writes every series when a request finishes (metrics/collector.py), so a
    /// freshly started server's `/prometheus/metrics` has none: before, the block's check
    /// (run before any request) failed and told the user to set `enable_iter_perf_stats`
    /// even when it was set. After requests, the transcripts still tell the two apart.
    #[test]
    fn trtllms_series_are_not_judged_before_a_request_has_finished() {
        let m = servebench_engines::profile(servebench_engines::Engine::Trtllm)
            .and_then(|p| p.metrics)
            .expect("trtllm metrics");
        let fixture = |f: &str| {
            std::fs::read_to_string(format!(
                "{}/../engines/src/trtllm/transcripts/050f80de/{f}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .expect("fixture")
        };
        let path = "/prometheus/metrics";
        // What a multiprocess prometheus_client serves with no sample written: nothing.
        let fresh = metrics_body(&m, path, "");
        assert_eq!(
            fresh.outcome,
            CheckOutcome::NotAvailable,
            "{}",
            fresh.detail
        );
        assert!(
            fresh.detail.contains("once a request has finished"),
            "{}",
            fresh.detail
        );
        let perf_only = metrics_body(&m, path, &fixture("prometheus-metrics-perf-only.txt"));
        assert_eq!(
            perf_only.outcome,
            CheckOutcome::Fails,
            "{}",
            perf_only.detail
        );
        assert!(
            perf_only
                .set
                .as_deref()
                .is_some_and(|s| s.contains("enable_iter_perf_stats")),
            "{perf_only:?}"
        );
        let iter = metrics_body(&m, path, &fixture("prometheus-metrics-iter-stats.txt"));
        assert_eq!(iter.outcome, CheckOutcome::Holds, "{}", iter.detail);
    }
}
