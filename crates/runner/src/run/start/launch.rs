//! Starting one block's server: substitutions, the launch record, readiness and verify.

use std::collections::BTreeMap;

use servebench_spec::Variant;
use servebench_spec::plan::Block;
use servebench_spec::substitute::{Context, resolve, substitute};

use super::super::recorder::Recorder;
use super::StartContext;
use crate::engine::{self, Endpoint, Resolved};
use crate::server::{self, RunningServer, ServerLaunch};
use servebench_result::now_rfc3339;
use servebench_result::{RunResult, ServerStart, VerifyRecord};

impl StartContext<'_> {
    /// Start, wait for readiness, tell its engine (named or detected), verify by that
    /// engine's profile. On failure the server is stopped and the reason returned; a verify
    /// failure also refuses the variant for the rest of the run.
    pub(super) async fn start_server(
        &mut self,
        block: &Block,
        variant: &Variant,
        server_spec: &servebench_spec::Server,
        rec: &mut Recorder<'_>,
    ) -> Result<(RunningServer, Resolved), String> {
        let run_id = rec.result().run_id.clone();
        let port = server::pick_free_port().map_err(|e| format!("no free port: {e}"))?;
        let head_port = server::pick_free_port().map_err(|e| format!("no free port: {e}"))?;
        let slurm_spec = server_spec.launcher.as_ref().and_then(|l| l.slurm.as_ref());
        let allocation = match slurm_spec {
            Some(sl) => Some(
                server::slurm::Allocation::detect(sl.nodes)
                    .await
                    .map_err(|e| format!("server did not start: {e}"))?,
            ),
            None => None,
        };
        let head_host = allocation
            .as_ref()
            .map_or_else(|| "127.0.0.1".to_owned(), |a| a.head_addr.clone());
        let through_slurm = allocation.is_some();
        let ctx = Context {
            port: Some(port),
            servebench: Some(&self.opts.servebench_bin),
            vars: Some(&variant.vars),
            env: true,
            // Through Slurm each rank resolves its own `${node.rank}` (the script does).
            node_rank: if through_slurm { None } else { Some(0) },
            node_count: Some(slurm_spec.map_or(1, |s| s.nodes)),
            head_host: Some(head_host.as_str()),
            head_port: Some(head_port),
        };
        // Through Slurm, `${node.rank}` stays in place (and `$$` escaped) for the rank script.
        let sub = |s: &str| {
            if through_slurm {
                substitute(s, &ctx)
            } else {
                resolve(s, &ctx)
            }
            .map_err(|e| format!("server block: {e}"))
        };
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
        let mut env_per_rank = BTreeMap::new();
        for (k, v) in server_spec.env.iter().chain(&variant.server.env) {
            let val = sub(v)?;
            if through_slurm && (val.contains("${node.rank}") || val.contains("$$")) {
                env_per_rank.insert(k.clone(), val);
            } else {
                env.insert(k.clone(), val);
            }
        }
        let block_seed = block_seed(&run_id, block.index);
        env.insert("SERVEBENCH_RUN_ID".into(), run_id.clone());
        env.insert("SERVEBENCH_BLOCK".into(), block.index.to_string());
        env.insert(
            "SERVEBENCH_REPETITION".into(),
            block_repetition(block).to_string(),
        );
        env.insert("SERVEBENCH_BLOCK_SEED".into(), block_seed.to_string());
        let fin = |s: &str| resolve(s, &ctx).map_err(|e| format!("server block: {e}"));
        let verify = verify_rules(server_spec, variant, &fin)?;
        let log_dir = rec.store().result_path.with_extension("logs");
        let log_path = log_dir.join(format!("block-{:03}-{}.log", block.index + 1, variant.name));
        let secrets = self.secrets(server_spec, variant);
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
            // `target.base_url` with a launched server (`https://127.0.0.1:${port}` for one
            // that serves only HTTPS): probes, verify rules and the load all go there.
            base_url: match &self.spec.spec.target.base_url {
                Some(raw) => Some(fin(raw)?),
                None => None,
            },
            ca_file: self.ca_file(),
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
            slurm: None,
            gpus_before_start: None,
            host_probe: None,
        };
        if let Some(t) = &self.telemetry {
            record.gpus_before_start = t.before_start(&variant.name, &env).await;
        }
        // No server of this run runs now: the previous block's was stopped.
        record.host_probe = crate::hostprobe::run_blocking(!through_slurm).await;
        let slurm_launch = match (slurm_spec, allocation) {
            (Some(sl), Some(allocation)) => {
                let worker = server_spec.worker.clone().unwrap_or_default();
                let mut worker_argv = Vec::new();
                for a in server_spec
                    .command
                    .iter()
                    .chain(&server_spec.args)
                    .chain(&worker.args)
                    .chain(&variant.server.args)
                {
                    worker_argv.push(sub(a)?);
                }
                let mut worker_env = BTreeMap::new();
                for (k, v) in &worker.env {
                    worker_env.insert(k.clone(), sub(v)?);
                }
                Some(server::slurm::SlurmLaunch {
                    allocation,
                    launcher: sl.clone(),
                    step_name: format!("servebench-{run_id}-b{}", block.index + 1),
                    worker_argv,
                    env_per_rank,
                    worker_env,
                })
            }
            _ => None,
        };
        let running = spawn(&launch, slurm_launch.as_ref(), record, &log_path, rec).await?;
        self.server_pgid = (!through_slurm).then(|| running.pgid());
        self.verify_started(running, &verify, variant, rec).await
    }

    /// The values a start's record and log never show: the API key, the server block's
    /// `${env.*}` values, and header values read from the environment (`target.headers`).
    fn secrets(&self, server_spec: &servebench_spec::Server, variant: &Variant) -> Vec<String> {
        let mut secrets: Vec<String> = self.api_key.iter().cloned().collect();
        secrets.extend(env_secret_values(server_spec, variant));
        secrets.extend(
            self.headers
                .iter()
                .zip(self.spec.spec.target.headers.values())
                .filter(|((_, v), raw)| raw.contains("${env.") && !v.is_empty())
                .map(|((_, v), _)| v.clone()),
        );
        secrets
    }

    /// The started server's engine, and its verify rules judged: a failure refuses the
    /// variant for the rest of the run and stops the server.
    async fn verify_started(
        &mut self,
        running: RunningServer,
        verify: &[servebench_spec::VerifyRule],
        variant: &Variant,
        rec: &mut Recorder<'_>,
    ) -> Result<(RunningServer, Resolved), String> {
        let ep = Endpoint {
            base_url: running.base_url(),
            ca_file: running.ca_file().map(std::path::Path::to_path_buf),
            api_key: self.api_key.clone(),
            headers: self.headers.clone(),
        };
        let resolved = match engine::resolve(&ep, self.spec.spec.target.engine).await {
            Ok(r) => r,
            Err(e) => {
                let reason = format!("the server was ready but its API does not answer: {e}");
                let report = server::stop(running).await;
                rec.note(|r| refuse_start(r, report, &reason));
                return Err(reason);
            }
        };
        let outcome = server::verify(&running, verify, resolved.profile).await;
        let info = server::server_info(&running, resolved.profile).await;
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
        rec.note(|r| {
            if let Some(s) = r.servers.last_mut() {
                s.verify = records;
                s.info = info;
            }
        });
        if let Some(reason) = failure {
            let reason = format!(
                "verify failed for variant `{}`: {reason}. The variant is not measured (its change may not be in effect)",
                variant.name
            );
            self.refused.insert(variant.name.clone(), reason.clone());
            let report = server::stop(running).await;
            rec.note(|r| refuse_start(r, report, &reason));
            return Err(reason);
        }
        Ok((running, resolved))
    }
}

