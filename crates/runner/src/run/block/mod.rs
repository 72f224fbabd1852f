//! One block: start the variant's server (if the spec launches one), verify it, measure its
//! trials in plan order, stop it. Each trial is written to disk before the next starts.

mod kernels;
mod launch;
mod measure;
mod preflight;
mod probe;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use servebench_spec::plan::{Block, Plan, PlannedTrial};
use servebench_spec::substitute::{Context, resolve};
use servebench_spec::{Spec, SpecFile, Variant};

use super::progress::Progress;
use super::workload::{PromptSource, api_kind};
use super::{RunError, RunOptions};
use crate::dataset::TokenizerSpec;
use crate::engine::BlockPlan;
use crate::loadgen::Target;
use crate::server::{self, RunningServer};
use servebench_result::now_rfc3339;
use servebench_result::{RequestLine, ResultStore, RunResult, TrialResult, TrialStatus};

/// What stays the same across blocks.
pub(super) struct BlockContext<'a> {
    spec: &'a SpecFile,
    plan: &'a Plan,
    opts: &'a RunOptions,
    spec_dir: PathBuf,
    store: &'a ResultStore,
    api_key: Option<String>,
    /// `target.headers` with `${env.NAME}` resolved; never written anywhere.
    pub(super) headers: Vec<(String, String)>,
    /// Variants whose verify failed: not measured again in this run.
    refused: BTreeMap<String, String>,
    /// The longest request the open block's server takes, when it says
    /// (`server::context_limit`): trials whose prompts exceed it are refused unsent.
    limit: Option<crate::server::ContextLimit>,
    /// What the open block's requests carry and where its prompts are counted, by its
    /// engine's profile (`preflight`).
    block_plan: Option<BlockPlan>,
    /// The open block's engine profile (`preflight`): how the equivalence probe asks for
    /// token ids and log-probabilities.
    profile: Option<&'static servebench_spec::engine::Profile>,
    /// Lines said once per run (the engine, what it cannot do).
    said: BTreeSet<String>,
    /// GPU samples and server scrapes during trials, the decode ceiling (`spec.telemetry`,
    /// `spec.model_facts`); set up when the first block opens.
    telemetry: Option<crate::telemetry::RunTelemetry>,
    /// The open block's local server's process group (`None`: none, or not on this host),
    /// whose CPU time the trials' host load keeps apart from other processes'.
    server_pgid: Option<i32>,
}

impl<'a> BlockContext<'a> {
    /// Check what is needed before the first block (the API key).
    pub(super) fn new(
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
        let mut headers = Vec::new();
        for (name, value) in &spec.file.spec.target.headers {
            let ctx = Context {
                env: true,
                ..Context::default()
            };
            let v = resolve(value, &ctx)
                .map_err(|e| RunError::Setup(format!("target.headers.{name}: {e}")))?;
            headers.push((name.clone(), v));
        }
        Ok(Self {
            spec: &spec.file,
            plan,
            opts,
            spec_dir: spec_dir.to_owned(),
            store,
            api_key,
            headers,
            refused: BTreeMap::new(),
            limit: None,
            block_plan: None,
            profile: None,
            said: BTreeSet::new(),
            telemetry: None,
            server_pgid: None,
        })
    }

