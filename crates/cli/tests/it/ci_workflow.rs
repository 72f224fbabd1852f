//! The CI recipe (`docs/ci/servebench-gate.yml`, docs/ci.md) parses as a GitHub Actions
//! workflow and its `run:` steps work: each is run in order with bash (as `shell: bash`
//! runs it: `-eo pipefail`) in a clone of a local bare repository, with the job's
//! environment and `SERVEBENCH` and `SPEC` pointing at this build and a simulator spec —
//! once with an A/A that must pass the gate (every step exits 0) and once with a candidate
//! 40% slower (TPOT +67%) that must trip it — both gating `tpot_p50`, which machine load
//! barely moves where it swings the throughput of an A/A by tens of percent (docs/ci.md) (the gate's step exits 1, the `always()` steps still run
//! and record the run). The results branch then holds both runs, and `history` reads them.
//! The `uses:` steps (checkout, artifact upload) are GitHub's and are not run; the checkout
//! is the clone, and its `clean` is the removal of `results/` between the two jobs.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{repo, scratch};
use serde_yaml::Value;

fn workflow() -> Value {
    let path = repo().join("docs/ci/servebench-gate.yml");
    serde_yaml::from_str(&std::fs::read_to_string(&path).expect("the workflow file"))
        .expect("the workflow is YAML")
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bare origin and a clone of it with the two simulator specs committed on `main`.
fn checkout(root: &Path) -> PathBuf {
    let origin = root.join("origin.git");
    git(
        root,
        &["init", "--quiet", "--bare", "-b", "main", "origin.git"],
    );
    git(
        root,
        &["clone", "--quiet", &origin.display().to_string(), "work"],
    );
    let work = root.join("work");
    std::fs::create_dir_all(work.join("specs")).expect("specs folder");
    for name in ["ci-aa", "ci-slower"] {
        std::fs::copy(
            repo().join(format!("crates/cli/tests/specs/{name}.yaml")),
            work.join(format!("specs/{name}.yaml")),
        )
        .expect("copy the spec");
    }
    git(&work, &["checkout", "--quiet", "-b", "main"]);
    git(&work, &["add", "specs"]);
    git(&work, &["commit", "--quiet", "-m", "specs"]);
    git(&work, &["push", "--quiet", "origin", "main"]);
    work
}

struct Step {
    name: String,
    run: String,
    always: bool,
}

/// The job `gate`: its environment and its `run:` steps, checked for the shape the recipe
/// promises (checkout first, the artifact and the commit kept whatever the gate said).
fn job() -> (Vec<(String, String)>, Vec<Step>) {
    let wf = workflow();
    assert_eq!(wf["name"].as_str(), Some("servebench gate"));
    // `pull_request:` has no value: its key, not its (null) value, says the job runs on PRs.
    for trigger in ["pull_request", "push"] {
        assert!(
            wf["on"].get(trigger).is_some(),
            "the recipe runs on `{trigger}`: {:?}",
            wf["on"]
        );
    }
    let job = &wf["jobs"]["gate"];
    let labels: Vec<&str> = job["runs-on"]
        .as_sequence()
        .expect("runs-on labels")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        labels.contains(&"self-hosted") && labels.contains(&"gpu"),
        "{labels:?}"
    );
    assert_eq!(job["permissions"]["contents"].as_str(), Some("write"));
    let env: Vec<(String, String)> = job["env"]
        .as_mapping()
        .expect("job env")
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().expect("name").to_owned(),
                v.as_str().expect("value").to_owned(),
            )
        })
        .collect();
    assert!(
        env.iter()
            .any(|(k, v)| k == "GATE" && v == "not-shown-non-inferior")
    );
    let steps = job["steps"].as_sequence().expect("steps");
    assert_eq!(
        steps[0]["uses"].as_str(),
        Some("actions/checkout@v4"),
        "checkout first"
    );
    let artifact = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact"))
        })
        .expect("an artifact step");
    assert_eq!(artifact["if"].as_str(), Some("always()"));
    assert_eq!(artifact["with"]["path"].as_str(), Some("results/"));
    let runs: Vec<Step> = steps
        .iter()
        .filter_map(|s| {
            Some(Step {
                name: s["name"].as_str().unwrap_or("?").to_owned(),
                run: s["run"].as_str()?.to_owned(),
                always: s["if"].as_str().is_some_and(|c| c.starts_with("always()")),
            })
        })
        .collect();
    for s in &runs {
        assert!(
            steps
                .iter()
                .find(|x| x["name"].as_str() == Some(s.name.as_str()))
                .is_some_and(|x| x["shell"].as_str() == Some("bash")),
            "{}: `shell: bash`, so that pipefail holds",
            s.name
        );
    }
    (env, runs)
}

