//! `servebench run` end to end against the embedded simulator (launched by the spec as
//! `${servebench} sim`): order, restarts, verify, readiness, a server that dies mid-trial,
//! interruption and `--resume`, and the result file against its committed schema.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;
use common::{read_json, repo, result_file, sb, walk, write_spec};

fn tiny_spec() -> String {
    std::fs::read_to_string(repo().join("crates/cli/tests/specs/tiny-ab.yaml")).expect("tiny spec")
}

fn validate_against(schema_file: &str, doc: &Value) {
    let schema = read_json(&repo().join("schemas").join(schema_file));
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{schema_file}: {errors:#?}");
}

#[test]
fn runs_in_plan_order_with_restarts_and_a_valid_result() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = write_spec(dir.path(), &tiny_spec());
    let plan = sb(dir.path())
        .args(["plan", "--json"])
        .arg(&spec)
        .assert()
        .code(0);
    let plan: Value = serde_json::from_slice(&plan.get_output().stdout).expect("plan json");
    let out = sb(dir.path())
        .args(["run", "--no-bars"])
        .arg(&spec)
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("output_throughput (tok/s), mean [95% CI] over trials"),
        "{stdout}"
    );

    let path = result_file(dir.path());
    let r = read_json(&path);
    assert_eq!(r["status"], "complete");
    assert_eq!(r["spec_hash"], plan["spec_hash"]);
    // Trials in exactly the plan's order.
    let planned: Vec<(String, u64, u64)> = plan["blocks"]
        .as_array()
        .expect("blocks")
        .iter()
        .flat_map(|b| b["trials"].as_array().cloned().unwrap_or_default())
        .map(|t| {
            (
                t["variant"].as_str().unwrap_or("").to_owned(),
                t["trial"].as_u64().unwrap_or(0),
                t["point"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let ran: Vec<(String, u64, u64)> = r["trials"]
        .as_array()
        .expect("trials")
        .iter()
        .map(|t| {
            (
                t["variant"].as_str().unwrap_or("").to_owned(),
                t["trial"].as_u64().unwrap_or(0),
                t["point"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(ran, planned);
    assert!(
        r["trials"]
            .as_array()
            .expect("trials")
            .iter()
            .all(|t| t["status"] == "ok")
    );
    // One server start per block, each verified and stopped, in block order.
    let servers = r["servers"].as_array().expect("servers");
    assert_eq!(
        servers.len(),
        plan["blocks"].as_array().map(Vec::len).unwrap_or(0)
    );
    for (i, s) in servers.iter().enumerate() {
        assert_eq!(s["block"], i);
        assert!(
            s["verify"]
                .as_array()
                .is_some_and(|v| v.len() == 2 && v.iter().all(|x| x["passed"] == true)),
            "{s}"
        );
        assert!(s["stop"].is_object(), "server {i} has no stop record");
        assert!(Path::new(s["log_path"].as_str().unwrap_or("")).exists());
    }
    // Provenance and the committed schemas.
    assert!(r["host"]["cores"].as_u64().is_some_and(|c| c >= 1));
    validate_against("result.schema.json", &r);
    let sidecar = path.with_file_name(r["requests_file"].as_str().expect("sidecar name"));
    let lines: Vec<Value> = common::faults::sidecar_lines(&sidecar);
    // 8 trials × (8 measured + 1 warm-up) requests.
    assert_eq!(lines.len(), 8 * 9);
    for l in lines.iter().take(5) {
        validate_against("requests.schema.json", l);
    }
}

#[test]
fn a_verify_failure_stops_that_variant_with_a_clear_message() {
    let dir = tempfile::tempdir().expect("tmp");
    // The candidate claims label `cand` but the server is launched as `other`.
    let text = tiny_spec().replace(
        "server: {args: [--label, cand,",
        "server: {args: [--label, other,",
    );
    let spec = write_spec(dir.path(), &text);
    let out = sb(dir.path())
        .args(["run", "--no-bars"])
        .arg(&spec)
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("verify failed for variant `cand`"),
        "{stderr}"
    );
    let r = read_json(&result_file(dir.path()));
    for t in r["trials"].as_array().expect("trials") {
        if t["variant"] == "cand" {
            assert_eq!(t["status"], "failed");
            assert!(
                t["failure"]
                    .as_str()
                    .is_some_and(|f| f.contains("verify failed")),
                "{t}"
            );
        } else {
            assert_eq!(t["status"], "ok");
        }
    }
    // The refused variant's server was started once, then never again.
    let cand_starts = r["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .filter(|s| s["variant"] == "cand")
        .count();
    assert_eq!(cand_starts, 1);
    // Issue 41, item 4: no comparison is left, so the run stops — the baseline is not
    // started again — and says so once, with what the server reported and the trials
    // never tried (not counted as failed).
    let base_starts = r["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .filter(|s| s["variant"] == "base")
        .count();
    assert_eq!(base_starts, 1, "the baseline is not started again");
    assert_eq!(r["trials"].as_array().expect("trials").len(), 4);
    assert_eq!(
        stderr.matches("verify failed for variant `cand`:").count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("4 trial(s) were never tried")
            && stderr.contains("the run stopped: no comparison was left to make"),
        "{stderr}"
    );
    // compare says it once, first, and advises no more trials.
    let out = sb(dir.path())
        .arg("compare")
        .arg(result_file(dir.path()))
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        text.lines()
            .nth(1)
            .unwrap_or("")
            .starts_with("VERIFY FAILED — verify failed for variant `cand`"),
        "{text}"
    );
    assert_eq!(
        text.matches("verify failed for variant `cand`").count(),
        1,
        "{text}"
    );
    assert!(!text.contains("advice:"), "{text}");
    // The report says the start failed verify (it said "failed to start").
    let report = dir.path().join("report");
    sb(dir.path())
        .arg("report")
        .arg(result_file(dir.path()))
        .arg("-o")
        .arg(&report)
        .assert()
        .code(0);
    let md = std::fs::read_to_string(report.join("report.md")).expect("report.md");
    assert!(
        md.contains("1 failed verify") && !md.contains("failed to start"),
        "{md}"
    );
}

#[test]
fn a_readiness_timeout_shows_the_log_tail() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = tiny_spec()
        .replace(
            "--jitter-cv, \"0.02\"]",
            "--jitter-cv, \"0.02\", --startup-delay-ms, \"5000\"]",
        )
        .replace(
            "interval: 50ms, timeout: 20s",
            "interval: 50ms, timeout: 500ms",
        )
        .replace("count: 2", "count: 1");
    let spec = write_spec(dir.path(), &text);
    let out = sb(dir.path())
        .args(["run", "--no-bars"])
        .arg(&spec)
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.to_lowercase().contains("ready"), "{stderr}");
    // The log tail shows the simulator's own start line.
    assert!(stderr.contains("servebench sim: start"), "{stderr}");
}

#[test]
fn a_server_that_exits_mid_trial_fails_that_trial_and_keeps_earlier_ones() {
    let dir = tempfile::tempdir().expect("tmp");
    // Each block sends 2 × (1 warm-up + 8) = 18 requests; exiting after 12 kills trial 2.
    let text = tiny_spec()
        .replace(
            "--jitter-cv, \"0.02\"]",
            "--jitter-cv, \"0.02\", --exit-after-requests, \"12\"]",
        )
        .replace("count: 2", "count: 1");
    let spec = write_spec(dir.path(), &text);
    sb(dir.path())
        .args(["run", "--no-bars"])
        .arg(&spec)
        .assert()
        .code(1);
    let r = read_json(&result_file(dir.path()));
    let trials = r["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 4);
    for block in [0, 1] {
        let t: Vec<&Value> = trials.iter().filter(|t| t["block"] == block).collect();
        assert_eq!(t[0]["status"], "ok", "{:?}", t[0]);
        assert_eq!(t[1]["status"], "failed", "{:?}", t[1]);
        assert!(
            t[1]["failure"]
                .as_str()
                .is_some_and(|f| f.contains("exited")),
            "{:?}",
            t[1]
        );
    }
}

#[test]
fn resume_after_sigkill_completes_the_run_and_stops_the_orphan() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = tiny_spec()
        .replace("count: 2", "count: 3")
        .replace("requests: 8", "requests: 24")
        .replace("[1, 4]", "[1, 2]");
    let spec = write_spec(dir.path(), &text);
    let bin = assert_cmd::cargo::cargo_bin("servebench");
    let mut child = std::process::Command::new(&bin)
        .args(["run", "--no-bars"])
        .arg(&spec)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn run");
    // Wait until block 2's server is up and block 1's trials are on disk: the runner is then
    // inside trial 3 (about half a second of work), and SIGKILL leaves its server orphaned.
    let deadline = Instant::now() + Duration::from_secs(60);
    let path = loop {
        assert!(Instant::now() < deadline, "no trial was written in 60 s");
        std::thread::sleep(Duration::from_millis(5));
        let files: Vec<PathBuf> = walk(&dir.path().join("results"))
            .into_iter()
            .filter(|p| {
                p.extension().is_some_and(|e| e == "json")
                    && !p
                        .file_name()
                        .and_then(|n| n.to_str())
                        .unwrap_or("")
                        .starts_with('.')
            })
            .collect();
        if let Some(p) = files.first()
            && let Ok(v) =
                serde_json::from_str::<Value>(&std::fs::read_to_string(p).unwrap_or_default())
            && v["trials"].as_array().map_or(0, Vec::len) == 2
            && v["servers"].as_array().map_or(0, Vec::len) == 2
        {
            break p.clone();
        }
    };
    child.kill().expect("SIGKILL the runner");
    let _ = child.wait();
    let before = read_json(&path);
    let kept = before["trials"].as_array().map(Vec::len).unwrap_or(0);
    let orphan_pgid = before["servers"]
        .as_array()
        .and_then(|s| s.last())
        .and_then(|s| s["pgid"].as_i64())
        .unwrap_or(0);
    assert!(orphan_pgid > 0);
    let out = sb(dir.path())
        .args(["run", "--no-bars", "--resume"])
        .arg(&path)
        .assert()
        .code(0);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("still alive: stopping it"),
        "kept {kept}, orphan {orphan_pgid}, servers {}\n{stderr}",
        before["servers"]
    );
    let after = read_json(&path);
    assert_eq!(after["status"], "complete");
    assert_eq!(after["trials"].as_array().map(Vec::len), Some(12));
    // The trials measured before the kill are unchanged.
    assert_eq!(
        after["trials"].as_array().expect("t")[..kept],
        before["trials"].as_array().expect("t")[..kept]
    );
    // The orphaned group is gone.
    assert!(
        !Path::new(&format!("/proc/{orphan_pgid}")).exists(),
        "orphan {orphan_pgid} still alive"
    );
    // The resume is recorded from the killed run's last write: the time between is left out
    // of the wall-time split.
    let resumes = after["resumes"].as_array().expect("resumes recorded");
    assert_eq!(resumes.len(), 1, "{resumes:?}");
    assert_eq!(resumes[0]["interrupted_at"], before["updated_at"]);
    assert!(resumes[0]["resumed_at"].as_str() > before["updated_at"].as_str());
}

#[test]
fn resume_refuses_a_changed_spec() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = write_spec(
        dir.path(),
        &tiny_spec()
            .replace("count: 2", "count: 1")
            .replace("[1, 4]", "[1]"),
    );
    sb(dir.path())
        .args(["run", "--quiet"])
        .arg(&spec)
        .assert()
        .code(0);
    let path = result_file(dir.path());
    write_spec(
        dir.path(),
        &tiny_spec()
            .replace("count: 2", "count: 1")
            .replace("[1, 4]", "[1]")
            .replace("requests: 8", "requests: 9"),
    );
    let out = sb(dir.path())
        .args(["run", "--resume"])
        .arg(&path)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("spec hash"), "{stderr}");
}

#[test]
fn an_unwritable_result_folder_rescues_the_measured_trials() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = write_spec(dir.path(), &tiny_spec().replace("count: 2", "count: 1"));
    // `results` is a file, so `results/tiny-ab/…` cannot be created.
    std::fs::write(dir.path().join("results"), "not a folder").expect("write");
    let out = sb(dir.path())
        .args(["run", "--no-bars"])
        .arg(&spec)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("servebench-rescue-"), "{stderr}");
    let rescue = stderr
        .split_whitespace()
        .find(|w| w.contains("servebench-rescue-"))
        .map(|w| w.trim_end_matches([';', '.', ',']))
        .expect("rescue path in the message");
    let r = read_json(Path::new(rescue));
    assert_eq!(r["spec_name"], "tiny-ab");
    let _ = std::fs::remove_file(rescue);
}

