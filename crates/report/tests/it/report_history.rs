//! The history report from a fixed history (tests/fixtures/history.json: `servebench history
//! --json` over 16 synthetic runs of one spec — an outlier run, a driver change that starts a
//! second series, a 10% step in it): report.md, report.html (SVG bodies elided) and one trend
//! SVG, snapshot-tested.

use servebench_history::History;
use servebench_report::history::{content, files, trend};
use servebench_report::markdown;

fn fixture() -> History {
    let text = include_str!("../fixtures/history.json");
    serde_json::from_str(text).expect("the fixture is a history")
}

/// `text` with each inline `<svg …>…</svg>` cut to `<svg …>[plot]`.
fn without_svg_bodies(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("<svg") {
        let open_end = i + rest[i..].find('>').expect("an <svg> tag closes") + 1;
        out.push_str(&rest[..open_end]);
        out.push_str("[plot]");
        let close = rest[open_end..].find("</svg>").expect("every <svg> ends");
        rest = &rest[open_end + close..];
    }
    out.push_str(rest);
    out
}

#[test]
fn markdown_of_the_fixture() {
    let md = markdown::render(&content::document(&fixture()));
    insta::assert_snapshot!("history_report_md", md);
}

#[test]
fn html_of_the_fixture() {
    let all = files(&fixture()).expect("renders");
    let (_, html) = all
        .iter()
        .find(|(n, _)| n == "report.html")
        .expect("report.html");
    insta::assert_snapshot!("history_report_html", without_svg_bodies(html));
}

#[test]
fn one_trend_per_metric_and_point() {
    let h = fixture();
    let names: Vec<String> = trend::trends(&h.specs[0])
        .iter()
        .map(trend::Trend::file_name)
        .collect();
    assert_eq!(
        names,
        [
            "trend-history-bench-output_throughput-c16.svg",
            "trend-history-bench-tpot_p50-c16.svg"
        ]
    );
    let all = files(&h).expect("renders");
    let listed: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        listed,
        [
            names[0].as_str(),
            names[1].as_str(),
            "report.md",
            "report.html"
        ]
    );
}

#[test]
fn the_trend_marks_steps_outliers_and_series_breaks() {
    let h = fixture();
    let t = &trend::trends(&h.specs[0])[0];
    let svg = trend::render(&h.specs[0], t).expect("renders");
    assert!(svg.contains("base step -9.9%"), "the step is labelled");
    assert!(
        svg.contains("new series: accelerators[0].driver_version"),
        "the series break is labelled"
    );
    assert!(svg.contains("outlier run"), "the outlier key");
    insta::assert_snapshot!("history_trend_output_throughput_svg", svg);
}
