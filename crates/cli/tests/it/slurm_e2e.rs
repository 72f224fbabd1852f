//! Servers that span nodes, end to end on a real Slurm cluster: `scripts/slurm-test-cluster`
//! (slurmctld and two slurmd, nodes n1 and n2, on this host; scripts/slurm-test-cluster.md).
//! The simulator is the two-node server of specs/sim-ab-2node.yaml: rank 0 serves HTTP, rank
//! 1 is its worker role, which lives as long as the head answers.
//!
//! Without a running cluster each test prints `NOT RUN` and returns, except under CI (`CI`
//! set), where that fails: CI starts the cluster before the tests (.ci/run).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::slurm::{SERIAL, cluster, read, salloc, servebench_bin, spec_in, text};
use crate::common::{read_json, result_file, scratch, walk};

#[test]
fn two_node_sim_ab_runs_as_one_srun_step_per_block_with_every_rank_verified() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(env) = cluster() else { return };
    let dir = scratch("slurm_e2e", "two_node_ab");
    let spec = spec_in(&dir);
    let sb = servebench_bin();
    let out = salloc(
        &env,
        2,
        &dir,
        &[
            sb.to_str().expect("path"),
            "run",
            "--no-bars",
            "--trials",
            "2",
            "--requests",
            "12",
            "-c",
            "4",
            spec.to_str().expect("path"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let file = result_file(&dir);
    let r = read_json(&file);
    assert_eq!(r["status"], "complete", "{}", text(&out));
    let trials = r["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 4);
    assert!(trials.iter().all(|t| t["status"] == "ok"), "{trials:?}");

    // The allocation and both nodes' facts are in the provenance.
    let alloc = &r["provenance"]["cluster"]["allocations"][0];
    assert_eq!(r["provenance"]["cluster"]["scheduler"], "slurm");
    assert_eq!(
        alloc["server_nodes"],
        serde_json::json!(["n1", "n2"]),
        "{alloc}"
    );
    assert_eq!(alloc["job_name"], "servebench-test");
    let nodes = alloc["node_info"].as_array().expect("node_info");
    assert_eq!(nodes.len(), 2, "{alloc}");
    assert_eq!(nodes[1]["node"], "n2");
    assert!(
        nodes[1]["host"]["cores"].as_u64().unwrap_or(0) >= 1,
        "{alloc}"
    );

    let servers = r["servers"].as_array().expect("servers");
    assert_eq!(servers.len(), 4, "one server start per block");
    let mut step_names = Vec::new();
    for s in servers {
        let step = &s["slurm"];
        assert_eq!(step["nodes"], serde_json::json!(["n1", "n2"]), "{s}");
        assert_eq!(step["srun_argv"][0], "srun");
        step_names.push(step["step_name"].as_str().expect("name").to_owned());
        let ranks = step["ranks"].as_array().expect("ranks");
        assert_eq!(ranks.len(), 2, "{s}");
        for (i, rank) in ranks.iter().enumerate() {
            assert_eq!(rank["rank"], i as u64);
            assert_eq!(rank["node_rank"], i as u64);
            assert_eq!(rank["node"], ["n1", "n2"][i]);
            let log = read(Path::new(rank["log_path"].as_str().expect("log")));
            let label = format!("label={}", s["variant"].as_str().expect("variant"));
            assert!(log.contains(&label), "rank {i}'s log lacks {label}:\n{log}");
            if i == 1 {
                assert!(log.contains("servebench sim worker: start"), "{log}");
                assert!(
                    rank["argv"]
                        .as_array()
                        .expect("argv")
                        .iter()
                        .any(|a| a == "--worker")
                );
            }
        }
        let verify = s["verify"].as_array().expect("verify");
        assert_eq!(verify.len(), 2, "{s}");
        assert!(verify.iter().all(|v| v["passed"] == true), "{s}");
        // Stopped by scancel, and Slurm no longer listed the step before the next block.
        let main_log = read(Path::new(s["log_path"].as_str().expect("log")));
        assert!(
            main_log.contains("stop: scancel --signal=TERM"),
            "{main_log}"
        );
        assert!(
            main_log.contains("stop: Slurm no longer lists step"),
            "{main_log}"
        );
        assert_eq!(s["stop"]["exit_status"]["code"], 0, "{s}");
    }
    step_names.dedup();
    assert_eq!(
        step_names.len(),
        4,
        "each block's step has its own name: {step_names:?}"
    );
}

#[test]
fn a_rank_killed_mid_trial_fails_the_trial_with_its_name_and_log_and_the_run_goes_on() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(env) = cluster() else { return };
    let dir = scratch("slurm_e2e", "rank_killed");
    let spec = spec_in(&dir);
    let sb = servebench_bin();
    // One trial per variant at c=1 of 40 requests × 64 tokens × 4 ms: about 10 s, of which
    // rank 1 of the first block sees about 1.5 s.
    let child = Command::new("timeout")
        .arg("300")
        .arg("salloc")
        .args([
            "-Q",
            "-N2",
            "--ntasks-per-node=1",
            "-t",
            "5",
            "-J",
            "servebench-test",
            "--",
        ])
        .arg(&sb)
        .args([
            "run",
            "--no-bars",
            "--trials",
            "1",
            "--requests",
            "40",
            "-c",
            "1",
        ])
        .args(["--set", "workload.dataset.output_tokens=64"])
        .arg(&spec)
        .current_dir(&dir)
        .envs(&env)
        .env_remove("SLURM_JOB_ID")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("salloc");
    // Wait for the first block's trial to be under way, then SIGKILL rank 1 (a node's server
    // dying: on this host, by its pid).
    let deadline = Instant::now() + Duration::from_secs(60);
    let marker = loop {
        let found = walk(&dir.join("results")).into_iter().find(|p| {
            p.to_string_lossy()
                .ends_with("block-001-cutlass.rank1.ready")
        });
        if let Some(m) = found {
            let main_log = m.with_file_name("block-001-cutlass.log");
            if std::fs::read_to_string(&main_log).is_ok_and(|t| t.contains("slurm step")) {
                break m;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the first block's server never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(1500));
    let pid = read(&marker)
        .trim_end()
        .split('\t')
        .nth(4)
        .expect("pid")
        .to_owned();
    let kill = Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .expect("kill");
    assert!(kill.success());
    let out = child.wait_with_output().expect("wait");
    // The run goes on with the next block; a failed trial makes no non-zero exit by itself.
    let r = read_json(&result_file(&dir));
    let trials = r["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 2, "{}", text(&out));
    let t0 = &trials[0];
    assert_eq!(t0["variant"], "cutlass");
    assert_eq!(t0["status"], "failed", "{t0}");
    let why = t0["failure"].as_str().expect("failure");
    assert!(why.contains("rank 1 (node n2)"), "{why}");
    assert!(
        why.contains("servebench sim worker: start"),
        "the rank's log tail: {why}"
    );
    // What was measured before the kill is kept: the trial's requests are in the sidecar.
    let lines = crate::common::faults::sidecar(&result_file(&dir));
    let ok_before_kill = lines
        .iter()
        .filter(|l| {
            l["seq"] == 0 && !l["warmup"].as_bool().unwrap_or(false) && l["error"].is_null()
        })
        .count();
    assert!(
        ok_before_kill >= 1,
        "no request of the killed trial was kept"
    );
    // The next block started its own step and measured.
    assert_eq!(trials[1]["status"], "ok", "{}", text(&out));
    let main_log = read(&marker.with_file_name("block-001-cutlass.log"));
    assert!(main_log.contains("task 1"), "{main_log}");
}

#[test]
fn a_step_left_by_a_killed_servebench_is_cancelled_by_the_resume() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(env) = cluster() else { return };
    let dir = scratch("slurm_e2e", "orphan_step");
    let spec = spec_in(&dir);
    let sb = servebench_bin();
    // Inside one allocation: a run (trials of about 6 s) SIGKILLed while its first block's server is up, the steps
    // Slurm lists then, the resume, and the steps Slurm lists after it.
    let script = format!(
        r#"set -u
sb={sb}; spec={spec}
"$sb" run --no-bars --trials 1 --requests 24 -c 1 --set workload.dataset.output_tokens=64 "$spec" > run1.log 2>&1 & pid=$!
for i in $(seq 600); do ls results/*/*.logs/block-001-*.rank1.ready >/dev/null 2>&1 && break; sleep 0.1; done
sleep 1
kill -KILL $pid; wait $pid 2>/dev/null
sleep 0.5
echo "STEPS_BEFORE: $(squeue -h -s -j $SLURM_JOB_ID -o %j | grep servebench- | tr '\n' ' ')"
"$sb" run --no-bars --resume results/*/*.json > run2.log 2>&1; echo "RESUME_RC=$?"
echo "STEPS_AFTER: $(squeue -h -s -j $SLURM_JOB_ID -o %j | grep servebench- | tr '\n' ' ')"
"#,
        sb = sb.display(),
        spec = spec.display()
    );
    let out = salloc(&env, 2, &dir, &["bash", "-c", &script]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let run2 = std::fs::read_to_string(dir.join("run2.log")).unwrap_or_default();
    let before = stdout
        .lines()
        .find_map(|l| l.strip_prefix("STEPS_BEFORE: "))
        .unwrap_or_else(|| panic!("{}", text(&out)));
    assert!(
        before.contains("servebench-") && before.contains("-b1"),
        "the killed run's step should still be running: {}",
        text(&out)
    );
    assert!(
        stdout.contains("RESUME_RC=0"),
        "{}\nrun2:\n{run2}",
        text(&out)
    );
    assert!(
        run2.contains("from the interrupted run"),
        "the resume should say it stopped the orphan:\n{run2}"
    );
    let after = stdout
        .lines()
        .find_map(|l| l.strip_prefix("STEPS_AFTER: "))
        .expect("after");
    assert_eq!(after.trim(), "", "steps left after the resume: {after}");
    let r = read_json(&result_file(&dir));
    assert_eq!(r["status"], "complete", "{run2}");
}

#[test]
fn run_outside_an_allocation_says_to_use_submit_or_salloc_and_writes_nothing() {
    let dir = scratch("slurm_e2e", "outside");
    let spec = spec_in(&dir);
    let out = Command::new(servebench_bin())
        .args(["run", "--no-bars"])
        .arg(&spec)
        .current_dir(&dir)
        .env_remove("SLURM_JOB_ID")
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not running inside a Slurm allocation"),
        "{err}"
    );
    assert!(
        err.contains("servebench submit") && err.contains("salloc -N2"),
        "{err}"
    );
    assert!(
        walk(&dir.join("results")).is_empty(),
        "a result was written"
    );
}

#[test]
fn a_spec_wanting_more_nodes_than_the_allocation_holds_fails_before_any_trial() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(env) = cluster() else { return };
    let dir = scratch("slurm_e2e", "too_few_nodes");
    let spec = spec_in(&dir);
    let sb = servebench_bin();
    let out = salloc(
        &env,
        1,
        &dir,
        &[
            sb.to_str().expect("path"),
            "run",
            "--no-bars",
            spec.to_str().expect("path"),
        ],
    );
    assert!(!out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("spans 2 nodes") && err.contains("holds 1 (n1)"),
        "{err}"
    );
    assert!(
        walk(&dir.join("results")).is_empty(),
        "a result was written"
    );
}

#[test]
fn an_interrupted_run_leaves_no_step_behind() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(env) = cluster() else { return };
    let dir = scratch("slurm_e2e", "interrupted");
    let spec = spec_in(&dir);
    // SIGINT to servebench while the first block's server is up (trials of about 6 s): it
    // stops the step before it exits (130), and Slurm lists no step of it afterwards.
    let script = format!(
        r#"set -u
"{sb}" run --no-bars --trials 1 --requests 24 -c 1 --set workload.dataset.output_tokens=64 "{spec}" > run.log 2>&1 & pid=$!
for i in $(seq 600); do ls results/*/*.logs/block-001-*.rank1.ready >/dev/null 2>&1 && break; sleep 0.1; done
sleep 1
kill -INT $pid; wait $pid; echo "RUN_RC=$?"
echo "STEPS_AFTER: $(squeue -h -s -j $SLURM_JOB_ID -o %j | grep servebench- | tr '\n' ' ')"
"#,
        sb = servebench_bin().display(),
        spec = spec.display()
    );
    let out = salloc(&env, 2, &dir, &["bash", "-c", &script]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let log = std::fs::read_to_string(dir.join("run.log")).unwrap_or_default();
    assert!(stdout.contains("RUN_RC=130"), "{}\nrun:\n{log}", text(&out));
    let after = stdout
        .lines()
        .find_map(|l| l.strip_prefix("STEPS_AFTER: "))
        .unwrap_or_else(|| panic!("{}", text(&out)));
    assert_eq!(after.trim(), "", "steps left after the interrupt: {after}");
    let r = read_json(&result_file(&dir));
    let stop = &r["servers"][0]["stop"];
    assert!(
        !stop.is_null(),
        "the interrupted block's server was stopped: {r}"
    );
}
