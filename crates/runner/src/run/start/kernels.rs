//! Kernel evidence of a server start (`evidence.kernels`, docs/kernels.md): after the
//! block's equivalence probe and a warm-up of `workload.warmup_requests` (at least one)
//! unprofiled requests, before its first trial, the engine's profiler is
//! started (as its profile says), probe load is sent, the profiler is stopped, and once its
//! traces are fully written they are read as streams (servebench_result::kernels) and the
//! `kernel` verify rules are judged on every rank. The probe's requests are never a trial's;
//! the profiler is off before the first trial starts.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use servebench_engines::{Profiler, ProfilerFacts};
use servebench_result::kernels::{KernelEvidence, judge, top_lines};
use servebench_result::{VerifyRecord, describe_kernel_rule};
use servebench_spec::plan::SweepPoint;
use servebench_spec::substitute::{Context, resolve};
use servebench_spec::{KernelEvidenceSpec, Variant};

use super::super::recorder::Recorder;
use super::super::workload::{PromptSource, load_config};
use super::{Start, StartContext};
use crate::loadgen::{Arrival, Target, run_trial};
#[cfg(test)]
use files::STABLE_FOR;
use files::{hold_for, listing, wait_and_read};

/// The trial index the probe's prompts are drawn with: none of a trial's (they count from 1).
const PROBE_TRIAL: u32 = 0;

/// Why a block stops at its kernel evidence.
pub(super) enum KernelStop {
    /// A `kernel` rule failed (or there was no evidence to judge it on): the variant is
    /// refused like any failed verify.
    Refused(String),
    /// The result could not be written.
    Io(super::super::RunError),
}

/// Concurrency, requests and the index in `points` of the point whose prompts the probe
/// draws (the smallest).
fn probe_shape(spec: &KernelEvidenceSpec, points: &[SweepPoint]) -> (u32, u32, usize) {
    let smallest = points
        .iter()
        .enumerate()
        .min_by_key(|(_, p)| p.max_concurrency.unwrap_or(1))
        .map_or((0, 1), |(i, p)| (i, p.max_concurrency.unwrap_or(1)));
    let c = spec.concurrency.unwrap_or(smallest.1).max(1);
    let requests = spec.requests.unwrap_or(2 * c).max(1);
    (c, requests, smallest.0)
}

/// The probe's load: the start's points, and its concurrency, requests and point.
struct Probe<'p> {
    points: &'p [SweepPoint],
    shape: (u32, u32, usize),
}

/// What the probe load measured.
struct ProbeLoad {
    completed: u32,
    output_tokens: u64,
    load_s: f64,
    tpot_ms: Option<f64>,
}