/// Every `run:` step in order in `work`, as the runner would: a step after a failed one
/// runs only when it is `always()`. The exit code of each step, by name.
fn run_job(work: &Path, env: &[(String, String)], spec: &str) -> Vec<(String, i32, String)> {
    let (_, steps) = job();
    let bin = assert_cmd::cargo::cargo_bin("servebench");
    let mut failed = false;
    let mut out = Vec::new();
    for s in steps {
        if failed && !s.always {
            continue;
        }
        let mut cmd = Command::new("bash");
        cmd.current_dir(work)
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &s.run])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GITHUB_SHA", "0123456789abcdef")
            .env("GITHUB_EVENT_NAME", "push");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.env("SERVEBENCH", &bin).env("SPEC", spec);
        let o = cmd.output().expect("bash runs");
        let code = o.status.code().unwrap_or(-1);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        failed |= code != 0;
        out.push((s.name, code, text));
    }
    out
}

fn step<'a>(log: &'a [(String, i32, String)], name: &str) -> &'a (String, i32, String) {
    log.iter()
        .find(|(n, _, _)| n == name)
        .unwrap_or_else(|| panic!("step `{name}` ran: {log:#?}"))
}

#[test]
fn the_ci_workflow_gates_records_and_reads_history_on_the_simulator() {
    let root = scratch("ci_workflow", "repo");
    let work = checkout(&root);
    let (env, _) = job();

    let pass = run_job(&work, &env, "specs/ci-aa.yaml");
    for (name, code, text) in &pass {
        assert_eq!(*code, 0, "{name}:\n{text}");
    }
    let gate = step(&pass, "Run and gate");
    assert!(
        gate.2
            .contains("gate --fail-on not-shown-non-inferior: passed"),
        "{}",
        gate.2
    );
    assert!(
        step(&pass, "Validate and plan")
            .2
            .contains("gate --fail-on not-shown-non-inferior: 2 gated cell(s)"),
        "{}",
        step(&pass, "Validate and plan").2
    );

    // A fresh checkout cleans what the last job left.
    std::fs::remove_dir_all(work.join("results")).expect("results of the first job");
    let trip = run_job(&work, &env, "specs/ci-slower.yaml");
    let gate = step(&trip, "Run and gate");
    assert_eq!(gate.1, 1, "the gate trips: exit 1\n{}", gate.2);
    assert!(
        gate.2
            .contains("gate --fail-on not-shown-non-inferior: TRIPPED")
            && gate.2.contains("wholly above +5% — shown worse"),
        "{}",
        gate.2
    );
    for name in [
        "Commit the result to the results branch",
        "History of the results branch",
    ] {
        let (_, code, text) = step(&trip, name);
        assert_eq!(*code, 0, "{name} runs after the tripped gate:\n{text}");
    }
    let history = &step(&trip, "History of the results branch").2;
    assert!(
        history.contains("ci-aa") && history.contains("ci-slower"),
        "both runs are on the branch: {history}"
    );

    // The branch holds each run's file and its folder's `latest`.
    let check = root.join("check");
    git(
        &root,
        &[
            "clone",
            "--quiet",
            "--branch",
            "servebench-results",
            &root.join("origin.git").display().to_string(),
            "check",
        ],
    );
    for name in ["ci-aa", "ci-slower"] {
        let folder = check.join("results").join(name);
        let latest = std::fs::read_to_string(folder.join("latest")).expect("latest");
        let file = folder.join(latest.trim());
        assert!(
            file.is_file(),
            "{} names {}",
            folder.display(),
            file.display()
        );
    }
    assert!(
        !check.join("specs").exists(),
        "the branch holds results only"
    );
}
