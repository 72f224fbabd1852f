//! `servebench submit` on a real Slurm cluster (`scripts/slurm-test-cluster`): the batch
//! script, following the job, the allocation recorded; a server wider than the job refused
//! before `sbatch`; and without Slurm's commands, `run` and `submit` say what to do.

use std::path::Path;
use std::process::Command;

use crate::common::slurm::{SERIAL, cluster, read, salloc, servebench_bin, spec_in, text};
use crate::common::{read_json, result_file, scratch, walk};

#[test]
fn submit_wait_writes_the_batch_script_follows_the_job_and_records_the_allocation() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(env) = cluster() else { return };
    let dir = scratch("slurm_e2e", "submit");
    let spec = spec_in(&dir);
    let partition = env
        .get("SERVEBENCH_SLURM_PARTITION")
        .cloned()
        .unwrap_or_else(|| "debug".into());
    let out = Command::new("timeout")
        .arg("300")
        .arg(servebench_bin())
        .args(["submit", "--wait", "--time", "5", "--partition", &partition])
        .args(["--set", "trials.count=1", "--set", "workload.requests=8"])
        .args(["--set", "sweep.max_concurrency=[4]"])
        .arg(&spec)
        .current_dir(&dir)
        .envs(&env)
        .env_remove("SLURM_JOB_ID")
        .output()
        .expect("submit");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    // What the run printed in the job is followed, down to its last line.
    assert!(stdout.contains("submitted Slurm job"), "{stdout}");
    assert!(stdout.contains("block 2: stopping server"), "{stdout}");
    assert!(
        stdout.contains("servebench submit: the run exited with status 0"),
        "{stdout}"
    );
    let file = result_file(&dir);
    let r = read_json(&file);
    assert_eq!(r["status"], "complete");
    let alloc = &r["provenance"]["cluster"]["allocations"][0];
    assert_eq!(alloc["partition"], partition.as_str());
    assert_eq!(alloc["job_name"], "servebench-sim-ab-2node");
    let script = &alloc["batch_script"];
    let path = Path::new(script["path"].as_str().expect("path"));
    let canon = |p: &Path| std::fs::canonicalize(p).expect("canonical");
    assert_eq!(
        canon(path.parent().expect("dir")),
        canon(file.parent().expect("dir")),
        "the batch script sits beside the result"
    );
    assert_eq!(script["text"].as_str(), Some(read(path).as_str()));
    assert!(read(path).contains("#SBATCH --nodes=2"), "{}", read(path));
}

#[test]
fn submit_with_fewer_nodes_than_the_server_spans_is_refused_before_sbatch() {
    let dir = scratch("slurm_e2e", "submit_too_few");
    let spec = spec_in(&dir);
    let out = Command::new(servebench_bin())
        .args(["submit", "--nodes", "1"])
        .arg(&spec)
        .current_dir(&dir)
        .output()
        .expect("submit");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--nodes 1 is fewer than the 2 nodes"), "{err}");
    assert!(walk(&dir.join("results")).is_empty(), "nothing is written");
}

#[test]
fn without_slurms_commands_run_and_submit_say_what_to_do() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch("slurm_e2e", "no_commands");
    let spec = spec_in(&dir);
    // submit on a machine without sbatch: no cluster needed.
    let out = Command::new(servebench_bin())
        .arg("submit")
        .arg(&spec)
        .current_dir(&dir)
        .env("PATH", "/nonexistent")
        .output()
        .expect("submit");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`sbatch` is not on PATH"), "{err}");
    assert!(walk(&dir.join("results")).is_empty(), "nothing is written");
    // run inside an allocation whose shell lacks srun.
    let Some(env) = cluster() else { return };
    let sb = servebench_bin();
    let out = salloc(
        &env,
        2,
        &dir,
        &[
            "env",
            "PATH=/nonexistent",
            sb.to_str().expect("path"),
            "run",
            "--no-bars",
            spec.to_str().expect("path"),
        ],
    );
    assert!(!out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`srun` is not on PATH"), "{err}");
    assert!(walk(&dir.join("results")).is_empty(), "nothing is written");
}