impl StartContext<'_> {
    /// Take the start's kernel evidence and judge its `kernel` rules; the probe's prompts
    /// are drawn at the smallest of `points` (the start's).
    pub(super) async fn kernel_evidence(
        &mut self,
        start: &Start<'_>,
        points: &[SweepPoint],
        rec: &mut Recorder<'_>,
    ) -> Result<(), KernelStop> {
        let Some(spec) = self
            .spec
            .spec
            .evidence
            .as_ref()
            .and_then(|e| e.kernels.clone())
        else {
            return Ok(());
        };
        let (block, variant) = (start.block, start.variant);
        let n = block.index + 1;
        let shape = probe_shape(&spec, points);
        rec.reporter().line(&format!(
            "block {n}: kernel evidence: profiler on, {} probe requests at concurrency {}",
            shape.1, shape.0
        ));
        let run_id = rec.result().run_id.clone();
        let ev = self.evidence(&spec, start, points, shape, &run_id).await;
        rec.reporter().line(&format!(
            "block {n}: kernel evidence: {}",
            summary_line(&ev)
        ));
        let (records, verdict) = self.judge_rules(variant, &ev);
        let verdict = verdict.map_err(|failures| refusal(variant, &failures, &ev));
        rec.update(|r| {
            r.kernels.retain(|k| k.block != block.index);
            r.kernels.push(ev);
            if let Some(s) = r.servers.iter_mut().rev().find(|s| s.block == block.index) {
                s.verify.extend(records);
                if let Err(reason) = &verdict {
                    // The start's record says why, as a refusal at launch does: compare then
                    // says it once instead of once per failed trial, metric and point.
                    s.error = Some(reason.clone());
                }
            }
        })
        .map_err(|e| KernelStop::Io(e.into()))?;
        verdict.map_err(|reason| {
            rec.reporter().line(&format!("block {n}: {reason}"));
            self.refused.insert(variant.name.clone(), reason.clone());
            KernelStop::Refused(reason)
        })
    }

    /// The evidence of `start`: its probe load under the profiler and the traces read, or
    /// why there is none.
    async fn evidence(
        &self,
        spec: &KernelEvidenceSpec,
        start: &Start<'_>,
        points: &[SweepPoint],
        (c, requests, point): (u32, u32, usize),
        run_id: &str,
    ) -> KernelEvidence {
        let started = Instant::now();
        let mut ev = KernelEvidence {
            block: start.block.index,
            variant: start.variant.name.clone(),
            concurrency: c,
            requests,
            completed: 0,
            output_tokens: 0,
            load_s: 0.0,
            tpot_ms: None,
            step_s: 0.0,
            wait_s: 0.0,
            trace_bytes: 0,
            ranks: Vec::new(),
            error: None,
        };
        match &start.profile.profiler {
            Profiler::None { instead } => {
                ev.error = Some(format!(
                    "{} has no profiler servebench can drive ({instead})",
                    start.profile.name
                ));
            }
            Profiler::Endpoints(facts) => {
                let dir = self.trace_dir(spec, facts, run_id, start.block.index);
                let probe = Probe {
                    points,
                    shape: (c, requests, point),
                };
                if let Err(e) = self
                    .take(spec, facts, &dir, &start.target, &probe, &mut ev)
                    .await
                {
                    ev.error = Some(e);
                }
            }
        }
        ev.step_s = started.elapsed().as_secs_f64();
        ev
    }

    /// The folder this start's traces go to: below `dir` per start where the engine is told
    /// the folder per request, else `dir` itself (fixed at launch).
    fn trace_dir(
        &self,
        spec: &KernelEvidenceSpec,
        facts: &ProfilerFacts,
        run_id: &str,
        block: usize,
    ) -> PathBuf {
        // Absolute: the server runs in its own working directory.
        let joined = self.spec_dir.join(&spec.dir);
        let base = std::path::absolute(&joined).unwrap_or(joined);
        match facts.dir_key {
            Some(_) => base.join(format!("{run_id}-block-{:03}", block + 1)),
            None => base,
        }
    }

    /// Start, probe load, stop, wait, read.
    async fn take(
        &self,
        spec: &KernelEvidenceSpec,
        facts: &ProfilerFacts,
        dir: &Path,
        target: &Target,
        probe: &Probe<'_>,
        ev: &mut KernelEvidence,
    ) -> Result<(), String> {
        let (c, requests, point) = probe.shape;
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot make the trace directory {}: {e}", dir.display()))?;
        let before = listing(dir, facts.trace_suffixes);
        let client = crate::server::probe_client(target.ca_file.as_deref())?;
        let mut body: serde_json::Value =
            serde_json::from_str(facts.start_body).unwrap_or_else(|_| serde_json::json!({}));
        if let (Some(key), Some(obj)) = (facts.dir_key, body.as_object_mut()) {
            obj.insert(key.into(), dir.display().to_string().into());
        }
        // The block's warm-up, unprofiled: the engine's first requests initialise what the
        // probe should not see (transformers serve starts its generation thread then).
        let warm = self.spec.spec.workload.warmup_requests.max(1);
        self.probe_load(target, probe.points, (c, warm, point), spec.output_tokens)
            .await
            .map_err(|e| format!("warm-up before the profiler: {e}"))?;
        post(&client, target, facts.start, &body).await?;
        let load = self
            .probe_load(
                target,
                probe.points,
                (c, requests, point),
                spec.output_tokens,
            )
            .await;
        // Stopped whatever the load did: the profiler must be off before the first trial.
        let stopped = post(&client, target, facts.stop, &serde_json::json!({})).await;
        let load = load?;
        stopped?;
        ev.completed = load.completed;
        ev.output_tokens = load.output_tokens;
        ev.load_s = load.load_s;
        ev.tpot_ms = load.tpot_ms;
        let waiting = Instant::now();
        let hold = hold_for(facts, self.shared_trace_storage());
        let ranks =
            wait_and_read(dir, facts.trace_suffixes, &before, spec.timeout.get(), hold).await?;
        ev.wait_s = waiting.elapsed().as_secs_f64();
        ev.trace_bytes = ranks.iter().map(|(b, _)| b).sum();
        ev.ranks = ranks.into_iter().map(|(_, r)| r).collect();
        Ok(())
    }

    /// The traces go to storage the nodes of a Slurm server share.
    fn shared_trace_storage(&self) -> bool {
        self.spec
            .spec
            .server
            .as_ref()
            .and_then(|s| s.launcher.as_ref())
            .is_some_and(|l| l.slurm.is_some())
    }

    /// The probe's requests, drawn like a trial's at `point` (trial index 0), none recorded.
    async fn probe_load(
        &self,
        target: &Target,
        points: &[SweepPoint],
        (c, requests, point): (u32, u32, usize),
        output_tokens: Option<u32>,
    ) -> Result<ProbeLoad, String> {
        let mut s = self.spec.clone();
        s.spec.workload.warmup_requests = 0;
        let mut points = points.to_vec();
        if let Some(n) = output_tokens
            && let Some(p) = points.get_mut(point)
            && p.output_tokens.is_some()
        {
            p.output_tokens = Some(servebench_spec::TokenCount::Fixed(n));
        }
        let p = &points[point];
        let mut cfg = load_config(&s, p, 0x6b65_726e, &self.body_plan());
        cfg.max_concurrency = Some(c as usize);
        cfg.requests = requests as usize;
        cfg.warmup_requests = 0;
        cfg.arrival = Arrival::Inf;
        cfg.trial_deadline = None;
        let tok = self.tokenizer_spec();
        let mut source = PromptSource::new(&s, &points, &tok, &self.spec_dir)
            .map_err(|e| format!("probe prompts: {e}"))?;
        let prompts = source
            .trial_prompts(&s, PROBE_TRIAL, point, requests as usize)
            .await
            .map_err(|e| format!("probe prompts: {e}"))?;
        let o = run_trial(target, &cfg, &prompts)
            .await
            .map_err(|e| format!("probe load: {e}"))?;
        let all = &o.summary.all;
        Ok(ProbeLoad {
            completed: all.completed as u32,
            output_tokens: all.output_tokens,
            load_s: (o.ended_at - o.started_at).as_seconds_f64(),
            tpot_ms: all.tpot.as_ref().map(|t| t.p50),
        })
    }

    /// Judges the spec's `kernel` rules (patterns substituted for `variant`), appends each
    /// outcome to the start's verify records; the failures' lines.
    fn judge_rules(
        &self,
        variant: &Variant,
        ev: &KernelEvidence,
    ) -> (Vec<VerifyRecord>, Result<(), Vec<String>>) {
        let Some(server) = &self.spec.spec.server else {
            return (Vec::new(), Ok(()));
        };
        let ctx = Context {
            vars: Some(&variant.vars),
            env: true,
            ..Context::default()
        };
        let mut records = Vec::new();
        let mut failures = Vec::new();
        let rules = server.verify.iter().chain(&variant.server.verify);
        for (i, rule) in rules.enumerate() {
            let Some(check) = &rule.kernel else { continue };
            let mut check = check.clone();
            let sub = |p: &Option<String>| {
                p.as_ref()
                    .map(|t| resolve(t, &ctx).unwrap_or_else(|_| t.clone()))
            };
            check.matches = sub(&check.matches);
            check.absent = sub(&check.absent);
            let v = judge(&check, ev);
            let rule_text = describe_kernel_rule(&check);
            if !v.holds {
                failures.push(format!("rule {} ({rule_text}): {}", i + 1, v.detail));
            }
            records.push(VerifyRecord {
                rule: if v.holds {
                    rule_text
                } else {
                    format!("rule {}", i + 1)
                },
                passed: v.holds,
                detail: v.detail,
            });
        }
        let verdict = if failures.is_empty() {
            Ok(())
        } else {
            Err(failures)
        };
        (records, verdict)
    }
}