/// The server's and the variant's verify rules, substituted by `fin`: servebench checks
/// them itself, so they are always fully resolved (`$$` → `$`).
fn verify_rules(
    server_spec: &servebench_spec::Server,
    variant: &Variant,
    fin: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Vec<servebench_spec::VerifyRule>, String> {
    let mut verify = server_spec.verify.clone();
    verify.extend(variant.server.verify.iter().cloned());
    for r in &mut verify {
        if let Some(t) = &r.log_contains {
            r.log_contains = Some(fin(t)?);
        }
        if let Some(j) = &mut r.json {
            j.path = fin(&j.path)?;
            if let Some(s) = j.equals.as_str() {
                j.equals = serde_json::Value::String(fin(s)?);
            }
        }
        if let Some(a) = &mut r.server_arg
            && let Some(s) = a.equals.as_str()
        {
            a.equals = serde_json::Value::String(fin(s)?);
        }
    }
    Ok(verify)
}

/// Launch the server (locally, or as a Slurm step) and record its start. A local server's
/// group is recorded as soon as it is spawned, before readiness: a runner killed while it
/// starts leaves it findable, and `run --resume` stops it.
async fn spawn(
    launch: &ServerLaunch,
    slurm_launch: Option<&server::slurm::SlurmLaunch>,
    mut record: ServerStart,
    log_path: &std::path::Path,
    rec: &mut Recorder<'_>,
) -> Result<RunningServer, String> {
    let mut spawned = false;
    let started = match slurm_launch {
        Some(sl) => server::slurm::start(launch, sl).await,
        None => {
            let early = record.clone();
            let (rec, flag) = (&mut *rec, &mut spawned);
            server::start_with(launch, |pid, pgid| {
                rec.note(|r| {
                    r.servers.push(ServerStart {
                        pid: Some(pid),
                        pgid: Some(pgid),
                        ..early
                    });
                });
                *flag = true;
            })
            .await
        }
    };
    if spawned && let Some(early) = rec.result().servers.last() {
        // The record is the one written at the spawn: complete it rather than add one.
        record.pid = early.pid;
        record.pgid = early.pgid;
    }
    let replace = |r: &mut RunResult, record: ServerStart| {
        if spawned {
            r.servers.pop();
        }
        r.servers.push(record);
    };
    let running = match started {
        Ok(s) => s,
        Err(e) => {
            record.error = Some(e.to_string());
            rec.note(|r| replace(r, record));
            return Err(format!("server did not start: {e}"));
        }
    };
    record.pid = Some(running.pid());
    record.pgid = Some(running.pgid());
    record.started_at = running.started_at().to_owned();
    record.ready_after_s = Some(running.ready_after().as_secs_f64());
    if let Some(step) = running.slurm_record() {
        // The step's srun and its ranks; the recorded argv is srun's (what ran locally).
        record.argv = running.argv().to_vec();
        record.slurm = Some(step.clone());
    }
    rec.note(|r| {
        if let Some(step) = &record.slurm {
            super::super::cluster::note_nodes(r, step, log_path);
        }
        replace(r, record);
    });
    Ok(running)
}

/// The last start's record: stopped, with why it is not measured.
fn refuse_start(result: &mut RunResult, report: server::StopReport, reason: &str) {
    if let Some(s) = result.servers.last_mut() {
        s.stop = Some(report);
        s.error = Some(reason.to_owned());
    }
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
                && let Some(v) = servebench_spec::substitute::env_value(&name)
                && !v.is_empty()
            {
                out.push(v);
            }
        }
    }
    out
}

