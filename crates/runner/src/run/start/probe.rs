//! The output-equivalence probe (`spec.equivalence`, docs/equivalence.md): after a block's
//! server is up and before its trials, the same fixed prompts are sent greedily
//! (`temperature: 0`, a fixed `seed`) at each probe concurrency, non-streamed, asking for
//! token ids and log-probabilities as the engine's profile says they are asked
//! (`Profile::outputs`), and every completion is recorded in `result.equivalence`. A resumed
//! run does not probe a block already probed.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use servebench_engines::{LogprobsAsk, Profile};
use servebench_result::{ProbeOutput, ProbeRecord, now_rfc3339};
use servebench_spec::{Equivalence, SpecFile};

use super::super::recorder::Recorder;
use super::super::workload::PromptSource;
use super::{Start, StartContext};
use crate::dataset::{PromptBody, load_jsonl};
use crate::loadgen::{ApiKind, Target};
use crate::reference::{AnswerRule, load_reference};

/// The trial index the probe's prompts are drawn with: trials count from 1, so the probe's
/// prompts are none of a trial's, and the same at every block and variant.
const PROBE_TRIAL: u32 = 0;

/// The warm-up prompt: not one of the probe's.
const WARMUP_PROMPT: &str = "Count from one to ten.";

impl StartContext<'_> {
    /// Probe the block's server (when the spec asks and this block has no probe yet).
    pub(super) async fn probe(
        &self,
        start: &Start<'_>,
        rec: &mut Recorder<'_>,
    ) -> Result<(), super::super::RunError> {
        let Some(eq) = &self.spec.spec.equivalence else {
            return Ok(());
        };
        let (block, target, profile) = (start.block, &start.target, start.profile);
        if rec
            .result()
            .equivalence
            .iter()
            .any(|r| r.block == block.index)
        {
            return Ok(());
        }
        let ui = rec.reporter();
        let ready = match self.probe_prompts(eq).await {
            Ok(p) => crate::server::probe_client(target.ca_file.as_deref()).map(|c| (p, c)),
            Err(why) => Err(why),
        };
        let ((prompts, rules), client) = match ready {
            Ok(r) => r,
            Err(why) => {
                // Said even with `-q`: the result will have no probe for this block, and an
                // output gate on it fails as unjudged (docs/ci.md).
                ui.warn(&format!(
                    "block {}: equivalence probe not sent: {why}",
                    block.index + 1
                ));
                return Ok(());
            }
        };
        let timeout = self.spec.spec.workload.request_timeout.get();
        let asker = Arc::new(Asker {
            client,
            target: target.clone(),
            profile,
            eq: eq.clone(),
            timeout,
            extra: self.spec.request_body(&block.variant),
        });
        for _ in 0..eq.warmup_requests {
            if self.cancelled() {
                return Ok(());
            }
            let _ = asker.ask(&PromptBody::Text(WARMUP_PROMPT.to_owned())).await;
        }
        let repetition = block.trials.first().map_or(0, |t| t.trial);
        let mut records = Vec::new();
        for &c in &eq.concurrency {
            if self.cancelled() {
                break;
            }
            let started_at = now_rfc3339();
            let mut outputs = asker.clone().all(&prompts, c).await;
            let right = score(&mut outputs, &rules);
            let compared_by = if outputs.iter().all(|o| o.token_ids.is_some()) {
                "token_ids"
            } else if outputs.iter().all(|o| o.tokens.is_some()) {
                "tokens"
            } else {
                "text"
            };
            let failed = outputs.iter().filter(|o| o.error.is_some()).count();
            ui.line(&format!(
                "block {}: equivalence probe at concurrency {c}: {} prompts{}{}",
                block.index + 1,
                outputs.len(),
                if failed > 0 {
                    format!(", {failed} failed")
                } else {
                    String::new()
                },
                right.map_or(String::new(), |(r, n)| format!(
                    ", {r} of {n} answered right"
                ))
            ));
            records.push(ProbeRecord {
                block: block.index,
                variant: block.variant.clone(),
                repetition,
                concurrency: c,
                started_at,
                compared_by: compared_by.to_owned(),
                outputs,
            });
        }
        rec.update(|r| r.equivalence.extend(records))?;
        Ok(())
    }

    /// The probe's prompts, and with `reference` each one's answer rule: a reference file's
    /// or a prompt file's lines, else drawn from the workload's dataset at its first point
    /// with a fixed trial index.
    async fn probe_prompts(&self, eq: &Equivalence) -> Result<(Vec<PromptBody>, Rules), String> {
        if let Some(file) = &eq.reference {
            let mut items = load_reference(&self.spec_dir.join(file)).map_err(|e| e.to_string())?;
            if let Some(n) = eq.prompts {
                items.truncate(n as usize);
            }
            return Ok(items.into_iter().map(|i| (i.prompt, Some(i.rule))).unzip());
        }
        let no_rules = |p: Vec<PromptBody>| {
            let n = p.len();
            (p, vec![None; n])
        };
        if let Some(file) = &eq.prompts_file {
            let path = self.spec_dir.join(file);
            let mut out = read_prompt_lines(&path)?;
            if let Some(n) = eq.prompts {
                out.truncate(n as usize);
            }
            return Ok(no_rules(out));
        }
        let n = eq.prompts.unwrap_or(servebench_spec::DEFAULT_PROBE_PROMPTS) as usize;
        let tok = self.tokenizer_spec();
        let mut source = PromptSource::new(self.spec, &self.plan.points, &tok, &self.spec_dir)
            .map_err(|e| format!("prompts: {e}"))?;
        let drawn = source
            .trial_prompts(&probe_spec(self.spec), PROBE_TRIAL, 0, n)
            .await
            .map_err(|e| format!("prompts: {e}"))?;
        if drawn.measured.is_empty() {
            return Err(
                "the workload's dataset gives no single prompts (a multi_turn dataset): give \
                 `equivalence.prompts_file`"
                    .into(),
            );
        }
        Ok(no_rules(
            drawn.measured.into_iter().map(|p| p.body).collect(),
        ))
    }
}

