//! Helpers of the Slurm end-to-end tests: the test cluster's environment (or `NOT RUN`),
//! `salloc` on this host, the two-node spec, and one test at a time on the cluster's nodes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::repo;

/// The tests share the cluster's two nodes (an allocation of two waits for the other's):
/// one at a time.
pub(crate) static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The cluster's environment (`SLURM_CONF`, …) when it runs; `None` (and `NOT RUN`) when it
/// does not, a panic under CI.
pub(crate) fn cluster() -> Option<BTreeMap<String, String>> {
    let script = repo().join("scripts/slurm-test-cluster");
    let up = Command::new(&script)
        .arg("status")
        .output()
        .is_ok_and(|o| o.status.success());
    if !up {
        if std::env::var_os("CI").is_some() {
            panic!(
                "the Slurm test cluster is not running: CI must run `scripts/slurm-test-cluster start` before the tests"
            );
        }
        eprintln!(
            "NOT RUN: the Slurm test cluster is not running; start it with `scripts/slurm-test-cluster start` (about 5 s, root)"
        );
        return None;
    }
    let out = Command::new(&script).arg("env").output().expect("env");
    let env = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Some(env)
}

pub(crate) fn servebench_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("servebench")
}

/// `salloc -N{nodes}` running `cmd…` on this host inside the allocation (bounded: 5 min).
pub(crate) fn salloc(
    env: &BTreeMap<String, String>,
    nodes: u32,
    dir: &Path,
    cmd: &[&str],
) -> Output {
    let mut c = Command::new("timeout");
    c.arg("300")
        .arg("salloc")
        .args([
            "-Q",
            &format!("-N{nodes}"),
            "--ntasks-per-node=1",
            "-t",
            "5",
        ])
        .args(["-J", "servebench-test", "--"])
        .args(cmd)
        .current_dir(dir)
        .envs(env)
        .env_remove("SLURM_JOB_ID")
        .env("NO_COLOR", "1");
    c.output().expect("salloc")
}

/// The 2-node simulator spec, copied into `dir`, made small by `--set` on the command line.
pub(crate) fn spec_in(dir: &Path) -> PathBuf {
    let p = dir.join("sim-ab-2node.yaml");
    std::fs::copy(repo().join("specs/sim-ab-2node.yaml"), &p).expect("copy spec");
    p
}

pub(crate) fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub(crate) fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}
