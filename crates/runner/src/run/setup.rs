//! Opening a run: a new result file with its provenance, or an existing one to resume.

use std::path::Path;

use servebench_result::{
    ProvenanceRecord, RESULT_SCHEMA_VERSION, ResultStore, RunResult, RunStatus, TrialStatus,
    load_result, now_rfc3339, point_info,
};
use servebench_spec::Spec;
use servebench_spec::plan::Plan;
use time::OffsetDateTime;

use super::inputs::input_files;
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

/// A new result (written at once) or the resumed one, with the trials whose request records
/// are lost from the sidecar but whose summaries are kept (see [`recover_records`]).
pub(super) fn open(
    spec: &Spec,
    plan: &Plan,
    opts: &RunOptions,
    spec_dir: &Path,
) -> Result<(RunResult, ResultStore, Vec<usize>), RunError> {
    if let Some(path) = &opts.resume {
        let mut result = load_result(path)?;
        if result.spec_hash != plan.spec_hash {
            return Err(RunError::SpecChanged {
                path: path.clone(),
                stored: result.spec_hash.clone(),
                current: plan.spec_hash.clone(),
            });
        }
        inputs_unchanged(&result, path, spec_dir)?;
        let store = ResultStore::for_result(path);
        let done: std::collections::BTreeSet<usize> = result.trials.iter().map(|t| t.seq).collect();
        store.prune_requests(&|seq| done.contains(&seq))?;
        let kept_without_records = recover_records(&mut result, &store)?;
        result.status = RunStatus::Running;
        result.error = None;
        let now = now_rfc3339();
        result.resumes.push(servebench_result::Resume {
            interrupted_at: std::mem::replace(&mut result.updated_at, now.clone()),
            resumed_at: now,
        });
        store.save(&result)?;
        return Ok((result, store, kept_without_records));
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
        resumes: Vec::new(),
        spec_name: plan.name.clone(),
        spec_hash: plan.spec_hash.clone(),
        spec: spec.file.clone(),
        spec_path: spec.path.as_ref().map(|p| p.display().to_string()),
        overrides: spec.overrides.clone(),
        tool: opts.tool.clone(),
        repo: provenance::repo_info(spec_dir),
        host: Some(provenance::host_info()),
        host_probe: Some(crate::hostprobe::run(probe_on_server_host(&spec.file))),
        accelerators: gpu::detect_accelerators().unwrap_or_default(),
        provenance: ProvenanceRecord {
            inputs: provenance::hash_files(&input_files(&spec.file, spec_dir), spec_dir),
            env: crate::server::recorded_env(&spec.file),
            ..provenance::collect(&spec.file.spec.provenance, spec_dir)
        },
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
        model_facts: model_facts(&spec.file, spec_dir)?,
        equivalence: Vec::new(),
        kernels: Vec::new(),
    };
    store.save(&result)?;
    Ok((result, store, Vec::new()))
}

/// The resumed run's workload files are the ones it began with: the same hash as recorded
/// (results written before the hashes were recorded are not checked).
fn inputs_unchanged(result: &RunResult, path: &Path, spec_dir: &Path) -> Result<(), RunError> {
    let stored = &result.provenance.inputs;
    let names: Vec<String> = stored.iter().map(|f| f.path.clone()).collect();
    for (was, now) in stored.iter().zip(provenance::hash_files(&names, spec_dir)) {
        if was.sha256 != now.sha256 {
            let show = |h: &servebench_result::FileHash| match (&h.sha256, &h.error) {
                (Some(s), _) => s.clone(),
                (None, Some(e)) => format!("unreadable ({e})"),
                (None, None) => "unknown".into(),
            };
            return Err(RunError::InputChanged {
                path: path.to_owned(),
                file: spec_dir.join(&was.path),
                stored: show(was),
                current: show(&now),
            });
        }
    }
    Ok(())
}

/// A trial of the result whose request records are not all in the sidecar (a write cut
/// short, a sidecar damaged or cut) is not carried on silently. Where nothing recorded
/// after it read it, it is taken out of the result so that the run measures it again;
/// where a look of a sequential run or the search log read it, its summary is kept and its
/// seq returned, and the run ends marked failed, saying so. Each is said on stderr.
fn recover_records(result: &mut RunResult, store: &ResultStore) -> Result<Vec<usize>, RunError> {
    let counts = store.measured_counts()?;
    let mut kept = Vec::new();
    let mut remeasure = Vec::new();
    for t in &result.trials {
        let Some(expected) = t.summary.as_ref().map(|s| s.all.requests) else {
            continue;
        };
        let found = counts.get(&t.seq).copied().unwrap_or(0);
        if t.status != TrialStatus::Ok || found == expected {
            continue;
        }
        let read_since =
            result.search.is_some() || result.looks.iter().any(|l| l.after_trial >= t.trial);
        let what = format!(
            "trial {} (`{}`, t={}, point {}) has {found} of its {expected} request records in {}",
            t.seq,
            t.variant,
            t.trial,
            t.point,
            store.requests_path.display()
        );
        if read_since {
            eprintln!(
                "servebench: {what}; a look already read its summary, which is kept, but its \
                 request records are lost: the result will be marked failed"
            );
            kept.push(t.seq);
        } else {
            eprintln!("servebench: {what} (a write cut short): it is measured again");
            remeasure.push(t.seq);
        }
    }
    if !remeasure.is_empty() {
        result.trials.retain(|t| !remeasure.contains(&t.seq));
        store.prune_requests(&|seq| !remeasure.contains(&seq))?;
    }
    Ok(kept)
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

/// `spec.model_facts` with every figure known: its own, else counted from the `config.json`
/// it names (read now, relative to the spec's folder). A figure that cannot be had stops the
/// run before anything starts, saying which and what to write.
pub(super) fn model_facts(
    spec: &servebench_spec::SpecFile,
    spec_dir: &Path,
) -> Result<Option<servebench_spec::model_facts::ResolvedModelFacts>, RunError> {
    let Some(facts) = &spec.spec.model_facts else {
        return Ok(None);
    };
    let config = match &facts.config {
        Some(c) => {
            let path = spec_dir.join(c);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                RunError::Setup(format!(
                    "model_facts.config: cannot read {}: {e}",
                    path.display()
                ))
            })?;
            Some(
                serde_json::from_str::<serde_json::Value>(&text).map_err(|e| {
                    RunError::Setup(format!(
                        "model_facts.config: {} is not JSON: {e} (line {}, column {})",
                        path.display(),
                        e.line(),
                        e.column()
                    ))
                })?,
            )
        }
        None => None,
    };
    servebench_spec::model_facts::resolve(facts, config.as_ref())
        .map(Some)
        .map_err(RunError::Setup)
}

/// Whether the spec's server runs on this host (launched here, not through Slurm), so the
/// host probe describes the server's host; otherwise only the client's.
pub(super) fn probe_on_server_host(spec: &servebench_spec::SpecFile) -> bool {
    spec.spec
        .server
        .as_ref()
        .is_some_and(|s| s.launcher.as_ref().is_none_or(|l| l.slurm.is_none()))
}
