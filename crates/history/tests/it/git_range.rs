//! `--git RANGE PATH`: the result files of every commit of a range, each run once, named
//! by the first commit that holds it.

use std::path::Path;
use std::process::Command;

use crate::common::{run, write};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_range_reads_the_runs_its_commits_hold() {
    let repo = tempfile::tempdir().expect("tempdir");
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "main"]);
    let results = dir.join("results").join("sim");
    // Commit 1: runs 1-2; then one commit per run 3..6; run 4's file is re-written (resumed)
    // in the last commit; a comparison report is committed next to them.
    write(&results, &run(0, 1.0));
    write(&results, &run(1, 1.0));
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "runs 1-2"]);
    for i in 2..6 {
        write(&results, &run(i, 1.0));
        git(dir, &["add", "."]);
        git(dir, &["commit", "-q", "-m", &format!("run {}", i + 1)]);
    }
    let mut again = run(3, 1.0);
    again["updated_at"] = "2026-11-04T11:00:00Z".into();
    write(&results, &again);
    std::fs::write(
        results.join("r.compare.json"),
        r#"{"format": "servebench-compare/2"}"#,
    )
    .expect("write");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "resume run 4, compare"]);

    let all = servebench_history::read_git(dir, "HEAD", &["results".into()]).expect("reads");
    assert_eq!(all.runs.len(), 6, "{:#?}", all.skipped);
    let ids: Vec<&str> = all.runs.iter().map(|r| r.result.run_id.as_str()).collect();
    assert_eq!(ids, (0..6).map(crate::common::run_id).collect::<Vec<_>>());
    // Run 4 counts once, read at its newest content, named by its first commit.
    let r4 = &all.runs[3];
    assert_eq!(r4.result.updated_at, "2026-11-04T11:00:00Z");
    assert!(
        r4.file.ends_with(":results/sim/20261104T100000Z-0003.json"),
        "{}",
        r4.file
    );
    assert!(r4.commit.is_some());
    assert_eq!(all.skipped.len(), 1, "{:#?}", all.skipped);
    assert!(all.skipped[0].file.ends_with("r.compare.json"));

    // The last two commits: the runs those commits hold (the newest commit holds them all),
    // each named by the first commit of the range that holds it.
    let range =
        servebench_history::read_git(dir, "HEAD~2..HEAD", &["results/sim".into()]).expect("reads");
    assert_eq!(range.runs.len(), 6);

    // A bad range is an error naming the git command.
    let e = servebench_history::read_git(dir, "nope..HEAD", &["results".into()])
        .expect_err("bad range");
    assert!(e.to_string().contains("git rev-list"), "{e}");
}
