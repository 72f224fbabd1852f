//! A capacity search (`spec.search`) end to end on the simulator
//! (`crates/cli/tests/specs/search.yaml`: no noise, a closed-form answer — `base` sustains 3
//! requests in flight under its TPOT objective, `fast` 4; docs/search.md). The simulator is
//! deterministic here, so the bracket of every server start is asserted: the known answer, a
//! search log that names every trial and why its load was chosen, compare's capacities and
//! ratio, the report's files, a run killed mid-search that resumes to the same answer, and
//! capacities outside the bounds said plainly instead of a number.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{read_json, repo, sb, scratch, walk};
use serde_json::Value;

fn spec() -> PathBuf {
    repo().join("crates/cli/tests/specs/search.yaml")
}

fn result_file(dir: &Path) -> Option<PathBuf> {
    walk(&dir.join("results")).into_iter().find(|p| {
        p.extension().is_some_and(|e| e == "json")
            && !p
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .starts_with('.')
    })
}

fn arr(v: &Value) -> &Vec<Value> {
    v.as_array().expect("an array")
}

/// What every complete result of search.yaml must show: each round holds one finished
/// server start per variant that brackets the known capacity, the log names every trial once
/// (its load is its point's concurrency), and the search stopped once both intervals were within the precision.
fn check_search(result: &Value) {
    assert_eq!(result["status"], "complete", "{}", result["error"]);
    let log = &result["search"];
    let trials = arr(&result["trials"]);
    let points = arr(&result["points"]);
    let mut seen = BTreeSet::new();
    let finished: Vec<&Value> = arr(&log["blocks"])
        .iter()
        .filter(|b| !b["outcome"].is_null())
        .collect();
    for round in 1..=4 {
        for (variant, pass, fail) in [("base", 3.0, 4.0), ("fast", 4.0, 5.0)] {
            let b: Vec<&&Value> = finished
                .iter()
                .filter(|b| b["round"] == round && b["variant"] == variant)
                .collect();
            assert_eq!(b.len(), 1, "round {round} {variant}: {b:?}");
            let o = &b[0]["outcome"];
            assert_eq!(o["kind"], "bracketed", "{o}");
            assert_eq!(o["pass_load"].as_f64(), Some(pass), "{o}");
            assert_eq!(o["fail_load"].as_f64(), Some(fail), "{o}");
            assert_eq!(b[0]["start"].is_null(), round == 1, "{}", b[0]);
        }
    }
    assert_eq!(finished.len(), 8, "four rounds of two variants");
    for b in arr(&log["blocks"]) {
        for s in arr(&b["steps"]) {
            let seq = s["seq"].as_u64().expect("seq");
            assert!(seen.insert(seq), "trial {seq} in two steps");
            let t = trials
                .iter()
                .find(|t| t["seq"].as_u64() == Some(seq))
                .expect("the step's trial is recorded");
            assert_eq!(t["variant"], b["variant"]);
            assert_eq!(t["block"], b["block"]);
            let p = &points[t["point"].as_u64().expect("point") as usize];
            assert_eq!(p["max_concurrency"].as_f64(), s["load"].as_f64(), "{p} {s}");
            assert!(!s["why"].as_str().unwrap_or("").is_empty());
            let passed = s["passed"].as_bool().expect("judged");
            let a = s["attainment"].as_f64().expect("attainment");
            assert_eq!(passed, a >= 0.5, "{s}");
        }
    }
    assert_eq!(seen.len(), trials.len(), "every trial is a step of the log");
    let looks = arr(&log["looks"]);
    // Three starts put the interval at ±3 (the variance floored at 1/12, a whole-number
    // grid's rounding, and 2 degrees of freedom): the fourth brings it within ±1.
    assert_eq!(looks.len(), 4);
    assert_eq!(looks[3]["stop"], true);
    assert!(looks[..3].iter().all(|l| l["stop"] == false));
    assert!(
        log["stopped"]
            .as_str()
            .is_some_and(|s| s.contains("within"))
    );
}

/// compare's capacities and ratio for a complete result.
fn check_compare(dir: &Path, path: &Path) {
    let out = sb(dir)
        .args(["compare", "--json"])
        .arg(path)
        .assert()
        .code(0);
    let r: Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(r["format"], "servebench-capacity/1");
    for (v, cap) in [("base", 3.0), ("fast", 4.0)] {
        let c = arr(&r["variants"])
            .iter()
            .find(|c| c["variant"] == v)
            .expect("variant");
        assert_eq!(c["outcome"]["kind"], "estimated", "{c}");
        assert_eq!(c["estimate"].as_f64(), Some(cap), "{c}");
        assert!(c["lower"].as_f64().is_some_and(|l| l <= cap), "{c}");
        assert!(c["upper"].as_f64().is_some_and(|u| u >= cap), "{c}");
    }
    let cmp = &arr(&r["comparisons"])[0];
    assert_eq!(cmp["candidate"], "fast");
    assert_eq!(cmp["verdict"], "improved", "{cmp}");
    assert!(
        cmp["ratio"]
            .as_f64()
            .is_some_and(|x| (x - 4.0 / 3.0).abs() < 1e-9),
        "{cmp}"
    );
}