#[test]
fn a_trial_by_duration_sends_the_requests_due_before_it_ends() {
    // Constant arrivals at 40/s for 0.5 s: due at 0, 25, …, 475 ms — exactly 20 requests per
    // trial, each with its intended offset inside the window; the sidecar holds them all.
    let dir = tempfile::tempdir().expect("tmp");
    let text = tiny_spec()
        .replace(
            "    requests: 8\n",
            "    duration: 500ms\n    request_rate: 40\n    arrival: constant\n",
        )
        .replace(
            "sweep: {max_concurrency: [1, 4]}",
            "sweep: {max_concurrency: [4]}",
        );
    let spec = write_spec(dir.path(), &text);
    sb(dir.path())
        .args(["run", "--no-bars"])
        .arg(&spec)
        .assert()
        .code(0);
    let path = result_file(dir.path());
    let r = read_json(&path);
    assert_eq!(r["status"], "complete");
    let trials = r["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 4, "2 variants × 2 trials");
    for t in trials {
        assert_eq!(t["summary"]["all"]["requests"], 20, "{t}");
        assert_eq!(t["summary"]["all"]["failed"], 0, "{t}");
    }
    let lines: Vec<Value> = common::faults::sidecar(&path)
        .into_iter()
        .filter(|l| l["warmup"] != true)
        .collect();
    assert_eq!(lines.len(), 4 * 20, "every sent request has a record");
    let last_due = lines
        .iter()
        .map(|l| {
            l["intended_ns"]
                .as_u64()
                .expect("every record has its intended offset")
        })
        .max()
        .expect("records");
    assert_eq!(last_due, 475_000_000, "the last request is due at 475 ms");
}
