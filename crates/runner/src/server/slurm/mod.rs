//! Servers that span nodes, started through Slurm (`server.launcher.slurm`, docs/slurm.md).
//!
//! Behind the same interface as a local server ([`super::start`] / [`super::stop_with`] /
//! [`super::verify`] on a [`RunningServer`]): [`start`] runs one `srun` step per block, one task
//! per node, inside the allocation servebench runs in; `srun` is the local child (its own
//! process group), so readiness, "the server exited" and the safety nets work as for a local
//! server. Rank 0, the head, serves HTTP on `${port}` on the allocation's first node, where
//! servebench runs (checked), so the port is picked and probed there.
//!
//! * Each task writes a marker and its node's facts into the results directory before the
//!   server starts; a start that does not see every rank's marker fails (the results
//!   directory must be on a filesystem every node sees).
//! * Each rank logs to its own file beside the result (`….rankR.log`); `verify` reads every
//!   rank's log, and a rank that dies is named with its log's tail ([`RunningServer::exit_detail`]).
//! * Stop: `scancel --signal=SIG JOB.STEP`, the grace, `scancel JOB.STEP` (`SIGKILL`), then
//!   polling until Slurm no longer lists the step (a step can outlive `srun` a moment).
//! * Orphans: a step left by a killed servebench is found by its name in the recorded job and
//!   cancelled ([`cancel_orphan_step`]).

mod allocation;
mod cmd;
mod script;
mod stop;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use servebench_result::cluster::{NodeRecord, RankRecord, SlurmStepRecord};
use servebench_result::{Accelerator, HostInfo};
use servebench_spec::{SlurmLauncher, VerifyRule};
use tokio::time::Instant;

use super::error::ServerError;
use super::log::{ServerLog, TAIL_LINES, indent};
use super::redact::redact_argv;
use super::verify::{LOG_GRACE, VerifyError, VerifyOutcome, verify_rules};
use super::{RunningServer, ServerLaunch};

pub use allocation::Allocation;
pub use script::quote as shell_quote;
pub use stop::cancel_orphan_step;
use stop::ensure_gone;

/// How long after readiness every rank's marker must be visible.
const MARKER_WAIT: Duration = Duration::from_secs(10);
/// How long to wait for Slurm to stop listing a step that ended.
const STEP_GONE_WAIT: Duration = Duration::from_secs(60);

/// What a Slurm start needs beyond the [`ServerLaunch`], whose `argv` is then the head's with
/// `${node.rank}` left in (and `$$` still escaped: `servebench_spec::substitute::substitute`,
/// not `resolve`) and whose `env` is passed to every rank.
#[derive(Debug, Clone)]
pub struct SlurmLaunch {
    /// The allocation.
    pub allocation: Allocation,
    /// The spec's launcher.
    pub launcher: SlurmLauncher,
    /// The step's name (`srun -J`), unique per run and block: how a later run finds it.
    pub step_name: String,
    /// A worker's argv (rank ≥ 1), like the head's.
    pub worker_argv: Vec<String>,
    /// Variables holding `${node.rank}` (substituted like the argv), set on every rank.
    pub env_per_rank: BTreeMap<String, String>,
    /// `server.worker.env`, substituted like the argv.
    pub worker_env: BTreeMap<String, String>,
}

/// A live server step (kept in the [`RunningServer`]).
#[derive(Debug, Clone)]
pub(crate) struct Step {
    record: SlurmStepRecord,
    stem: PathBuf,
    ranks: u32,
}

/// Where the rank files of the start logging to `log_path` go: `{stem}.rank{R}.{log,ready,node}`.
fn stem_of(log_path: &Path) -> PathBuf {
    log_path.with_extension("")
}

fn rank_file(stem: &Path, rank: u32, ext: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_owned();
    s.push(format!(".rank{rank}.{ext}"));
    PathBuf::from(s)
}