#[test]
fn a_search_finds_the_known_capacities_and_compare_and_report_read_them() {
    let dir = scratch("search_e2e", "full");
    let out = sb(&dir)
        .args(["run", "--no-bars", "--results-dir"])
        .arg(dir.join("results"))
        .arg(spec())
        .assert()
        .code(0);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("search round 2: base, fast"), "{stderr}");
    assert!(stderr.contains("look after round 4:"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("capacity under SLOs"), "{stdout}");
    assert!(stdout.contains("fast vs base: capacity +33.3%"), "{stdout}");
    let path = result_file(&dir).expect("a result");
    check_search(&read_json(&path));
    check_compare(&dir, &path);

    let out = sb(&dir)
        .arg("report")
        .arg(&path)
        .arg("-o")
        .arg(dir.join("report"))
        .assert()
        .code(0);
    let listed = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for f in ["capacity.svg", "capacity.csv", "report.md", "report.html"] {
        assert!(listed.contains(f), "{listed}");
        assert!(dir.join("report").join(f).is_file(), "{f}");
    }
    let csv = std::fs::read_to_string(dir.join("report/capacity.csv")).expect("csv");
    let trials = arr(&read_json(&path)["trials"]).len();
    assert_eq!(csv.lines().count(), trials + 1, "a row per trial:\n{csv}");
    let md = std::fs::read_to_string(dir.join("report/report.md")).expect("md");
    assert!(md.contains("fast vs base"), "{md}");
}

#[test]
fn a_search_killed_mid_search_resumes_to_the_same_answer() {
    let dir = scratch("search_e2e", "killed");
    let bin = assert_cmd::cargo::cargo_bin("servebench");
    let mut child = std::process::Command::new(&bin)
        .args(["run", "--quiet", "--no-bars", "--results-dir"])
        .arg(dir.join("results"))
        .arg(spec())
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn run");
    // Kill once round 2 has measured a trial (after the first look).
    let deadline = Instant::now() + Duration::from_secs(120);
    let path = loop {
        assert!(Instant::now() < deadline, "round 2 did not begin in 120 s");
        std::thread::sleep(Duration::from_millis(5));
        let Some(p) = result_file(&dir) else { continue };
        let Ok(v) = serde_json::from_str::<Value>(&std::fs::read_to_string(&p).unwrap_or_default())
        else {
            continue;
        };
        let in_round_2 = v["search"]["blocks"].as_array().is_some_and(|b| {
            b.iter()
                .any(|b| b["round"] == 2 && b["steps"].as_array().is_some_and(|s| !s.is_empty()))
        });
        if in_round_2 || v["status"] == "complete" {
            break p;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let before = read_json(&path);
    let kept = before["trials"].as_array().map_or(0, Vec::len);
    assert!(kept >= 8, "round 1 was measured before the kill");
    if before["status"] != "complete" {
        sb(&dir)
            .args(["run", "--quiet", "--no-bars", "--resume"])
            .arg(&path)
            .assert()
            .code(0);
    }
    let after = read_json(&path);
    check_search(&after);
    // What was recorded before the kill is kept as it was.
    assert_eq!(
        arr(&after["trials"])[..kept],
        arr(&before["trials"])[..kept]
    );
    let looks = before["search"]["looks"].as_array().map_or(0, Vec::len);
    assert!(looks >= 1);
    assert_eq!(
        arr(&after["search"]["looks"])[..looks],
        arr(&before["search"]["looks"])[..looks]
    );
    check_compare(&dir, &path);
}

#[test]
fn capacities_outside_the_bounds_are_said_plainly_not_made_up() {
    let dir = scratch("search_e2e", "bounds");
    let text = std::fs::read_to_string(spec()).expect("spec");
    // 4..6: base (capacity 3) fails even at 4, fast (4) is bracketed; 1..3: both pass at 3.
    for (lower, upper, says) in [
        (
            4,
            6,
            "base: capacity below the lower bound 4 in flight: at 4 in flight",
        ),
        (
            1,
            3,
            "fast: capacity above the upper bound 3 in flight: at 3 in flight 100% of requests \
             met the SLOs (target 50%)",
        ),
    ] {
        let edit = text
            .replace("lower: 1\n", &format!("lower: {lower}\n"))
            .replace("upper: 16\n", &format!("upper: {upper}\n"));
        assert_ne!(edit, text);
        let p = dir.join(format!("bounds-{lower}.yaml"));
        std::fs::write(&p, &edit).expect("write");
        let results = dir.join(format!("results-{lower}"));
        let out = sb(&dir)
            .args(["run", "--no-bars", "--results-dir"])
            .arg(&results)
            .arg(&p)
            .assert()
            .code(0);
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert!(stdout.contains(says), "{stdout}");
        if lower == 1 {
            // Both outside the bounds after round 1: nothing left to narrow.
            assert!(
                stdout.contains(
                    "stopped: every variant's capacity is outside the bounds 1..3 in flight"
                ),
                "{stdout}"
            );
            assert!(stdout.contains(", 1 round(s);"), "{stdout}");
        }
        let path = walk(&results)
            .into_iter()
            .find(|p| p.extension().is_some_and(|e| e == "json"))
            .expect("a result");
        let out = sb(&dir)
            .args(["compare", "--json"])
            .arg(&path)
            .assert()
            .code(0);
        let r: Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
        let base = &arr(&r["variants"])[0];
        assert!(base["estimate"].is_null(), "no number at a bound: {base}");
        assert!(base["lower"].is_null() && base["upper"].is_null(), "{base}");
        assert_eq!(arr(&r["comparisons"])[0]["verdict"], "not-computed");
    }
    // Bad bounds are refused before anything runs.
    let inverted = text.replace("lower: 1\n", "lower: 20\n");
    let p = dir.join("inverted.yaml");
    std::fs::write(&p, &inverted).expect("write");
    let out = sb(&dir).arg("validate").arg(&p).assert().code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("the bounds are inverted"), "{stderr}");
    assert!(stderr.contains("hint: swap them"), "{stderr}");
}
