//! The engine's trace files in a start's trace directory: which files are traces, and when
//! they are whole enough to read (kernel evidence, docs/kernels.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use servebench_engines::ProfilerFacts;
use servebench_result::kernels::{RankKernels, read_rank};

/// How long a trace file's size must hold still before it is read.
pub(super) const STABLE_FOR: Duration = Duration::from_millis(1000);

/// The engine's trace files in `dir` (named with one of its `suffixes`; not hidden, not
/// `.tmp`) with their size and modification time. Anything else the directory holds — vLLM's
/// text tables beside its traces, a user's notes — is not read.
pub(super) fn listing(
    dir: &Path,
    suffixes: &[&str],
) -> BTreeMap<PathBuf, (u64, Option<SystemTime>)> {
    let mut out = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !suffixes.iter().any(|x| name.ends_with(x)) {
            continue;
        }
        if let Ok(m) = e.metadata()
            && m.is_file()
        {
            out.insert(e.path(), (m.len(), m.modified().ok()));
        }
    }
    out
}

/// How long the new traces' sizes must hold still before they are read: not at all where
/// the engine answers its stop only once they are written (SGLang, servebench's transformers
/// launcher), unless they go to storage shared between nodes, where another node's file may
/// show late; else [`STABLE_FOR`].
pub(super) fn hold_for(facts: &ProfilerFacts, shared_storage: bool) -> Duration {
    if facts.written_by_stop && !shared_storage {
        Duration::ZERO
    } else {
        STABLE_FOR
    }
}

/// Waits until the files new (or changed) since `before` hold still for `hold`, then
/// reads them; a trace that does not parse yet (still being written) is waited for too,
/// until `timeout`. Each file's bytes and its aggregate.
pub(super) async fn wait_and_read(
    dir: &Path,
    suffixes: &[&str],
    before: &BTreeMap<PathBuf, (u64, Option<SystemTime>)>,
    timeout: Duration,
    hold: Duration,
) -> Result<Vec<(u64, RankKernels)>, String> {
    let deadline = Instant::now() + timeout;
    let mut last: BTreeMap<PathBuf, (u64, Option<SystemTime>)> = BTreeMap::new();
    let mut still_since = Instant::now();
    loop {
        let now: BTreeMap<_, _> = listing(dir, suffixes)
            .into_iter()
            .filter(|(p, m)| before.get(p) != Some(m))
            .collect();
        if now != last {
            last = now.clone();
            still_since = Instant::now();
        }
        if !now.is_empty() && still_since.elapsed() >= hold {
            let files: Vec<(PathBuf, u64)> = now.iter().map(|(p, m)| (p.clone(), m.0)).collect();
            let read = tokio::task::spawn_blocking(move || {
                files
                    .into_iter()
                    .map(|(p, len)| read_rank(&p).map(|r| (len, r)))
                    .collect::<Result<Vec<_>, _>>()
            })
            .await
            .map_err(|e| format!("reading the traces: {e}"))?;
            match read {
                Ok(ranks) => return Ok(ranks),
                // Still being written: wait for it to change.
                Err(e) if e.is_incomplete() && Instant::now() < deadline => {
                    still_since = Instant::now();
                }
                // Not a trace (not JSON, a gzip bomb, unreadable): waiting cannot mend it.
                Err(e) => return Err(e.to_string()),
            }
        }
        if Instant::now() >= deadline {
            return Err(if last.is_empty() {
                format!(
                    "no trace appeared in {} within {:.0} s of the profiler's stop (is it readable from this host? under Slurm it must be shared storage)",
                    dir.display(),
                    timeout.as_secs_f64()
                )
            } else {
                format!(
                    "the traces in {} were still growing {:.0} s after the profiler's stop",
                    dir.display(),
                    timeout.as_secs_f64()
                )
            });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
