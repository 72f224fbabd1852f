//! Files that are not readable results are skipped with a note saying why; the runs that
//! are readable are still analysed.

use crate::common::{flat_then, history_of, run, write, write_levels};

#[test]
fn bad_files_are_skipped_each_with_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let files = write_levels(dir.path(), &flat_then(6, &[]));
    // Truncated: the first half of a result file.
    let text = std::fs::read_to_string(&files[0]).expect("read");
    std::fs::write(dir.path().join("cut.json"), &text[..text.len() / 2]).expect("write");
    // Another format: a comparison report.
    std::fs::write(
        dir.path().join("x.compare.json"),
        r#"{"format": "servebench-compare/2", "comparisons": []}"#,
    )
    .expect("write");
    // The same run id again, in a copy.
    std::fs::create_dir_all(dir.path().join("copy")).expect("mkdir");
    std::fs::copy(&files[2], dir.path().join("copy").join("again.json")).expect("copy");
    // Not JSON at all, and JSON that is no result.
    std::fs::write(dir.path().join("notes.json"), "hello").expect("write");
    std::fs::write(dir.path().join("list.json"), "[1, 2, 3]").expect("write");
    // A result file with an unreadable start time.
    let mut v = run(7, 1.0);
    v["created_at"] = "yesterday".into();
    write(dir.path(), &v);
    // Not a .json file: never read.
    std::fs::write(dir.path().join("README.md"), "# results").expect("write");

    let h = history_of(dir.path());
    let reason = |name: &str| -> String {
        h.skipped
            .iter()
            .find(|s| s.file.ends_with(name))
            .unwrap_or_else(|| panic!("{name} is skipped: {:#?}", h.skipped))
            .reason
            .clone()
    };
    assert_eq!(h.skipped.len(), 6, "{:#?}", h.skipped);
    assert!(reason("cut.json").starts_with("truncated"));
    assert!(reason("x.compare.json").contains("servebench-compare/2"));
    let dup = reason("again.json");
    assert!(dup.contains("already read from"), "{dup}");
    assert!(dup.contains(&crate::common::run_id(2)), "{dup}");
    assert!(reason("notes.json").starts_with("not valid JSON"));
    assert!(reason("list.json").contains("not a servebench result file"));
    assert!(reason(&format!("{}.json", crate::common::run_id(7))).contains("yesterday"));
    // The six good runs, each once.
    assert_eq!(h.specs.len(), 1);
    assert_eq!(h.specs[0].series[0].runs.len(), 6);
    let text = servebench_history::render(&h);
    assert!(text.contains("6 file(s) skipped"), "{text}");
}

#[test]
fn a_path_that_does_not_exist_is_an_error_that_says_what_to_give() {
    let e = servebench_history::read_paths(&["/nonexistent/results".into()]).expect_err("no path");
    let msg = e.to_string();
    assert!(msg.contains("/nonexistent/results"), "{msg}");
    assert!(msg.contains("--git"), "{msg}");
}
