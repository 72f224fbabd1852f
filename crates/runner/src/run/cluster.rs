//! A run whose server spans nodes (`server.launcher.slurm`): the checks before anything
//! starts, the allocation and nodes in the result's provenance, and the steps a killed run
//! left behind.

use std::path::Path;

use servebench_result::RunResult;
use servebench_result::cluster::{BatchScript, ClusterRecord, SlurmStepRecord};
use servebench_result::now_rfc3339;
use servebench_spec::Spec;

use super::RunError;
use crate::server::slurm::{self, Allocation};

/// Set by `servebench submit` in the batch script: the script's path, recorded in the result.
pub const BATCH_SCRIPT_ENV: &str = "SERVEBENCH_BATCH_SCRIPT";

/// For a spec with a Slurm launcher: the allocation, checked (inside one, big enough, `srun`
/// present) before any trial starts. `None` for a server on this host.
pub(super) async fn preflight(spec: &Spec) -> Result<Option<Allocation>, RunError> {
    let Some(sl) = spec
        .file
        .spec
        .server
        .as_ref()
        .and_then(|s| s.launcher.as_ref())
        .and_then(|l| l.slurm.as_ref())
    else {
        return Ok(None);
    };
    Allocation::detect(sl.nodes)
        .await
        .map(Some)
        .map_err(RunError::Setup)
}

/// Adds the allocation to `result.provenance.cluster` (a resumed run in a new allocation adds
/// another), with the batch script when `servebench submit` started the run.
pub(super) fn record(result: &mut RunResult, spec: &Spec, allocation: &Allocation) {
    let nodes = spec
        .file
        .spec
        .server
        .as_ref()
        .and_then(|s| s.launcher.as_ref())
        .map_or(1, servebench_spec::Launcher::nodes);
    let mut rec = allocation.record(nodes, now_rfc3339());
    rec.batch_script = std::env::var(BATCH_SCRIPT_ENV)
        .ok()
        .map(|path| BatchScript {
            text: std::fs::read_to_string(&path).unwrap_or_default(),
            path,
        });
    let cluster = result
        .provenance
        .cluster
        .get_or_insert_with(|| ClusterRecord {
            scheduler: "slurm".into(),
            allocations: Vec::new(),
        });
    if cluster
        .allocations
        .last()
        .is_none_or(|a| a.job_id != rec.job_id)
    {
        cluster.allocations.push(rec);
    }
}

/// After a server step started: its nodes' facts (host, GPUs) join the current allocation's
/// record, the first time they are known.
pub(super) fn note_nodes(result: &mut RunResult, step: &SlurmStepRecord, log_path: &Path) {
    let Some(a) = result.provenance.cluster.as_mut().and_then(|c| {
        c.allocations
            .iter_mut()
            .rev()
            .find(|a| a.job_id == step.job_id)
    }) else {
        return;
    };
    if a.node_info.is_empty() {
        a.node_info = slurm::node_records(step, log_path);
    }
}

/// Server steps a killed run left in Slurm: cancel each that Slurm still lists under its
/// recorded name (after the local `srun` groups are stopped).
pub(super) async fn stop_orphan_steps(result: &RunResult) {
    for s in result.servers.iter().filter(|s| s.stop.is_none()) {
        let Some(step) = &s.slurm else { continue };
        match slurm::cancel_orphan_step(&step.job_id, &step.step_name).await {
            Ok(ids) if ids.is_empty() => {}
            Ok(ids) => eprintln!(
                "servebench: Slurm step {} ({}, {}) from the interrupted run was still running: cancelled",
                ids.join(","),
                step.step_name,
                s.variant
            ),
            Err(e) => eprintln!(
                "servebench: could not cancel Slurm step {} of job {}: {e}",
                step.step_name, step.job_id
            ),
        }
    }
}