/// Repetition index t (from 1) handed to each server start (`SERVEBENCH_REPETITION`): the
/// first trial's. Under `per_block` and `per_trial` restarts every trial of a block has the
/// same t; under `once` a block holds every repetition and this is 1.
pub(super) fn block_repetition(block: &Block) -> u32 {
    block.trials.first().map_or(1, |t| t.trial)
}

/// Seed handed to each server start (`SERVEBENCH_BLOCK_SEED`): derived from the run id and
/// the block, so repeated starts of one variant really differ (A/A trials are not replays).
pub(super) fn block_seed(run_id: &str, block: usize) -> u64 {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(format!("{run_id}/{block}").as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use servebench_spec::plan::PlannedTrial;

    use super::*;

    fn block(ts: &[u32]) -> Block {
        Block {
            index: 4,
            variant: "a".into(),
            server_start: true,
            trials: ts
                .iter()
                .enumerate()
                .map(|(seq, &trial)| PlannedTrial {
                    seq,
                    variant: "a".into(),
                    trial,
                    point: seq,
                    repeat: 1,
                    prompt_seed: 0,
                })
                .collect(),
        }
    }

    #[test]
    fn repetition_is_the_first_trials_t() {
        assert_eq!(block_repetition(&block(&[3, 3, 3])), 3);
        assert_eq!(block_repetition(&block(&[1, 1, 2, 2])), 1);
        assert_eq!(block_repetition(&block(&[])), 1);
    }
}
