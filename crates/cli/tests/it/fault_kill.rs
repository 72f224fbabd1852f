//! The fault matrix of docs/reliability.md, part 4: a real `servebench run` against the
//! simulator SIGKILLed at a controlled moment, then `run --resume` — a sidecar frame left
//! half-written, a trace edited in between, a server killed while it was starting. No resume
//! loses or mixes measured data silently.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{read_json, repo, sb, walk, write_spec};

fn tiny_spec() -> String {
    std::fs::read_to_string(repo().join("crates/cli/tests/specs/tiny-ab.yaml")).expect("tiny spec")
}

/// `servebench run SPEC` in `dir`, in the background.
fn start_run(dir: &Path, spec: &Path) -> Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("servebench"))
        .args(["run", "--no-bars"])
        .arg(spec)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn run")
}

/// Polls the run's result file until `ready` holds of it, then SIGKILLs the runner; the file.
fn kill_when(mut child: Child, dir: &Path, ready: impl Fn(&Value) -> bool) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(60);
    let path = loop {
        assert!(Instant::now() < deadline, "the moment never came in 60 s");
        std::thread::sleep(Duration::from_millis(2));
        let found = walk(&dir.join("results")).into_iter().find(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("")
                    .starts_with('.')
        });
        if let Some(p) = found
            && let Ok(v) =
                serde_json::from_str::<Value>(&std::fs::read_to_string(&p).unwrap_or_default())
            && ready(&v)
        {
            break p;
        }
    };
    child.kill().expect("SIGKILL the runner");
    let _ = child.wait();
    path
}

fn count(v: &Value, key: &str) -> usize {
    v[key].as_array().map_or(0, Vec::len)
}

fn resume(dir: &Path, result: &Path) -> (i32, String) {
    let out = sb(dir)
        .args(["run", "--no-bars", "--resume"])
        .arg(result)
        .output()
        .expect("resume");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Measured request records per trial seq in the result's sidecar.
fn records(result: &Path) -> std::collections::BTreeMap<usize, usize> {
    servebench_result::ResultStore::for_result(result)
        .measured_counts()
        .expect("the sidecar reads")
}

#[test]
fn a_half_written_sidecar_frame_is_measured_again_on_resume() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = tiny_spec()
        .replace("count: 2", "count: 3")
        .replace("requests: 8", "requests: 24")
        .replace("[1, 4]", "[1, 2]");
    let spec = write_spec(dir.path(), &text);
    // Block 1's two trials are on disk and block 2's server is up: the runner is inside
    // trial 3, which has appended nothing yet.
    let path = kill_when(start_run(dir.path(), &spec), dir.path(), |v| {
        count(v, "trials") == 2 && count(v, "servers") == 2
    });
    let before = read_json(&path);
    assert_eq!(
        records(&path).get(&1),
        Some(&24),
        "trial 2's frame is whole"
    );
    // The kill cut trial 2's frame short: its last bytes never reached the disk.
    let sidecar = path.with_file_name(before["requests_file"].as_str().expect("sidecar"));
    let len = std::fs::metadata(&sidecar).expect("sidecar").len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&sidecar)
        .expect("open")
        .set_len(len - 40)
        .expect("cut");
    let (code, err) = resume(dir.path(), &path);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("trial 1 (`base`, t=1, point 1) has 0 of its 24 request records")
            && err.contains("it is measured again"),
        "{err}"
    );
    let after = read_json(&path);
    assert_eq!(after["status"], "complete");
    let trials = after["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 12);
    // Every trial has all its records; trial 1 kept, trial 2 measured again.
    let counts = records(&path);
    assert_eq!(counts.len(), 12, "{counts:?}");
    assert!(counts.values().all(|&n| n == 24), "{counts:?}");
    let first = |r: &Value| r["trials"].as_array().expect("t")[0].clone();
    assert_eq!(
        first(&after),
        first(&before),
        "trial 1 is byte for byte the same"
    );
    let again = trials.iter().find(|t| t["seq"] == 1).expect("seq 1");
    assert_ne!(again["started_at"], before["trials"][1]["started_at"]);
}

/// A trace spec on the simulator (the plain fixture, 40 requests in 0.2 s), 3 trials.
fn trace_spec() -> String {
    r#"apiVersion: servebench/v1alpha1
kind: Experiment
metadata: {name: trace-kill}
spec:
  server:
    command: ["${servebench}", sim]
    args: [--port, "${port}", --preset, fast, --seed, "7"]
    readiness: {http: {path: /health}, interval: 20ms, timeout: 20s}
    stop: {signal: SIGTERM, grace: 5s}
  target: {api: openai-completions, model: sim-model, tokenizer: server}
  variants:
    - {name: base, baseline: true}
  workload:
    dataset: {kind: trace, path: trace.jsonl}
    seed: 5
    warmup_requests: 0
    request_timeout: 20s
  trials: {count: 3, cooldown: 300ms}
"#
    .to_owned()
}

