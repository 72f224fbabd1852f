//! Orphans: a server group outliving its runner is found by pgid and stopped only when its
//! command line matches the record.

use crate::server_support;

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use servebench_runner::server::{
    OrphanError, OrphanStatus, ServerRecord, find_orphan, pick_free_port, stop_orphan,
};
use servebench_spec::{HumanDuration, StopPolicy, StopSignal};
use server_support::{alive, strings};

/// A process group like a server's: `sh` (argv kept as given, secret included) and a `sleep`.
fn spawn_group(tag: &str) -> (Child, Vec<String>) {
    let argv = strings(&["sh", "-c", "sleep 300 & wait", tag, "--api-key", "s3cr3t"]);
    let child = Command::new(&argv[0])
        .args(&argv[1..])
        .process_group(0)
        .spawn()
        .unwrap();
    // Until the exec is done, /proc shows another command line.
    let cmdline = format!("/proc/{}/cmdline", child.id());
    for _ in 0..500 {
        if std::fs::read(&cmdline).is_ok_and(|c| c.windows(tag.len()).any(|w| w == tag.as_bytes()))
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // …and until sh has forked, the group has one process.
    let pgid = i32::try_from(child.id()).unwrap();
    for _ in 0..500 {
        if group_size(pgid) >= 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    (child, argv)
}

/// Live processes whose process group is `pgid`.
fn group_size(pgid: i32) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                let f: Vec<&str> = s[s.rfind(')').unwrap_or(0) + 1..]
                    .split_whitespace()
                    .collect();
                f.get(2) == Some(&pgid.to_string().as_str()) && f.first() != Some(&"Z")
            })
        })
        .count()
}

fn record(pgid: i32, argv: Vec<String>, log: &std::path::Path) -> ServerRecord {
    ServerRecord {
        argv,
        env: Default::default(),
        working_dir: None,
        pid: u32::try_from(pgid).unwrap(),
        pgid,
        port: pick_free_port().unwrap(),
        log_path: log.to_owned(),
        started_at: "2025-01-01T00:00:00Z".into(),
        ready_after_s: 1.0,
    }
}

#[tokio::test]
async fn matching_orphan_is_stopped_with_its_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, argv) = spawn_group("servebench-orphan-a");
    let pgid = i32::try_from(child.id()).unwrap();
    // The record holds the redacted argv; `***` matches the secret.
    let redacted = strings(&[
        "sh",
        "-c",
        "sleep 300 & wait",
        "servebench-orphan-a",
        "--api-key",
        "***",
    ]);
    assert_eq!(find_orphan(pgid, &argv), OrphanStatus::AliveMatching);
    assert_eq!(find_orphan(pgid, &redacted), OrphanStatus::AliveMatching);

    let log = dir.path().join("server.log");
    std::fs::write(&log, "earlier server output\n").unwrap();
    let policy = StopPolicy {
        signal: StopSignal::SIGTERM,
        grace: HumanDuration::from_secs(5),
    };
    let report = stop_orphan(&record(pgid, redacted.clone(), &log), &policy)
        .await
        .unwrap()
        .expect("an alive group is stopped");
    assert!(report.exited_after_s.is_some(), "{report:?}");
    assert!(report.group_pids.len() >= 2, "sh and its sleep: {report:?}");
    for pid in &report.group_pids {
        assert!(!alive(*pid), "{pid} survived");
    }
    assert_eq!(report.exit_status, None, "not our child: no exit status");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("earlier server output\n"));
    assert!(
        text.contains("a later servebench run found this server"),
        "{text}"
    );

    // Our zombie child counts as gone.
    assert_eq!(find_orphan(pgid, &argv), OrphanStatus::Gone);
    child.wait().unwrap();
    assert_eq!(find_orphan(pgid, &argv), OrphanStatus::Gone);
    assert!(
        stop_orphan(&record(pgid, redacted, &log), &policy)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_different_command_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, _) = spawn_group("servebench-orphan-b");
    let pgid = i32::try_from(child.id()).unwrap();
    let other = strings(&["python3", "-m", "sglang.launch_server", "--port", "8000"]);
    let status = find_orphan(pgid, &other);
    let OrphanStatus::AliveDifferent { cmdline } = &status else {
        panic!("expected AliveDifferent, got {status:?}");
    };
    // What is shown of a foreign process is redacted too.
    assert_eq!(cmdline.last().map(String::as_str), Some("***"));

    let policy = StopPolicy {
        signal: StopSignal::SIGKILL,
        grace: HumanDuration::from_secs(1),
    };
    let err = stop_orphan(&record(pgid, other, &dir.path().join("x.log")), &policy)
        .await
        .unwrap_err();
    assert!(matches!(err, OrphanError::NotOurs { .. }), "{err:?}");
    assert!(err.to_string().contains("left alone"), "{err}");
    assert!(alive(pgid), "a foreign group must not be signalled");

    // Clean up the whole group (sh and its sleep).
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    child.wait().unwrap();
}

#[test]
fn unknown_pgids_are_gone() {
    // pid_max is at most 2^22 on Linux: this pid cannot exist.
    assert_eq!(
        find_orphan(i32::MAX - 7, &strings(&["x"])),
        OrphanStatus::Gone
    );
    assert_eq!(find_orphan(0, &strings(&["x"])), OrphanStatus::Gone);
    assert_eq!(find_orphan(1, &strings(&["x"])), OrphanStatus::Gone);
}