/// `POST path` with `body`; an error unless 2xx.
async fn post(
    client: &reqwest::Client,
    target: &Target,
    path: &str,
    body: &serde_json::Value,
) -> Result<(), String> {
    let url = crate::server::probe_url(&target.base_url, path);
    let mut req = client
        .post(&url)
        .timeout(Duration::from_secs(600))
        .json(body);
    if let Some(k) = &target.api_key {
        req = req.bearer_auth(k);
    }
    for (k, v) in &target.headers {
        req = req.header(k, v);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| format!("POST {url}: {}", crate::server::describe_http(&e)))?;
    let status = resp.status();
    if status.is_success() {
        Ok(())
    } else {
        let text = resp.text().await.unwrap_or_default();
        Err(format!(
            "POST {url}: HTTP {}: {}",
            status.as_u16(),
            text.chars().take(300).collect::<String>()
        ))
    }
}

/// Why `variant` is refused: its failed rules and the kernels the start ran.
fn refusal(variant: &Variant, failures: &[String], ev: &KernelEvidence) -> String {
    let mut reason = format!(
        "verify failed for variant `{}`: {}. The variant is not measured (its change may not be in effect)",
        variant.name,
        failures.join("; ")
    );
    let top = top_lines(ev, 8);
    if !top.is_empty() {
        reason.push_str("\n  top kernels:\n    ");
        reason.push_str(&top.join("\n    "));
    }
    reason
}

/// One line: ranks, busy time per token, the share of TPOT, the top kernel.
fn summary_line(ev: &KernelEvidence) -> String {
    if let Some(e) = &ev.error {
        return format!("none ({e})");
    }
    let ranks = ev.judged_ranks();
    let top = ranks
        .first()
        .and_then(|r| r.kernels.first())
        .map_or_else(String::new, |k| {
            format!(
                "; top {:.1}% {}",
                k.share * 100.0,
                k.name.chars().take(80).collect::<String>()
            )
        });
    format!(
        "{} trace(s), {} judged, {:.1} MB, read {:.1} s after the stop; busy {} ms a token{}{}",
        ev.ranks.len(),
        ranks.len(),
        ev.trace_bytes as f64 / 1e6,
        ev.wait_s,
        ev.busy_per_token_ms()
            .map_or_else(|| "?".to_owned(), |b| format!("{b:.3}")),
        ev.busy_share_of_tpot()
            .map_or_else(String::new, |s| format!(" ({:.0}% of TPOT)", s * 100.0)),
        top
    )
}

#[path = "kernels_files.rs"]
mod files;

#[cfg(test)]
#[path = "kernels_tests.rs"]
mod tests;
