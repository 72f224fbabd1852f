//! One block: start the variant's server (if the spec launches one), verify it, measure its
//! trials in plan order, stop it. Each trial is written to disk before the next starts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use servebench_spec::plan::{Block, Plan, PlannedTrial};
use servebench_spec::substitute::{Context, resolve};
use servebench_spec::{Spec, SpecFile, Variant};

use super::progress::Progress;
use super::setup::{now_rfc3339, rfc3339};
use super::workload::{PromptSource, api_kind, load_config, tokenizer};
use super::{RunError, RunOptions};
use crate::loadgen::{Target, run_trial};
use crate::result::{
    RequestLine, ResultStore, RunResult, ServerStart, TrialResult, TrialStatus, VerifyRecord,
};
use crate::server::{self, RunningServer, ServerLaunch};

/// What stays the same across blocks.
pub struct BlockContext<'a> {
    spec: &'a SpecFile,
    plan: &'a Plan,
    opts: &'a RunOptions,
    spec_dir: PathBuf,
    store: &'a ResultStore,
    api_key: Option<String>,
    /// Variants whose verify failed: not measured again in this run.
    refused: BTreeMap<String, String>,
}

impl<'a> BlockContext<'a> {
    /// Check what is needed before the first block (the API key).
    pub fn new(
        spec: &'a Spec,
        plan: &'a Plan,
        opts: &'a RunOptions,
        spec_dir: &Path,
        store: &'a ResultStore,
    ) -> Result<Self, RunError> {
        let api_key = match &spec.file.spec.target.api_key_env {
            Some(name) => Some(std::env::var(name).map_err(|_| {
                RunError::Setup(format!(
                    "the spec reads its API key from the environment variable `{name}` (target.api_key_env), which is not set: export it and run again"
                ))
            })?),
            None => None,
        };
        Ok(Self {
            spec: &spec.file,
            plan,
            opts,
            spec_dir: spec_dir.to_owned(),
            store,
            api_key,
            refused: BTreeMap::new(),
        })
    }