/// Each probe prompt's answer rule (`None` without a reference).
type Rules = Vec<Option<AnswerRule>>;

/// Scores every answered completion that has a rule; `(right, scored)` when any was.
fn score(outputs: &mut [ProbeOutput], rules: &Rules) -> Option<(usize, usize)> {
    let (mut right, mut scored) = (0, 0);
    for o in outputs.iter_mut() {
        let Some(Some(rule)) = rules.get(o.prompt) else {
            continue;
        };
        if o.error.is_some() {
            continue;
        }
        let Some(text) = &o.text else { continue };
        let ok = rule.is_right(text);
        o.correct = Some(ok);
        scored += 1;
        right += usize::from(ok);
    }
    (scored > 0).then_some((right, scored))
}

/// The spec with no warm-up requests, so the prompts drawn are exactly the probe's.
fn probe_spec(spec: &SpecFile) -> SpecFile {
    let mut s = spec.clone();
    s.spec.workload.warmup_requests = 0;
    s
}

/// The prompts of a JSONL prompt file (`equivalence.prompts_file`), read by the workload's
/// own reader ([`load_jsonl`]: every bad line refused at its number with what to write;
/// other fields, such as a reference's `answer` or `regex`, are ignored).
fn read_prompt_lines(path: &std::path::Path) -> Result<Vec<PromptBody>, String> {
    let entries = load_jsonl(path).map_err(|e| e.to_string())?;
    if let Some(e) = entries.iter().find(|e| !e.images.is_empty()) {
        return Err(format!(
            "{}:{}: {}",
            path.display(),
            e.line,
            crate::dataset::file_images::IMAGES_IN_PROBE
        ));
    }
    let out: Vec<PromptBody> = entries.into_iter().map(|e| e.body).collect();
    if out.is_empty() {
        return Err(format!("{}: no prompts", path.display()));
    }
    Ok(out)
}

/// What one probe request needs.
struct Asker {
    client: reqwest::Client,
    target: Target,
    profile: &'static Profile,
    eq: Equivalence,
    timeout: Duration,
    /// The variant's `request_body` (docs/spec.md, "Request bodies").
    extra: Map<String, Value>,
}

