//! Orphans: a server group left alive when the runner itself was killed (`SIGKILL`, OOM, a
//! lost terminal). A later run finds it by its recorded pgid and stops it, but only after
//! checking that the group's leader still runs the recorded command, so a reused pid is never
//! signalled.

use servebench_spec::StopPolicy;

use super::ServerRecord;
use super::error::OrphanError;
use super::group;
use super::log::ServerLog;
use super::redact::{REDACTED, redact_argv, shell_join};
use super::stop::{StopOptions, Target, stop_group};
use servebench_result::server::StopReport;

/// What is left of a recorded server's process group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrphanStatus {
    /// No live process of the group.
    Gone,
    /// The leader is alive and runs the recorded command.
    AliveMatching,
    /// A live process has the pid but runs something else (the pid was reused); its command
    /// line, redacted.
    AliveDifferent {
        /// The process's command line, redacted.
        cmdline: Vec<String>,
    },
    /// The leader is gone but members of the group live on (their command lines cannot be
    /// checked against the record).
    LeaderGone {
        /// The live members.
        members: Vec<i32>,
    },
}

/// What is left of the group `pgid` whose leader ran `expected_cmdline` (as recorded: a
/// redacted argv works, each `***` matching anything). Reads `/proc/<pgid>/stat` and
/// `/proc/<pgid>/cmdline`.
pub fn find_orphan(pgid: i32, expected_cmdline: &[String]) -> OrphanStatus {
    if pgid <= 1 {
        return OrphanStatus::Gone;
    }
    let leader = group::stat(pgid).filter(|s| !s.is_zombie() && s.pgrp == pgid);
    if leader.is_none() {
        return match group::live_members(pgid) {
            Ok(m) if m.is_empty() => OrphanStatus::Gone,
            Ok(members) => OrphanStatus::LeaderGone { members },
            Err(_) => OrphanStatus::Gone,
        };
    }
    match group::cmdline(pgid) {
        Ok(Some(actual)) if cmdline_matches(&actual, expected_cmdline) => {
            OrphanStatus::AliveMatching
        }
        Ok(Some(actual)) => OrphanStatus::AliveDifferent {
            cmdline: redact_argv(&actual, &[]),
        },
        // It exited between the two reads.
        Ok(None) => OrphanStatus::Gone,
        Err(_) => OrphanStatus::AliveDifferent {
            cmdline: Vec::new(),
        },
    }
}

/// Whether a process's command line `actual` is the recorded `expected` one: equal argument
/// by argument, where a `***` in `expected` (a redacted secret) matches any text at its place;
/// or `expected` preceded by an interpreter (a script started through its `#!` line shows as
/// `/bin/sh ./serve.sh …`).
pub fn cmdline_matches(actual: &[String], expected: &[String]) -> bool {
    if expected.is_empty() || actual.len() < expected.len() {
        return false;
    }
    let tail = &actual[actual.len() - expected.len()..];
    let same = tail.iter().zip(expected).all(|(a, e)| arg_matches(a, e));
    same && (actual.len() == expected.len() || actual.len() - expected.len() <= 2)
}

/// `expected` with each `***` as a wildcard.
fn arg_matches(actual: &str, expected: &str) -> bool {
    if !expected.contains(REDACTED) {
        return actual == expected;
    }
    let parts: Vec<&str> = expected.split(REDACTED).collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Stops the orphaned group of `record` (its stop policy `policy`), appending the timeline to
/// its log: `Ok(None)` when nothing of it is alive, `Ok(Some(report))` when it was stopped.
/// A group whose leader runs another command, or whose leader is gone, is left alone (error).
pub async fn stop_orphan(
    record: &ServerRecord,
    policy: &StopPolicy,
) -> Result<Option<StopReport>, OrphanError> {
    stop_orphan_with(record, policy, &StopOptions::default()).await
}

/// [`stop_orphan`] with explicit waits.
pub async fn stop_orphan_with(
    record: &ServerRecord,
    policy: &StopPolicy,
    opts: &StopOptions,
) -> Result<Option<StopReport>, OrphanError> {
    match find_orphan(record.pgid, &record.argv) {
        OrphanStatus::Gone => Ok(None),
        OrphanStatus::AliveDifferent { cmdline } => Err(OrphanError::NotOurs {
            pgid: record.pgid,
            expected: shell_join(&record.argv),
            found: shell_join(&cmdline),
        }),
        OrphanStatus::LeaderGone { members } => Err(OrphanError::LeaderGone {
            pgid: record.pgid,
            members,
        }),
        OrphanStatus::AliveMatching => {
            let log = ServerLog::existing(&record.log_path);
            log.event(&format!(
                "a later servebench run found this server (process group {}) still alive \
                 and stops it",
                record.pgid
            ));
            let target = Target {
                pgid: record.pgid,
                child: None,
                reaped: None,
                port: Some(record.port),
                log: Some(&log),
            };
            Ok(Some(stop_group(target, policy, opts).await))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn matching_rules() {
        let e = v(&["python3", "-m", "sglang.launch_server", "--api-key", "***"]);
        assert!(cmdline_matches(
            &v(&[
                "python3",
                "-m",
                "sglang.launch_server",
                "--api-key",
                "s3cr3t"
            ]),
            &e
        ));
        assert!(!cmdline_matches(
            &v(&["python3", "-m", "vllm", "--api-key", "s3cr3t"]),
            &e
        ));
        assert!(cmdline_matches(
            &v(&["x", "--api-key=abc"]),
            &v(&["x", "--api-key=***"])
        ));
        assert!(!cmdline_matches(
            &v(&["x", "--other=abc"]),
            &v(&["x", "--api-key=***"])
        ));
        // A script run through its interpreter.
        assert!(cmdline_matches(
            &v(&["/bin/sh", "./serve.sh", "8000"]),
            &v(&["./serve.sh", "8000"])
        ));
        assert!(!cmdline_matches(&v(&["sleep", "30"]), &v(&["sleep", "31"])));
        assert!(!cmdline_matches(&v(&["sleep"]), &v(&["sleep", "30"])));
        assert!(!cmdline_matches(&v(&["a"]), &[]));
    }
}
