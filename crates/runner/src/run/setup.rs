//! Opening a run: a new result file with its provenance, or an existing one to resume.

use std::path::Path;

use servebench_result::{
    RESULT_SCHEMA_VERSION, ResultStore, RunResult, RunStatus, load_result, now_rfc3339, point_info,
};
use servebench_spec::Spec;
use servebench_spec::plan::Plan;
use time::OffsetDateTime;

use super::{RunError, RunOptions};
use crate::{gpu, provenance, server};

/// `YYYYMMDDTHHMMSSZ-xxxx`: sortable by time, unique by a random suffix.
pub(super) fn new_run_id() -> String {
    let t = OffsetDateTime::now_utc();
    let suffix: u16 = rand::random();
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z-{suffix:04x}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// A new result (written at once) or the resumed one.
pub(super) fn open(
    spec: &Spec,
    plan: &Plan,
    opts: &RunOptions,
    spec_dir: &Path,
) -> Result<(RunResult, ResultStore), RunError> {
    if let Some(path) = &opts.resume {
        let mut result = load_result(path)?;
        if result.spec_hash != plan.spec_hash {
            return Err(RunError::SpecChanged {
                path: path.clone(),
                stored: result.spec_hash.clone(),
                current: plan.spec_hash.clone(),
            });
        }
        let store = ResultStore::for_result(path);
        let done: std::collections::BTreeSet<usize> = result.trials.iter().map(|t| t.seq).collect();
        store.prune_requests(&|seq| done.contains(&seq))?;
        result.status = RunStatus::Running;
        result.error = None;
        result.updated_at = now_rfc3339();
        store.save(&result)?;
        return Ok((result, store));
    }
    let run_id = new_run_id();
    let dir = opts.results_root.join(&plan.name);
    let store = ResultStore::new(&dir, &run_id);
    let now = now_rfc3339();
    let result = RunResult {
        schema_version: RESULT_SCHEMA_VERSION,
        origin: Default::default(),
        run_id: run_id.clone(),
        status: RunStatus::Running,
        error: None,
        created_at: now.clone(),
        updated_at: now,
        spec_name: plan.name.clone(),
        spec_hash: plan.spec_hash.clone(),
        spec: spec.file.clone(),
        spec_path: spec.path.as_ref().map(|p| p.display().to_string()),
        overrides: spec.overrides.clone(),
        tool: opts.tool.clone(),
        repo: provenance::repo_info(spec_dir),
        host: Some(provenance::host_info()),
        accelerators: gpu::detect_accelerators().unwrap_or_default(),
        provenance: provenance::collect(&spec.file.spec.provenance, spec_dir),
        points: point_info(plan),
        servers: Vec::new(),
        trials: Vec::new(),
        requests_file: store
            .requests_path
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_owned),
        import: None,
        looks: Vec::new(),
        search: None,
        preflight: Vec::new(),
    };
    store.save(&result)?;
    Ok((result, store))
}

/// Server groups a previous (killed) run left running: stop each whose command line still
/// matches what was recorded; never touch a group that runs something else now.
pub(super) async fn stop_orphans(result: &RunResult) {
    let policy = result
        .spec
        .spec
        .server
        .as_ref()
        .map(|sv| sv.stop.clone())
        .unwrap_or_default();
    for s in result.servers.iter().filter(|s| s.stop.is_none()) {
        let Some(record) = s.server_record() else {
            continue;
        };
        match server::find_orphan(record.pgid, &record.argv) {
            server::OrphanStatus::Gone => {}
            server::OrphanStatus::AliveMatching | server::OrphanStatus::LeaderGone { .. } => {
                eprintln!(
                    "servebench: server group {} ({}) from the interrupted run is still alive: stopping it",
                    record.pgid, s.variant
                );
                if let Err(e) = server::stop_orphan(&record, &policy).await {
                    eprintln!("servebench: could not stop group {}: {e}", record.pgid);
                }
            }
            server::OrphanStatus::AliveDifferent { cmdline } => eprintln!(
                "servebench: process {} is alive but runs something else now ({}): left alone",
                record.pgid,
                cmdline.join(" ")
            ),
        }
    }
}