    pub(super) fn variant(&self, name: &str) -> Option<&'a Variant> {
        self.spec.spec.variants.iter().find(|v| v.name == name)
    }

    /// Why `variant` is not measured again in this run (its verify failed), if it is not.
    pub(super) fn refused(&self, variant: &str) -> Option<&str> {
        self.refused.get(variant).map(String::as_str)
    }

    /// Whether no comparison is left to make: the baseline variant, or every other variant,
    /// failed verify (a run of one variant: that one). The run then stops.
    pub(super) fn nothing_left_to_compare(&self) -> bool {
        let variants = &self.spec.spec.variants;
        let refused = |v: &Variant| self.refused.contains_key(&v.name);
        if variants.len() < 2 {
            return variants.iter().any(refused);
        }
        variants.iter().any(|v| v.baseline && refused(v))
            || variants.iter().filter(|v| !v.baseline).all(refused)
    }

    /// The run's one message about its verify failures: per refused variant what the
    /// server reported, the trials never tried (`never_tried`: planned, not recorded), and
    /// whether the run stopped. `None` when every verify passed.
    pub(super) fn verify_summary(&self, stopped: bool, never_tried: usize) -> Option<String> {
        if self.refused.is_empty() {
            return None;
        }
        let reasons: Vec<&str> = self.refused.values().map(String::as_str).collect();
        let mut out = reasons.join("; ");
        if never_tried > 0 {
            out.push_str(&format!(
                "; {never_tried} trial(s) were never tried (not failed: `servebench run \
                 --resume` runs them)"
            ));
        }
        if stopped {
            out.push_str("; the run stopped: no comparison was left to make");
        }
        Some(out)
    }

    /// The folder relative paths of the spec are read from.
    /// `target.tls.ca_file`, resolved against the spec's directory.
    pub(super) fn ca_file(&self) -> Option<PathBuf> {
        let tls = self.spec.spec.target.tls.as_ref()?;
        tls.ca_file.as_ref().map(|f| self.spec_dir.join(f))
    }

    pub(super) fn spec_dir(&self) -> &Path {
        &self.spec_dir
    }

    /// Where the open block's prompts are counted (set by [`BlockContext::open`]).
    pub(super) fn tokenizer_spec(&self) -> TokenizerSpec {
        self.block_plan
            .as_ref()
            .map_or(TokenizerSpec::None, |p| p.tokenizer.clone())
    }

    /// The open block's request fields (set by [`BlockContext::open`]).
    pub(super) fn body_plan(&self) -> servebench_spec::engine::BodyPlan {
        self.block_plan.as_ref().map_or_else(
            || {
                let w = &self.spec.spec.workload;
                servebench_spec::engine::GENERIC.body_plan(w.ignore_eos, w.send_min_tokens)
            },
            |p| p.body.clone(),
        )
    }

    pub(super) fn cancelled(&self) -> bool {
        self.opts.cancel.load(Ordering::SeqCst)
    }

    /// Run one block's missing trials.
    pub(super) async fn run_block(
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
        if self.refused.contains_key(&block.variant) {
            // Its verify failed in an earlier block: said once there; its later blocks are
            // not run (their trials stay unrecorded — never tried, not failed — so
            // `run --resume` tries them again once the server is fixed).
            return Ok(());
        }
        let Some(variant) = self.variant(&block.variant) else {
            return self.fail_all(&todo, block, result, "variant missing from the spec");
        };
        let (mut running, target) = match self.open(block, variant, result, ui).await {
            Ok(o) => o,
            Err(Opening::Cancelled) => return Ok(()),
            Err(Opening::Failed(reason)) => return self.fail_all(&todo, block, result, &reason),
        };
        let profile = self.profile.unwrap_or(&servebench_spec::engine::GENERIC);
        if let Err(e) = self.probe(block, &target, profile, result, ui).await {
            return Err(self.stop_after_error(running, block, result, ui, e).await);
        }
        match self
            .kernel_evidence(block, variant, &target, profile, result, ui)
            .await
        {
            Ok(()) => {}
            Err(kernels::KernelStop::Refused(reason)) => {
                self.close(running, block, result, ui).await?;
                return self.fail_all(&todo, block, result, &reason);
            }
            Err(kernels::KernelStop::Io(e)) => {
                return Err(self.stop_after_error(running, block, result, ui, e).await);
            }
        }
        let cooldown = self.spec.spec.trials.cooldown.get();
        sleep_unless_cancelled(cooldown, self).await;
        let tok = self.tokenizer_spec();
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
                if let Err(e) = self.record(result, failed(t, block, reason), &[]) {
                    return Err(self.stop_after_error(running, block, result, ui, e).await);
                }
                continue;
            }
            ui.trial_start(t, &self.plan.points[t.point].to_string());
            let (trial, lines) = match &mut source {
                Err(e) => (failed(t, block, &format!("prompts: {e}")), Vec::new()),
                Ok(src) => match self
                    .measure(
                        t,
                        block,
                        &self.plan.points[t.point],
                        src,
                        &target,
                        ui.trial_bar(),
                    )
                    .await
                {
                    Some(m) => m,
                    // Interrupted: not recorded, so `--resume` measures it again.
                    None => break,
                },
            };
            if let Some(s) = running.as_mut()
                && let Some(status) = exited_soon_after(s, &trial).await
            {
                let reason = match s.exit_detail() {
                    Some(detail) => {
                        format!("the server exited during the trial ({status}): {detail}")
                    }
                    None => format!(
                        "the server exited during the trial ({status}); see its log {}",
                        s.log_path().display()
                    ),
                };
                server_gone = Some(reason.clone());
                let mut trial = trial;
                trial.status = TrialStatus::Failed;
                trial.failure = Some(reason);
                ui.trial_end(&trial);
                if let Err(e) = self.record(result, trial, &lines) {
                    return Err(self.stop_after_error(running, block, result, ui, e).await);
                }
                continue;
            }
            ui.trial_end(&trial);
            if let Err(e) = self.record(result, trial, &lines) {
                return Err(self.stop_after_error(running, block, result, ui, e).await);
            }
        }
        self.close(running, block, result, ui).await
    }

    /// The result could not be written (`error`, which names where the measured data went):
    /// stop the block's server by its stop policy before the run ends, so that nothing is
    /// left running, and record the stop where the result can still be written.
    pub(super) async fn stop_after_error(
        &self,
        running: Option<RunningServer>,
        block: &Block,
        result: &mut RunResult,
        ui: &mut Progress,
        error: RunError,
    ) -> RunError {
        if let Some(s) = running {
            ui.line(&format!(
                "block {}: the result could not be written: stopping the server",
                block.index + 1
            ));
            let report = server::stop(s).await;
            if let Some(rec) = result
                .servers
                .iter_mut()
                .rev()
                .find(|r| r.block == block.index)
            {
                rec.stop = Some(report);
            }
            // Best effort: the error already says where every trial is.
            let _ = self.store.save(result);
        }
        error
    }

    /// Stop the block's server, if it started one, and record how it stopped.
    pub(super) async fn close(
        &self,
        running: Option<RunningServer>,
        block: &Block,
        result: &mut RunResult,
        ui: &mut Progress,
    ) -> Result<(), RunError> {
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

    /// Start the block's server (when the spec launches one), or resolve the variant's
    /// endpoint, and the target the trials are sent to.
    pub(super) async fn open(
        &mut self,
        block: &Block,
        variant: &'a Variant,
        result: &mut RunResult,
        ui: &mut Progress,
    ) -> Result<(Option<RunningServer>, Target), Opening> {
        let mut running: Option<RunningServer> = None;
        let mut resolved = None;
        if self.telemetry.is_none() {
            let gpus = result.accelerators.iter().map(|a| a.name.clone()).collect();
            self.telemetry = Some(crate::telemetry::RunTelemetry::new(
                self.spec,
                result.model_facts,
                gpus,
                self.ca_file().as_deref(),
            ));
        }
        if self.spec.spec.server.is_none()
            && let Some(t) = &self.telemetry
        {
            // A running endpoint: the runner's own CUDA_VISIBLE_DEVICES, else every GPU.
            t.set_server_env(&BTreeMap::new());
        }
        let base_url = if let Some(server_spec) = &self.spec.spec.server {
            ui.line(&format!(
                "block {}: starting server for `{}`",
                block.index + 1,
                variant.name
            ));
            match self.start_server(block, variant, server_spec, result).await {
                Ok((s, r)) => {
                    // `target.base_url` resolved for this start, or http://127.0.0.1:${port}.
                    let url = s.base_url();
                    running = Some(s);
                    resolved = Some(r);
                    url
                }
                Err(reason) => {
                    if self.cancelled() {
                        return Err(Opening::Cancelled);
                    }
                    // A verify failure is said once, with what the server reported, at the
                    // run's end; here only that it happened.
                    if self.refused.contains_key(&variant.name) {
                        ui.line(&format!(
                            "block {}: `{}` failed verify: its later blocks are not run",
                            block.index + 1,
                            variant.name
                        ));
                    } else {
                        ui.line(&format!("block {}: {reason}", block.index + 1));
                    }
                    return Err(Opening::Failed(reason));
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
                Err(e) => return Err(Opening::Failed(format!("target URL: {e}"))),
            }
        };
        // An https:// endpoint whose certificate does not verify fails here, before any
        // trial of the block, not as every request's connect error.
        if running.is_none()
            && let Err(e) = crate::tls::check(&base_url, self.ca_file().as_deref()).await
        {
            let reason = e.to_string();
            ui.line(&format!("block {}: {reason}", block.index + 1));
            return Err(Opening::Failed(reason));
        }
        let mut target = Target {
            base_url: base_url.trim_end_matches('/').to_owned(),
            api: api_kind(self.spec.spec.target.api),
            model: self.spec.spec.target.model.clone(),
            api_key: self.api_key.clone(),
            headers: self.headers.clone(),
            ca_file: self.ca_file(),
        };
        self.block_plan = None;
        self.profile = None;
        self.limit = None;
        if let Err(reason) = self
            .preflight(block, variant, &mut target, resolved, result, ui)
            .await
        {
            ui.line(&format!("block {}: {reason}", block.index + 1));
            if running.is_some() {
                self.close(running, block, result, ui)
                    .await
                    .map_err(|e| Opening::Failed(format!("{reason} ({e})")))?;
            }
            return Err(Opening::Failed(reason));
        }
        Ok((running, target))
    }

    pub(super) fn record(
        &self,
        result: &mut RunResult,
        trial: TrialResult,
        lines: &[RequestLine],
    ) -> Result<(), RunError> {
        result.trials.push(trial);
        result.updated_at = now_rfc3339();
        self.store.save_trial(result, lines)?;
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
}

/// Why a block's server or endpoint is not there to measure.
pub(super) enum Opening {
    /// Stopped by `cancel` while starting.
    Cancelled,
    /// Could not start, pass verify, or resolve the endpoint.
    Failed(String),
}

/// The server's exit status if it has exited, or exits within 2 s of a trial that saw
/// connection failures (a dying server closes its socket before its process ends).
pub(super) async fn exited_soon_after(
    s: &mut RunningServer,
    trial: &TrialResult,
) -> Option<crate::server::ExitRecord> {
    if let Some(e) = s.try_exit_status() {
        return Some(e);
    }
    use crate::loadgen::ErrorKind;
    let suspicious = trial.summary.as_ref().is_some_and(|sum| {
        sum.errors.keys().any(|k| {
            matches!(
                k,
                ErrorKind::Connect | ErrorKind::Transport | ErrorKind::StreamDisconnected
            )
        })
    });
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

pub(super) fn failed(t: &PlannedTrial, block: &Block, reason: &str) -> TrialResult {
    let now = now_rfc3339();
    TrialResult {
        seq: t.seq,
        block: block.index,
        variant: t.variant.clone(),
        trial: t.trial,
        point: t.point,
        repeat: t.repeat,
        prompt_seed: t.prompt_seed,
        status: TrialStatus::Failed,
        failure: Some(reason.to_owned()),
        started_at: now.clone(),
        ended_at: now,
        errors: BTreeMap::new(),
        summary: None,
        receive_stamps: None,
        host_load: None,
    }
}

async fn wait_cancel(ctx: &BlockContext<'_>) {
    while !ctx.cancelled() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(super) async fn sleep_unless_cancelled(d: Duration, ctx: &BlockContext<'_>) {
    if d.is_zero() {
        return;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = wait_cancel(ctx) => {}
    }
}