/// Starts the server of `launch` as a Slurm step; see the module documentation. On failure
/// the step is cancelled and gone before the error (with the ranks' log tails) returns.
pub async fn start(
    launch: &ServerLaunch,
    slurm: &SlurmLaunch,
) -> Result<RunningServer, ServerError> {
    let l = &slurm.launcher;
    let ranks = l.nodes * l.ntasks_per_node;
    let stem = stem_of(&launch.log_path);
    if let Some(dir) = stem.parent() {
        std::fs::create_dir_all(dir).map_err(|e| ServerError::Log {
            path: launch.log_path.clone(),
            error: e,
        })?;
    }
    for r in 0..ranks {
        for ext in ["ready", "node"] {
            let _ = std::fs::remove_file(rank_file(&stem, r, ext));
        }
    }
    let body = script::script(
        &stem,
        &script::RankCommands {
            head: &launch.argv,
            worker: &slurm.worker_argv,
            env_per_rank: &slurm.env_per_rank,
            worker_env: &slurm.worker_env,
        },
    )
    .map_err(ServerError::Slurm)?;
    let nodes = slurm.allocation.server_nodes(l.nodes);
    let mut srun = vec![
        "srun".to_owned(),
        format!("--nodes={}", l.nodes),
        format!("--ntasks-per-node={}", l.ntasks_per_node),
        format!("--nodelist={}", nodes.join(",")),
        "--kill-on-bad-exit=1".to_owned(),
        format!("--job-name={}", slurm.step_name),
    ];
    if let Some(g) = l.gpus_per_node {
        srun.push(format!("--gpus-per-node={g}"));
    }
    srun.extend(l.extra_args.iter().cloned());
    srun.extend(["bash".to_owned(), "-c".to_owned(), body]);
    let inner = ServerLaunch {
        argv: srun.clone(),
        ..launch.clone()
    };
    let mut record = SlurmStepRecord {
        job_id: slurm.allocation.job_id.clone(),
        step_id: None,
        step_name: slurm.step_name.clone(),
        nodes,
        srun_argv: redact_argv(&srun, &launch.secret_values),
        ranks: Vec::new(),
    };
    let mut step = Step {
        record: record.clone(),
        stem: stem.clone(),
        ranks,
    };
    let mut running = match super::start::start(&inner).await {
        Ok(r) => r,
        Err(mut e) => {
            let log = ServerLog::existing(&launch.log_path);
            ensure_gone(&step, &log).await;
            add_rank_tails(&mut e, &step);
            return Err(e);
        }
    };
    record.step_id = cmd::steps_named(&record.job_id, &record.step_name)
        .await
        .ok()
        .and_then(|v| v.into_iter().next());
    running.log_event(&format!(
        "slurm step {} ({}) on {}",
        record.step_id.as_deref().unwrap_or("(not listed)"),
        record.step_name,
        record.nodes.join(",")
    ));
    step.record = record;
    let deadline = Instant::now() + MARKER_WAIT;
    loop {
        let missing: Vec<u32> = (0..ranks)
            .filter(|&r| !rank_file(&stem, r, "ready").exists())
            .collect();
        if missing.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            let msg = format!(
                "the server is ready, but rank(s) {missing:?} of Slurm step {} left no marker in \
                 {} within {MARKER_WAIT:?} of it: the results directory must be on a \
                 filesystem every node sees (a shared home or scratch: set --results-dir), \
                 since each rank writes its log there",
                step.record.step_name,
                stem.parent()
                    .map(Path::display)
                    .map(|d| d.to_string())
                    .unwrap_or_default(),
            );
            running.log_event(&msg);
            running.slurm = Some(step);
            super::stop(running).await;
            return Err(ServerError::Slurm(msg));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    step.record.ranks = (0..ranks)
        .filter_map(|r| {
            read_marker(
                &stem,
                r,
                if r == 0 {
                    &launch.argv
                } else {
                    &slurm.worker_argv
                },
                &launch.secret_values,
            )
        })
        .collect();
    running.slurm = Some(step);
    Ok(running)
}

/// A rank's marker as a record.
fn read_marker(stem: &Path, rank: u32, argv: &[String], secrets: &[String]) -> Option<RankRecord> {
    let text = std::fs::read_to_string(rank_file(stem, rank, "ready")).ok()?;
    let f: Vec<&str> = text.trim_end().split('\t').collect();
    let node_rank: u32 = f.get(1)?.parse().ok()?;
    let resolved: Vec<String> = argv
        .iter()
        .map(|a| {
            let partial = a.replace("${node.rank}", &node_rank.to_string());
            servebench_spec::substitute::resolve(&partial, &Default::default()).unwrap_or(partial)
        })
        .collect();
    Some(RankRecord {
        rank: f.first()?.parse().ok()?,
        node_rank,
        node: f.get(2)?.to_string(),
        hostname: f.get(3)?.to_string(),
        pid: f.get(4)?.parse().ok()?,
        log_path: rank_file(stem, rank, "log").display().to_string(),
        argv: redact_argv(&resolved, secrets),
    })
}

/// The ranks' log tails, appended to a start failure's own.
fn add_rank_tails(e: &mut ServerError, step: &Step) {
    let tails = rank_tails(step, None);
    match e {
        ServerError::ExitedBeforeReady { log_tail, .. }
        | ServerError::ReadinessTimeout { log_tail, .. } => {
            log_tail.push_str(&tails);
        }
        _ => {}
    }
}

fn rank_tails(step: &Step, only: Option<u32>) -> String {
    let mut out = String::new();
    for r in (0..step.ranks).filter(|r| only.is_none_or(|o| o == *r)) {
        let path = rank_file(&step.stem, r, "log");
        let log = ServerLog::whole(&path);
        out.push_str(&format!(
            "\n--- rank {r} ({}), log {}:\n{}",
            node_of(step, r),
            path.display(),
            log.tail(TAIL_LINES / 2)
        ));
    }
    out
}

fn node_of(step: &Step, rank: u32) -> String {
    step.record
        .ranks
        .iter()
        .find(|k| k.rank == rank)
        .map(|k| format!("node {}", k.node))
        .or_else(|| {
            std::fs::read_to_string(rank_file(&step.stem, rank, "ready"))
                .ok()
                .and_then(|t| t.split('\t').nth(2).map(|n| format!("node {n}")))
        })
        .unwrap_or_else(|| "node unknown".to_owned())
}

/// Which rank `srun` reported first as ended (`srun: error: n2: task 1: Killed`), from its log.
fn failed_rank(srun_log: &str) -> Option<(u32, String)> {
    srun_log.lines().find_map(|l| {
        let rest = l.split("srun: error: ").nth(1)?;
        let (_, after) = rest.split_once(": task ")?;
        let (n, why) = after.split_once(':')?;
        let n: u32 = n.trim().parse().ok()?;
        Some((n, why.trim().to_owned()))
    })
}

impl Step {
    pub(crate) fn record(&self) -> &SlurmStepRecord {
        &self.record
    }

    /// Which rank ended the step and its log's tail, for a server that exited.
    pub(crate) fn exit_detail(&self, srun_log: &ServerLog) -> String {
        let text = srun_log.read().unwrap_or_default();
        match failed_rank(&text) {
            Some((r, why)) => format!(
                "rank {r} ({}) of Slurm step {} ended ({why}); its log {}, last lines:\n{}",
                node_of(self, r),
                self.record.step_name,
                rank_file(&self.stem, r, "log").display(),
                indent(&ServerLog::whole(&rank_file(&self.stem, r, "log")).tail(TAIL_LINES / 2))
            ),
            None => format!(
                "Slurm step {} ended; the ranks' logs:{}",
                self.record.step_name,
                rank_tails(self, None)
            ),
        }
    }

    /// `verify` on every rank: `json` rules against the head, `log_contains` rules in every
    /// rank's log.
    pub(crate) async fn verify(
        &self,
        at: super::verify::Reach<'_>,
        rules: &[VerifyRule],
    ) -> Result<Vec<VerifyOutcome>, VerifyError> {
        let head = ServerLog::whole(&rank_file(&self.stem, 0, "log"));
        let mut out = verify_rules(&head, at, rules, LOG_GRACE).await;
        let log_rules: Vec<VerifyRule> = rules
            .iter()
            // `json` and `server_arg` rules are the head's (the ranks serve no HTTP).
            .map(|r| VerifyRule {
                json: None,
                server_arg: None,
                ..r.clone()
            })
            .collect();
        for r in 1..self.ranks {
            let log = ServerLog::whole(&rank_file(&self.stem, r, "log"));
            let res = verify_rules(&log, at, &log_rules, LOG_GRACE).await;
            let Err(e) = res else { continue };
            let failures: Vec<_> = e
                .failures
                .into_iter()
                .filter(|f| !matches!(f.problem, super::RuleProblem::Empty))
                .collect();
            if failures.is_empty() {
                continue;
            }
            out = match out {
                Ok(passed) => Err(VerifyError { failures, passed }),
                Err(mut prev) => {
                    prev.failures.extend(failures);
                    Err(prev)
                }
            };
        }
        if let Err(e) = &mut out {
            let failed: Vec<usize> = e.failures.iter().map(|f| f.number).collect();
            e.passed
                .retain(|p| !failed.iter().any(|n| rules.get(n - 1) == Some(&p.rule)));
        }
        out
    }
}

/// The nodes' facts each rank's probe wrote at the last start of `log_path`, one per node
/// (the first rank on each), in node order.
pub fn node_records(step: &SlurmStepRecord, log_path: &Path) -> Vec<NodeRecord> {
    let stem = stem_of(log_path);
    let mut out: Vec<NodeRecord> = Vec::new();
    for r in &step.ranks {
        if out.iter().any(|n| n.node_rank == r.node_rank) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(rank_file(&stem, r.rank, "node")) else {
            continue;
        };
        out.push(parse_node(&text, r));
    }
    out.sort_by_key(|n| n.node_rank);
    out
}

fn parse_node(text: &str, rank: &RankRecord) -> NodeRecord {
    let (facts, gpus) = match text.split_once("--- nvidia-smi\n") {
        Some((f, g)) => (f, Some(g)),
        None => (text, None),
    };
    let get = |k: &str| {
        facts
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().to_owned())
            .unwrap_or_default()
    };
    let memory_bytes = get("MemTotal:")
        .split_whitespace()
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024);
    let cpu = get("model name")
        .trim_start_matches([' ', '\t', ':'])
        .trim()
        .to_owned();
    let accelerators: Vec<Accelerator> = gpus
        .and_then(|g| crate::gpu::parse_query_gpu(g).ok())
        .unwrap_or_default();
    NodeRecord {
        node: rank.node.clone(),
        node_rank: rank.node_rank,
        host: HostInfo {
            hostname: get("host="),
            os: String::new(),
            kernel: get("kernel="),
            cpu,
            cores: get("cores=").parse().unwrap_or(0),
            memory_bytes,
        },
        accelerators,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rank_srun_names_is_found_in_its_log() {
        let log = "[servebench t] spawned\nsrun: error: n2: task 1: Killed\nsrun: Terminating StepId=3.0\n";
        assert_eq!(failed_rank(log), Some((1, "Killed".to_owned())));
        assert_eq!(failed_rank("nothing\n"), None);
    }

    #[test]
    fn rank_files_sit_beside_the_start_log() {
        let stem = stem_of(Path::new("/r/x.logs/block-001-a.log"));
        assert_eq!(
            rank_file(&stem, 1, "log"),
            PathBuf::from("/r/x.logs/block-001-a.rank1.log")
        );
    }
}