    fn variant(&self, name: &str) -> Option<&'a Variant> {
        self.spec.spec.variants.iter().find(|v| v.name == name)
    }

    fn cancelled(&self) -> bool {
        self.opts.cancel.load(Ordering::SeqCst)
    }

    /// Run one block's missing trials.
    pub async fn run_block(
        &mut self,
        block: &Block,
        result: &mut RunResult,
        ui: &mut Progress,
    ) -> Result<(), RunError> {
        let done: BTreeSet<usize> = result.trials.iter().map(|t| t.seq).collect();
        let todo: Vec<&PlannedTrial> = block
            .trials
            .iter()
            .filter(|t| !done.contains(&t.seq))
            .collect();
        if todo.is_empty() {
            return Ok(());
        }
        if let Some(reason) = self.refused.get(&block.variant).cloned() {
            return self.fail_all(&todo, block, result, &reason);
        }
        let Some(variant) = self.variant(&block.variant) else {
            return self.fail_all(&todo, block, result, "variant missing from the spec");
        };
        let mut running: Option<RunningServer> = None;
        let base_url = if let Some(server_spec) = &self.spec.spec.server {
            ui.line(&format!(
                "block {}: starting server for `{}`",
                block.index + 1,
                variant.name
            ));
            match self.start_server(block, variant, server_spec, result).await {
                Ok(s) => {
                    let url = self
                        .spec
                        .spec
                        .target
                        .base_url
                        .clone()
                        .unwrap_or_else(|| s.base_url());
                    running = Some(s);
                    url
                }
                Err(reason) => {
                    if self.cancelled() {
                        return Ok(());
                    }
                    ui.line(&format!("block {}: {reason}", block.index + 1));
                    return self.fail_all(&todo, block, result, &reason);
                }
            }
        } else {
            let raw = variant
                .base_url
                .clone()
                .or_else(|| self.spec.spec.target.base_url.clone())
                .unwrap_or_default();
            match resolve(
                &raw,
                &Context {
                    vars: Some(&variant.vars),
                    env: true,
                    ..Context::default()
                },
            ) {
                Ok(u) => u,
                Err(e) => return self.fail_all(&todo, block, result, &format!("target URL: {e}")),
            }
        };
        let target = Target {
            base_url: base_url.trim_end_matches('/').to_owned(),
            api: api_kind(self.spec.spec.target.api),
            model: self.spec.spec.target.model.clone(),
            api_key: self.api_key.clone(),
        };
        let cooldown = self.spec.spec.trials.cooldown.get();
        sleep_unless_cancelled(cooldown, self).await;
        let tok = tokenizer(self.spec, &target, &self.spec_dir);
        let mut source = PromptSource::new(self.spec, &self.plan.points, &tok, &self.spec_dir);
        let mut server_gone: Option<String> = None;
        for (i, t) in todo.iter().enumerate() {
            if self.cancelled() {
                break;
            }
            if i > 0 && !cooldown.is_zero() {
                sleep_unless_cancelled(cooldown, self).await;
            }
            if let Some(reason) = &server_gone {
                self.record(result, failed(t, block, reason), &[])?;
                continue;
            }
            ui.trial_start(t, &self.plan.points[t.point].to_string());
            let (trial, lines) = match &mut source {
                Err(e) => (failed(t, block, &format!("prompts: {e}")), Vec::new()),
                Ok(src) => match self.measure(t, block, src, &target, ui.trial_bar()).await {
                    Some(m) => m,
                    // Interrupted: not recorded, so `--resume` measures it again.
                    None => break,
                },
            };
            if let Some(s) = running.as_mut()
                && let Some(status) = exited_soon_after(s, &trial).await
            {
                let reason = format!(
                    "the server exited during the trial ({status}); see its log {}",
                    s.log_path().display()
                );
                server_gone = Some(reason.clone());
                let mut trial = trial;
                trial.status = TrialStatus::Failed;
                trial.failure = Some(reason);
                ui.trial_end(&trial);
                self.record(result, trial, &lines)?;
                continue;
            }
            ui.trial_end(&trial);
            self.record(result, trial, &lines)?;
        }
        if let Some(s) = running {
            ui.line(&format!("block {}: stopping server", block.index + 1));
            let report = server::stop(s).await;
            if let Some(rec) = result
                .servers
                .iter_mut()
                .rev()
                .find(|r| r.block == block.index)
            {
                rec.stop = Some(report);
            }
            result.updated_at = now_rfc3339();
            self.store.save(result)?;
        }
        Ok(())
    }

    async fn measure(
        &self,
        t: &PlannedTrial,
        block: &Block,
        source: &mut PromptSource,
        target: &Target,
        live: Option<indicatif::ProgressBar>,
    ) -> Option<(TrialResult, Vec<RequestLine>)> {
        let prompts = tokio::select! {
            p = source.trial_prompts(self.spec, t.trial, t.point) => p,
            _ = wait_cancel(self) => return None,
        };
        let prompts = match prompts {
            Ok(p) => p,
            Err(e) => return Some((failed(t, block, &format!("prompts: {e}")), Vec::new())),
        };
        let point = &self.plan.points[t.point];
        let cfg = load_config(self.spec, point, t.prompt_seed ^ 0x5ced_u64);
        let outcome = tokio::select! {
            r = run_trial(target, &cfg, &prompts) => r,
            _ = wait_cancel(self) => return None,
            _ = Progress::live_throughput(live) => return None,
        };
        Some(match outcome {
            Err(e) => (
                failed(t, block, &format!("load generator: {e}")),
                Vec::new(),
            ),
            Ok(o) => {
                let errors = o
                    .summary
                    .errors
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect();
                let mut lines = Vec::with_capacity(o.records.len() + o.warmup_records.len());
                for (warmup, recs) in [(true, &o.warmup_records), (false, &o.records)] {
                    lines.extend(recs.iter().map(|r| RequestLine {
                        seq: t.seq,
                        variant: t.variant.clone(),
                        trial: t.trial,
                        point: t.point,
                        warmup,
                        record: r.clone(),
                    }));
                }
                let trial = TrialResult {
                    seq: t.seq,
                    block: block.index,
                    variant: t.variant.clone(),
                    trial: t.trial,
                    point: t.point,
                    prompt_seed: t.prompt_seed,
                    status: TrialStatus::Ok,
                    failure: None,
                    started_at: rfc3339(o.started_at),
                    ended_at: rfc3339(o.ended_at),
                    errors,
                    summary: Some(o.summary),
                };
                (trial, lines)
            }
        })
    }

    fn record(
        &self,
        result: &mut RunResult,
        trial: TrialResult,
        lines: &[RequestLine],
    ) -> Result<(), RunError> {
        if !lines.is_empty() {
            self.store.append_requests(lines)?;
        }
        result.trials.push(trial);
        result.updated_at = now_rfc3339();
        self.store.save(result)?;
        Ok(())
    }

    fn fail_all(
        &self,
        todo: &[&PlannedTrial],
        block: &Block,
        result: &mut RunResult,
        reason: &str,
    ) -> Result<(), RunError> {
        for t in todo {
            result.trials.push(failed(t, block, reason));
        }
        result.updated_at = now_rfc3339();
        self.store.save(result)?;
        Ok(())
    }

    /// Start, wait for readiness, verify. On failure the server is stopped and the reason
    /// returned; a verify failure also refuses the variant for the rest of the run.
    async fn start_server(
        &mut self,
        block: &Block,
        variant: &Variant,
        server_spec: &servebench_spec::Server,
        result: &mut RunResult,
    ) -> Result<RunningServer, String> {
        let port = server::pick_free_port().map_err(|e| format!("no free port: {e}"))?;
        let ctx = Context {
            port: Some(port),
            servebench: Some(&self.opts.servebench_bin),
            vars: Some(&variant.vars),
            env: true,
        };
        let sub = |s: &str| resolve(s, &ctx).map_err(|e| format!("server block: {e}"));
        let mut argv = Vec::new();
        for a in server_spec
            .command
            .iter()
            .chain(&server_spec.args)
            .chain(&variant.server.args)
        {
            argv.push(sub(a)?);
        }
        let mut env = BTreeMap::new();
        for (k, v) in server_spec.env.iter().chain(&variant.server.env) {
            env.insert(k.clone(), sub(v)?);
        }
        let block_seed = block_seed(&result.run_id, block.index);
        env.insert("SERVEBENCH_RUN_ID".into(), result.run_id.clone());
        env.insert("SERVEBENCH_BLOCK".into(), block.index.to_string());
        env.insert("SERVEBENCH_BLOCK_SEED".into(), block_seed.to_string());
        let mut verify = server_spec.verify.clone();
        for r in &mut verify {
            if let Some(t) = &r.log_contains {
                r.log_contains = Some(sub(t)?);
            }
            if let Some(j) = &mut r.json {
                j.path = sub(&j.path)?;
                if let Some(s) = j.equals.as_str() {
                    j.equals = serde_json::Value::String(sub(s)?);
                }
            }
        }
        let log_dir = self.store.result_path.with_extension("logs");
        let log_path = log_dir.join(format!("block-{:03}-{}.log", block.index + 1, variant.name));
        let mut secrets: Vec<String> = self.api_key.iter().cloned().collect();
        secrets.extend(env_secret_values(server_spec, variant));
        let launch = ServerLaunch {
            argv: argv.clone(),
            env: env.clone(),
            working_dir: server_spec
                .working_dir
                .as_ref()
                .map(|w| self.spec_dir.join(w)),
            log_path: log_path.clone(),
            port,
            readiness: server_spec.readiness.clone(),
            verify: verify.clone(),
            stop: server_spec.stop.clone(),
            secret_values: secrets.clone(),
        };
        let mut record = ServerStart {
            block: block.index,
            variant: variant.name.clone(),
            argv: server::redact_argv(&argv, &secrets),
            env: server::redact_env(&env),
            pid: None,
            pgid: None,
            port,
            log_path: log_path.display().to_string(),
            started_at: now_rfc3339(),
            ready_after_s: None,
            verify: Vec::new(),
            info: None,
            stop: None,
            error: None,
        };
        let running = match server::start(&launch).await {
            Ok(s) => s,
            Err(e) => {
                record.error = Some(e.to_string());
                result.servers.push(record);
                let _ = self.store.save(result);
                return Err(format!("server did not start: {e}"));
            }
        };
        record.pid = Some(running.pid());
        record.pgid = Some(running.pgid());
        record.started_at = running.started_at().to_owned();
        record.ready_after_s = Some(running.ready_after().as_secs_f64());
        result.servers.push(record);
        let _ = self.store.save(result);
        let outcome = server::verify(&running, &verify).await;
        let info = server::server_info(&running).await;
        let (records, failure) = match outcome {
            Ok(outcomes) => (
                outcomes.iter().map(VerifyRecord::from).collect::<Vec<_>>(),
                None,
            ),
            Err(e) => {
                let mut recs: Vec<VerifyRecord> = e.passed.iter().map(VerifyRecord::from).collect();
                recs.extend(e.failures.iter().map(VerifyRecord::from));
                (recs, Some(e.to_string()))
            }
        };
        if let Some(rec) = result.servers.last_mut() {
            rec.verify = records;
            rec.info = info;
        }
        if let Some(reason) = failure {
            let reason = format!(
                "verify failed for variant `{}`: {reason}. The variant is not measured (its change may not be in effect)",
                variant.name
            );
            self.refused.insert(variant.name.clone(), reason.clone());
            let report = server::stop(running).await;
            if let Some(rec) = result.servers.last_mut() {
                rec.stop = Some(report);
                rec.error = Some(reason.clone());
            }
            let _ = self.store.save(result);
            return Err(reason);
        }
        Ok(running)
    }
}

