//! The fault matrix of docs/reliability.md, part 3: the host — the server's port already
//! taken, the disk full mid-run.

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;
use common::faults::*;
use common::read_json;

#[test]
fn a_port_already_taken_fails_the_start_at_once_with_the_servers_own_message() {
    // The spec pins the server to a port this test holds. The server cannot bind it and
    // exits; servebench says so at once (not after the 30 s readiness timeout), with the
    // log's tail, and records the trial as failed.
    let held = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = held.local_addr().expect("addr").port();
    // `${port}` must appear in the server block (validation refuses a spec without it), so
    // it goes to an unused variable and the server is pinned to the held port, as a server
    // whose own side port (metrics, distributed init) is taken.
    let spec = sim_spec("", 4, 1, "20s")
        .replace(r#"--port, "${port}""#, &format!(r#"--port, "{port}""#))
        .replace(
            "    stop: {signal",
            "    env: {UNUSED_PORT: \"${port}\"}\n    stop: {signal",
        )
        .replace("timeout: 20s}", "timeout: 30s}");
    let started = Instant::now();
    let (dir, code, out) = run_spec(&spec);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("before it was ready"), "{out}");
    assert!(
        out.to_lowercase().contains("address already in use"),
        "{out}"
    );
    let r = read_json(&result_file(dir.path()));
    let t = &r["trials"][0];
    assert_eq!(t["status"], "failed");
    assert!(
        t["failure"]
            .as_str()
            .is_some_and(|f| f.contains("before it was ready")),
        "{t}"
    );
    drop(held);
}

/// A file-size limit as `ulimit -f` sets it (RLIMIT_FSIZE, set in the child before exec;
/// SIGXFSZ left at its default, which terminates): servebench must get EFBIG instead of being
/// killed, rescue what it measured, stop its server and say where everything is.
#[test]
#[allow(unsafe_code)]
fn a_file_size_limit_fails_writes_with_efbig_instead_of_killing_the_run() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().expect("tmp");
    let spec = sim_spec("", REQUESTS as u32, 16, "20s")
        .replace("output_tokens: 8", "output_tokens: 40")
        .replace(
            "trials: {count: 1}",
            "trials: {count: 6, server_restart: once}",
        );
    let path = write_spec(dir.path(), &spec);
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("servebench"));
    cmd.current_dir(dir.path())
        .args(["run", "--no-bars"])
        .arg(&path);
    // SAFETY: between fork and exec only setrlimit(2), which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::resource::setrlimit(
                nix::sys::resource::Resource::RLIMIT_FSIZE,
                160_000,
                160_000,
            )
            .map_err(std::io::Error::from)
        });
    }
    let out = cmd.output().expect("run under RLIMIT_FSIZE");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // Before: killed by SIGXFSZ (no exit code), the trial being written lost, the server
    // left running.
    assert_eq!(out.status.code(), Some(2), "{:?}\n{stderr}", out.status);
    assert!(stderr.contains("File too large"), "{stderr}");
    let rescue = stderr
        .split_whitespace()
        .find(|w| w.contains("servebench-rescue-") && w.contains(".requests.jsonl"))
        .map(|w| w.trim_end_matches([';', '.', ',']).to_owned())
        .unwrap_or_else(|| panic!("no rescue path in: {stderr}"));
    assert_eq!(
        crate::common::faults::sidecar_lines(Path::new(&rescue)).len(),
        REQUESTS,
        "the last trial's records are rescued"
    );
    let _ = std::fs::remove_file(&rescue);
    assert!(stderr.contains("stopping the server"), "{stderr}");
    let r = read_json(&result_file(dir.path()));
    let pgid = r["servers"][0]["pgid"].as_i64().expect("pgid");
    assert!(
        !Path::new(&format!("/proc/{pgid}")).exists(),
        "the server {pgid} was left running"
    );
}

/// Requests per trial of the full-disk test.
const REQUESTS: usize = 400;

#[test]
fn a_full_disk_keeps_every_trial_and_says_where_the_requests_went() {
    // Files may grow to 160 KB (RLIMIT_FSIZE through prlimit; SIGXFSZ ignored so writes fail
    // with EFBIG as on a full disk). Each trial appends one zstd frame of ~60 KB of request
    // records (400 requests), so the sidecar append of trial 3 fails while the result file
    // (~50 KB) still fits.
    let dir = tempfile::tempdir().expect("tmp");
    let spec = sim_spec("", REQUESTS as u32, 16, "20s")
        .replace("output_tokens: 8", "output_tokens: 40")
        .replace(
            "trials: {count: 1}",
            "trials: {count: 6, server_restart: once}",
        );
    let path = write_spec(dir.path(), &spec);
    let bin = assert_cmd::cargo::cargo_bin("servebench");
    let out = std::process::Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg(r#"trap '' XFSZ; exec prlimit --fsize=160000 -- "$@""#)
        .arg("sh")
        .arg(&bin)
        .args(["run", "--no-bars"])
        .arg(&path)
        .output()
        .expect("run under prlimit");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    let result = result_file(dir.path());
    let r = read_json(&result);
    let kept = r["trials"].as_array().map_or(0, Vec::len);
    assert!((2..6).contains(&kept), "kept {kept}\n{stderr}");
    // The sidecar holds whole trials only: every earlier trial, none of the failed append.
    let lines = sidecar(&result);
    assert_eq!(lines.len(), (kept - 1) * REQUESTS, "{stderr}");
    assert!(
        lines
            .iter()
            .all(|l| l["seq"].as_u64().expect("seq") < kept as u64 - 1)
    );
    // The error names the rescue file of the last trial's requests and the result file.
    let rescue = stderr
        .split_whitespace()
        .find(|w| w.contains("servebench-rescue-") && w.contains(".requests.jsonl"))
        .map(|w| w.trim_end_matches([';', '.', ',']))
        .unwrap_or_else(|| panic!("no rescue path in: {stderr}"));
    assert!(stderr.contains(&result.display().to_string()), "{stderr}");
    let rescued: Vec<Value> = crate::common::faults::sidecar_lines(Path::new(rescue));
    assert_eq!(rescued.len(), REQUESTS);
    assert!(
        rescued
            .iter()
            .all(|l| l["seq"].as_u64() == Some(kept as u64 - 1))
    );
    // Put the rescued lines back as the message says, and finish the run with room to write.
    let sidecar_path = result.with_file_name(r["requests_file"].as_str().expect("name"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&sidecar_path)
        .expect("open sidecar");
    f.write_all(&std::fs::read(rescue).expect("read rescue"))
        .expect("append");
    let _ = std::fs::remove_file(rescue);
    sb(dir.path())
        .args(["run", "--no-bars", "--resume"])
        .arg(&result)
        .assert()
        .code(0);
    let r = read_json(&result);
    assert_eq!(r["status"], "complete");
    assert_eq!(r["trials"].as_array().map(Vec::len), Some(6));
    assert_eq!(sidecar(&result).len(), 6 * REQUESTS);
}
