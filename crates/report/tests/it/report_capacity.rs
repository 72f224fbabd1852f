//! The capacity report of a search (`spec.search`): `report.md` and `capacity.csv` (insta
//! snapshots) and `capacity.svg`, on a committed search result (`tests/fixtures/search.json`:
//! an earlier version of `crates/cli/tests/specs/search.yaml` — decode 2 ms + 1 or 0.75 ms
//! per sequence, time scale 0.25, TPOT ≤ 2.125 ms — on the noiseless simulator, capacities 6
//! and 8 in flight), and what a result that is not a search gets.

use std::path::PathBuf;

use servebench_compare::LoadedResult;
use servebench_report::capacity::{capacity, capacity_csv, capacity_svg, document, write};

fn fixture() -> LoadedResult {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/search.json");
    LoadedResult {
        file: "results/search/search.json".into(),
        result: servebench_result::load_result(&path).expect("the search fixture loads"),
    }
}

#[test]
fn the_markdown_and_csv_say_the_capacities_and_how_they_were_searched() {
    let c = capacity(fixture()).expect("a search result");
    let md = servebench_report::markdown::render(&document(&c));
    assert!(
        md.contains("| base (baseline) | **6.0 in flight** | [5.2, 6.8] |"),
        "{md}"
    );
    assert!(md.contains("fast vs base: capacity **+33.3%**"), "{md}");
    insta::assert_snapshot!("capacity_report_md", md);
    let csv = capacity_csv(&c);
    let trials = c.source.result.trials.len();
    assert_eq!(csv.lines().count(), trials + 1, "a row per trial");
    insta::assert_snapshot!("capacity_csv", csv);
}

#[test]
fn the_svg_has_every_trial_the_target_and_each_interval() {
    let c = capacity(fixture()).expect("a search result");
    let svg = capacity_svg(&c).expect("svg");
    assert!(svg.starts_with("<svg") || svg.contains("<svg"), "an SVG");
    assert!(
        svg.contains("attainment target 50%"),
        "the target line is labelled"
    );
    for v in ["base", "fast"] {
        assert!(svg.contains(v), "{v} in the legend");
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report_capacity");
    let files = write(&c, &dir).expect("written");
    let names: Vec<String> = files
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    assert_eq!(
        names,
        ["capacity.svg", "capacity.csv", "report.md", "report.html"]
    );
    let html = std::fs::read_to_string(dir.join("report.html")).expect("html");
    assert!(html.contains("<svg"), "the plot is inline");
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no network reference"
    );
}

#[test]
fn a_result_without_a_search_has_no_capacity_report() {
    let mut r = fixture();
    r.result.spec.spec.search = None;
    assert!(capacity(r).is_none());
}
