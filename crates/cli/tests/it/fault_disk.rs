//! Issue 50: a disk that fills during a run. The run writes its results on a small tmpfs of
//! its own (a user and mount namespace, `unshare -rm`), which a filler file fills completely
//! once the first trial is on disk. Every trial measured is kept — the one whose write found
//! the disk full included, written into the space servebench keeps in reserve beside the
//! result — the result stays resumable, and the message says how to free space and resume.
//! Before, the last trial was lost with its records, and the rescue file in the temporary
//! folder (on the same full disk) could not be written either.

use std::path::Path;
use std::process::Command;

use crate::common::faults::{sidecar, sim_spec};
use crate::common::{read_json, sb, scratch, walk};

/// Requests per trial: a trial's records are a zstd frame of some 20 kB.
const REQUESTS: u32 = 120;

/// Whether this machine lets a test mount a tmpfs of its own (unprivileged user namespaces).
fn own_tmpfs_allowed(dir: &Path) -> bool {
    Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c"])
        .arg("mount -t tmpfs -o size=1m tmpfs \"$0\"")
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success())
}

/// The run on a 12 MiB tmpfs at `dir/disk`, filled to the last byte once the first trial
/// is in the result file; the results and the exit status copied out to `dir/out`, `dir/rc`.
const SCRIPT: &str = r#"
set -u
D=$0; BIN=$1
mount -t tmpfs -o size=12m tmpfs "$D/disk" || exit 90
cp "$D/spec.yaml" "$D/disk/spec.yaml"
cd "$D/disk"
TMPDIR="$D/disk" "$BIN" run --no-bars spec.yaml 2> "$D/stderr" &
pid=$!
until grep -qs '"seq": 0' results/*/*.json; do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.02
done
dd if=/dev/zero of=filler bs=64k 2>/dev/null
wait "$pid"; echo $? > "$D/rc"
cp -a results "$D/out"
"#;

#[test]
fn a_disk_that_fills_mid_run_keeps_every_trial_and_leaves_a_resumable_result() {
    let dir = scratch("fault_disk", "full");
    std::fs::create_dir_all(dir.join("disk")).expect("mount point");
    if !own_tmpfs_allowed(&dir.join("disk")) {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must allow `unshare --user --mount` for the full-disk test"
        );
        eprintln!("NOT RUN: this machine does not allow a tmpfs in a user namespace");
        return;
    }
    let spec = sim_spec("", REQUESTS, 8, "20s").replace(
        "trials: {count: 1}",
        "trials: {count: 8, server_restart: once}",
    );
    std::fs::write(dir.join("spec.yaml"), &spec).expect("spec");
    let status = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", SCRIPT])
        .arg(&dir)
        .arg(assert_cmd::cargo::cargo_bin("servebench"))
        .status()
        .expect("unshare");
    assert!(status.success(), "{status:?}");
    let stderr = std::fs::read_to_string(dir.join("stderr")).unwrap_or_default();
    let rc = std::fs::read_to_string(dir.join("rc")).unwrap_or_default();
    assert_eq!(rc.trim(), "2", "{stderr}");
    let result = walk(&dir.join("out"))
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a result file");
    let r = read_json(&result);
    let kept = r["trials"].as_array().map_or(0, Vec::len);
    // Every trial the run finished (its progress line "#N only t=N point [0]: … ok / 0
    // failed") is in the file, with every one of its records. Before: the last one was not.
    let finished = stderr.lines().filter(|l| l.contains(" ok / ")).count();
    assert!(finished >= 2, "{stderr}");
    assert_eq!(kept, finished, "{stderr}");
    let lines = sidecar(&result);
    assert_eq!(lines.len(), kept * REQUESTS as usize, "{stderr}");
    assert!(
        stderr.contains("is full")
            && stderr.contains("every trial measured so far is in")
            && stderr.contains("servebench run --resume"),
        "{stderr}"
    );
    assert!(!stderr.contains("could not be saved anywhere"), "{stderr}");
    // Room again (the copy out of the full disk): the resume completes the run.
    let work = dir.join("out").parent().expect("dir").to_owned();
    std::fs::rename(dir.join("out"), work.join("results")).expect("results back");
    let result = walk(&work.join("results"))
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a result file");
    let out = sb(&work)
        .args(["run", "--no-bars", "--resume"])
        .arg(&result)
        .output()
        .expect("resume");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = read_json(&result);
    assert_eq!(r["status"], "complete");
    assert_eq!(r["trials"].as_array().map(Vec::len), Some(8));
    assert_eq!(sidecar(&result).len(), 8 * REQUESTS as usize);
}