impl Asker {
    /// Every prompt at `concurrency` requests in flight, in prompt order.
    async fn all(self: Arc<Self>, prompts: &[PromptBody], concurrency: u32) -> Vec<ProbeOutput> {
        let gate = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1) as usize));
        let mut tasks = tokio::task::JoinSet::new();
        for (i, p) in prompts.iter().enumerate() {
            let (me, gate, p) = (self.clone(), gate.clone(), p.clone());
            tasks.spawn(async move {
                let _permit = gate.acquire_owned().await;
                let mut out = me.ask(&p).await;
                out.prompt = i;
                out
            });
        }
        let mut outs = Vec::with_capacity(prompts.len());
        while let Some(r) = tasks.join_next().await {
            if let Ok(o) = r {
                outs.push(o);
            }
        }
        outs.sort_by_key(|o| o.prompt);
        outs
    }

    /// One prompt's greedy completion.
    async fn ask(&self, prompt: &PromptBody) -> ProbeOutput {
        let chat = self.target.api == ApiKind::Chat;
        let body = request_body(
            &self.target.model,
            prompt,
            chat,
            self.profile,
            &self.eq,
            &self.extra,
        );
        let url = crate::server::probe_url(&self.target.base_url, self.target.api.path());
        let mut req = self.client.post(url).timeout(self.timeout).json(&body);
        if let Some(k) = &self.target.api_key {
            req = req.bearer_auth(k);
        }
        for (k, v) in &self.target.headers {
            req = req.header(k, v);
        }
        let failed = |why: String| ProbeOutput {
            prompt: 0,
            text: None,
            token_ids: None,
            logprobs: None,
            tokens: None,
            error: Some(why),
            correct: None,
        };
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => return failed(format!("request: {e}")),
        };
        let status = resp.status();
        let v: Value = match resp.json().await {
            Ok(v) => v,
            Err(e) => return failed(format!("HTTP {status}: body: {e}")),
        };
        if !status.is_success() {
            return failed(format!("HTTP {status}: {}", short(&v.to_string())));
        }
        parse_completion(&v, chat, self.profile)
    }
}

fn short(s: &str) -> String {
    s.chars().take(200).collect()
}

/// The non-streamed greedy request of one probe prompt, with the log-probability and
/// token-id fields the engine takes on this API. The variant's `request_body` (`extra`) is
/// carried, under the probe's own fields: what makes the answer greedy and comparable
/// (model, prompt, `max_tokens`, `temperature`, `stream`, `seed`, log-probabilities, token
/// ids) is never the spec's.
pub(crate) fn request_body(
    model: &str,
    prompt: &PromptBody,
    chat: bool,
    profile: &Profile,
    eq: &Equivalence,
    extra: &Map<String, Value>,
) -> Value {
    let mut b = Map::new();
    servebench_spec::request_body::apply(&mut b, extra);
    for owned in [
        "min_tokens",
        "ignore_eos",
        "stream_options",
        "generation_config",
    ] {
        b.remove(owned);
    }
    b.insert("model".into(), json!(model));
    match (prompt, chat) {
        (PromptBody::Text(t), false) => {
            b.insert("prompt".into(), json!(t));
        }
        (PromptBody::Text(t), true) => {
            b.insert("messages".into(), json!([{"role": "user", "content": t}]));
        }
        (PromptBody::Messages(m), _) => {
            // The completions API takes no messages: their contents, in order, as one text.
            if chat {
                b.insert("messages".into(), json!(m));
            } else {
                let joined: Vec<&str> = m.iter().map(|x| x.content.as_str()).collect();
                b.insert("prompt".into(), json!(joined.join("\n")));
            }
        }
    }
    b.insert("max_tokens".into(), json!(eq.output_tokens));
    b.insert("temperature".into(), json!(0));
    b.insert("stream".into(), json!(false));
    let facts = &profile.outputs;
    if facts.seed {
        b.insert("seed".into(), json!(eq.seed));
    }
    let api = facts.api(chat);
    let top = eq.top_logprobs.min(api.top_max);
    match api.logprobs {
        LogprobsAsk::None => {}
        // llama.cpp reads `logprobs: N` as `n_probs` and sends none at 0: ask at least 1.
        LogprobsAsk::Count => {
            b.insert("logprobs".into(), json!(top.max(1)));
        }
        LogprobsAsk::Flag => {
            b.insert("logprobs".into(), json!(true));
            if top > 0 {
                b.insert("top_logprobs".into(), json!(top));
            }
        }
    }
    if let Some(ids) = api.token_ids {
        b.insert(ids.request.into(), json!(true));
    }
    Value::Object(b)
}