#[test]
fn a_trace_edited_between_the_kill_and_the_resume_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let trace =
        std::fs::read_to_string(repo().join("crates/runner/tests/fixtures/trace-plain.jsonl"))
            .expect("fixture");
    std::fs::write(dir.path().join("trace.jsonl"), &trace).expect("trace");
    let spec = write_spec(dir.path(), &trace_spec());
    let path = kill_when(start_run(dir.path(), &spec), dir.path(), |v| {
        count(v, "trials") == 1
    });
    let before = std::fs::read(&path).expect("result");
    let r = read_json(&path);
    assert!(
        r["provenance"]["inputs"][0]["sha256"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:")),
        "{}",
        r["provenance"]
    );
    // One more request at the end: trials of two traces must not be pooled.
    let edited =
        format!("{trace}{{\"timestamp\": 400, \"input_tokens\": 8, \"output_tokens\": 2}}\n");
    std::fs::write(dir.path().join("trace.jsonl"), edited).expect("edit");
    let (code, err) = resume(dir.path(), &path);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("trace.jsonl changed since the run began"),
        "{err}"
    );
    assert!(
        err.contains("Restore the file, or start a new run"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&path).expect("result"),
        before,
        "the result is untouched"
    );
    // Restored, the run resumes and completes.
    std::fs::write(dir.path().join("trace.jsonl"), &trace).expect("restore");
    let (code, err) = resume(dir.path(), &path);
    assert_eq!(code, 0, "{err}");
    let r = read_json(&path);
    assert_eq!(r["status"], "complete");
    assert_eq!(count(&r, "trials"), 3);
}

#[test]
fn a_server_being_started_when_servebench_was_killed_is_stopped_by_the_resume() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = tiny_spec()
        .replace("count: 2", "count: 1")
        .replace("[1, 4]", "[1]")
        .replace(
            r#"--jitter-cv, "0.02"]"#,
            r#"--jitter-cv, "0.02", --startup-delay-ms, "3000"]"#,
        );
    let spec = write_spec(dir.path(), &text);
    // The first server is spawned (its group recorded) but not ready yet.
    let path = kill_when(start_run(dir.path(), &spec), dir.path(), |v| {
        v["servers"][0]["pgid"].is_i64() && v["servers"][0]["ready_after_s"].is_null()
    });
    let r = read_json(&path);
    let pgid = r["servers"][0]["pgid"].as_i64().expect("pgid");
    assert!(
        Path::new(&format!("/proc/{pgid}")).exists(),
        "the server outlived its runner"
    );
    let (code, err) = resume(dir.path(), &path);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!(
            "server group {pgid} (base) from the interrupted run is still alive: stopping it"
        )),
        "{err}"
    );
    assert!(
        !Path::new(&format!("/proc/{pgid}")).exists(),
        "orphan {pgid} still alive"
    );
    let r = read_json(&path);
    assert_eq!(r["status"], "complete");
    assert_eq!(count(&r, "trials"), 2);
}

#[test]
fn a_probe_prompt_file_edited_before_a_resume_is_refused_and_the_killed_runs_server_stopped() {
    let dir = tempfile::tempdir().expect("tmp");
    let trace =
        std::fs::read_to_string(repo().join("crates/runner/tests/fixtures/trace-plain.jsonl"))
            .expect("fixture");
    std::fs::write(dir.path().join("trace.jsonl"), &trace).expect("trace");
    let probe = "{\"prompt\": \"Name a colour.\"}\n{\"prompt\": \"Name a fruit.\"}\n";
    std::fs::write(dir.path().join("probe.jsonl"), probe).expect("probe");
    // One start for the three trials: killed after trial 1, the server is mid-run, never
    // mid-stop (per block, the runner may already be stopping it when the kill lands, and a
    // server that exits on its own is rightly not named by the resume).
    let text = format!(
        "{}  equivalence: {{prompts_file: probe.jsonl, output_tokens: 4}}\n",
        trace_spec().replace("cooldown: 300ms}", "cooldown: 300ms, server_restart: once}")
    );
    let spec = write_spec(dir.path(), &text);
    let path = kill_when(start_run(dir.path(), &spec), dir.path(), |v| {
        count(v, "trials") == 1
    });
    let r = read_json(&path);
    let pgid = r["servers"][0]["pgid"].as_i64().expect("pgid");
    assert!(Path::new(&format!("/proc/{pgid}")).exists(), "outlived");
    // Block 1 was probed with these prompts: the rest must not be probed with others.
    std::fs::write(
        dir.path().join("probe.jsonl"),
        probe.replace("fruit", "metal"),
    )
    .expect("edit");
    let (code, err) = resume(dir.path(), &path);
    // Before: resumed (exit 0), its blocks probed with two different prompt files.
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("probe.jsonl changed since the run began"),
        "{err}"
    );
    // Before: the refused resume left the killed run's server running without a word.
    assert!(
        err.contains(&format!(
            "server group {pgid} (base) from the interrupted run"
        )),
        "{err}"
    );
    let gone = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pgid}")).exists() && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !Path::new(&format!("/proc/{pgid}")).exists(),
        "{pgid} alive"
    );
}