/// The server's exit status if it has exited, or exits within 2 s of a trial that saw
/// connection failures (a dying server closes its socket before its process ends).
async fn exited_soon_after(
    s: &mut RunningServer,
    trial: &TrialResult,
) -> Option<crate::server::ExitRecord> {
    if let Some(e) = s.try_exit_status() {
        return Some(e);
    }
    let suspicious = trial
        .errors
        .keys()
        .any(|k| matches!(k.as_str(), "connect" | "transport" | "stream_disconnected"));
    if !suspicious {
        return None;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if let Some(e) = s.try_exit_status() {
            return Some(e);
        }
    }
    None
}

/// Values of `${env.*}` references in the server block: never recorded.
fn env_secret_values(server: &servebench_spec::Server, variant: &Variant) -> Vec<String> {
    use servebench_spec::substitute::{Reference, references};
    let strings = server
        .command
        .iter()
        .chain(&server.args)
        .chain(server.env.values())
        .chain(&variant.server.args)
        .chain(variant.server.env.values());
    let mut out = Vec::new();
    for s in strings {
        for r in references(s).unwrap_or_default() {
            if let Reference::Env(name) = r
                && let Ok(v) = std::env::var(&name)
                && !v.is_empty()
            {
                out.push(v);
            }
        }
    }
    out
}

/// Seed handed to each server start (`SERVEBENCH_BLOCK_SEED`): derived from the run id and
/// the block, so repeated starts of one variant really differ (A/A trials are not replays).
pub fn block_seed(run_id: &str, block: usize) -> u64 {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(format!("{run_id}/{block}").as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

fn failed(t: &PlannedTrial, block: &Block, reason: &str) -> TrialResult {
    let now = now_rfc3339();
    TrialResult {
        seq: t.seq,
        block: block.index,
        variant: t.variant.clone(),
        trial: t.trial,
        point: t.point,
        prompt_seed: t.prompt_seed,
        status: TrialStatus::Failed,
        failure: Some(reason.to_owned()),
        started_at: now.clone(),
        ended_at: now,
        errors: BTreeMap::new(),
        summary: None,
    }
}

async fn wait_cancel(ctx: &BlockContext<'_>) {
    while !ctx.cancelled() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn sleep_unless_cancelled(d: Duration, ctx: &BlockContext<'_>) {
    if d.is_zero() {
        return;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = wait_cancel(ctx) => {}
    }
}