/// A non-streamed completion's text, token ids and chosen tokens' log-probabilities.
pub(crate) fn parse_completion(v: &Value, chat: bool, profile: &Profile) -> ProbeOutput {
    let choice = v.pointer("/choices/0").cloned().unwrap_or(Value::Null);
    let text = if chat {
        choice.pointer("/message/content").and_then(Value::as_str)
    } else {
        choice.get("text").and_then(Value::as_str)
    }
    .map(str::to_owned);
    let mut token_ids = profile
        .outputs
        .api(chat)
        .token_ids
        .and_then(|f| choice.get(f.response))
        .and_then(Value::as_array)
        .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>());
    let (mut logprobs, mut tokens) = (None, None);
    if let Some(Value::Object(lp)) = choice.get("logprobs") {
        if let Some(content) = lp.get("content").and_then(Value::as_array) {
            // The chat form (and llama.cpp's on both APIs): one entry per token.
            logprobs = content
                .iter()
                .map(|e| e.get("logprob").and_then(Value::as_f64))
                .collect();
            tokens = content
                .iter()
                .map(|e| e.get("token").and_then(Value::as_str).map(str::to_owned))
                .collect();
            if token_ids.is_none() {
                token_ids = content
                    .iter()
                    .map(|e| e.get("id").and_then(Value::as_u64))
                    .collect();
            }
        } else {
            // The legacy completions form.
            logprobs = lp
                .get("token_logprobs")
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(Value::as_f64).collect());
            tokens = lp
                .get("tokens")
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(|t| t.as_str().map(str::to_owned)).collect());
        }
    }
    let error = text
        .is_none()
        .then(|| format!("no completion text in {}", short(&v.to_string())));
    ProbeOutput {
        prompt: 0,
        text,
        token_ids,
        logprobs,
        tokens,
        error,
        correct: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use servebench_engines::Engine;
    use servebench_engines::profile;

    #[test]
    fn a_prompts_file_is_read_and_refused_as_the_workload_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.jsonl");
        std::fs::write(
            &path,
            "{\"prompt\": \"a\", \"answer\": \"x\"}\r\n\n{\"messages\": [{\"role\": \"user\", \"content\": \"b\"}]}\n",
        )
        .unwrap();
        let got = read_prompt_lines(&path).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], PromptBody::Text("a".into()));
        // An empty prompt and a line with both fields were sent as they were before.
        for bad in [
            "{\"prompt\": \"  \"}\n",
            "{\"prompt\": \"a\", \"messages\": []}\n",
        ] {
            std::fs::write(&path, format!("{{\"prompt\": \"ok\"}}\n{bad}")).unwrap();
            let e = read_prompt_lines(&path).unwrap_err();
            assert!(e.contains("p.jsonl:2:"), "{e}");
        }
        std::fs::write(&path, "\n").unwrap();
        assert!(read_prompt_lines(&path).unwrap_err().contains("no prompts"));
    }

    #[test]
    fn the_body_asks_each_engine_in_its_own_form() {
        let eq = Equivalence::default();
        let p = PromptBody::Text("hi".into());
        let llama = profile(Engine::Llamacpp).expect("profile");
        let b = request_body("m", &p, false, llama, &eq, &Map::new());
        assert_eq!(b["logprobs"], json!(5));
        assert_eq!(b["temperature"], json!(0));
        assert_eq!(b["stream"], json!(false));
        let vllm = profile(Engine::Vllm).expect("profile");
        let b = request_body("m", &p, true, vllm, &eq, &Map::new());
        assert_eq!(b["logprobs"], json!(true));
        assert_eq!(b["top_logprobs"], json!(5));
        assert_eq!(b["return_token_ids"], json!(true));
        let tf = profile(Engine::Transformers).expect("profile");
        let b = request_body("m", &p, true, tf, &eq, &Map::new());
        assert!(b.get("logprobs").is_none(), "{b}");
        // The spec's body is carried; the fields that make the probe greedy stay its own.
        let extra = json!({"chat_template_kwargs": {"enable_thinking": false},
            "temperature": 0.7, "seed": 9, "max_tokens": 3, "top_k": 1});
        let b = request_body("m", &p, true, vllm, &eq, extra.as_object().expect("map"));
        assert_eq!(b["chat_template_kwargs"], json!({"enable_thinking": false}));
        assert_eq!(b["top_k"], json!(1));
        assert_eq!(b["temperature"], json!(0));
        assert_eq!(b["seed"], json!(eq.seed));
        assert_eq!(b["max_tokens"], json!(eq.output_tokens));
    }

    #[test]
    fn llamacpp_ids_come_from_its_logprob_entries_and_legacy_tokens_are_read() {
        let llama = profile(Engine::Llamacpp).expect("profile");
        let v = json!({"choices": [{"text": "a b", "logprobs": {"content": [
            {"id": 7, "token": "a", "logprob": -0.1},
            {"id": 9, "token": " b", "logprob": -0.5}]}}]});
        let o = parse_completion(&v, false, llama);
        assert_eq!(o.token_ids, Some(vec![7, 9]));
        assert_eq!(o.logprobs, Some(vec![-0.1, -0.5]));
        let generic = &servebench_engines::GENERIC;
        let v = json!({"choices": [{"text": "a b", "logprobs": {
            "tokens": ["a", " b"], "token_logprobs": [-0.1, -0.2]}}]});
        let o = parse_completion(&v, false, generic);
        assert_eq!(o.tokens, Some(vec!["a".to_owned(), " b".to_owned()]));
        assert_eq!(o.token_ids, None);
        let o = parse_completion(&json!({"error": "x"}), true, generic);
        assert!(o.error.is_some());
    }
}
