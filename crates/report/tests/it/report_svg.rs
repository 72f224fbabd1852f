//! The report's SVG plots, tested structurally on the committed example result
//! (`docs/example-report/`): a series per arm, an error bar per point with an interval, a
//! faint dot per trial, a red ring and footnote marker per flagged point, units and a log
//! axis where the sweep spans more than a decade. The drawing conventions are documented in
//! `report/plots/canvas.rs`.

use std::path::PathBuf;

use servebench_compare::LoadedResult;
use servebench_report::plots::cdf::Cdf;
use servebench_report::plots::latency::Latency;
use servebench_report::plots::ratio::{Ratio, file_for};
use servebench_report::plots::throughput::Throughput;
use servebench_report::{Exporter, Report, ReportError, ReportOptions, Role, SweepAxis, within};
use servebench_result::load_result;

const FLAG_RED: &str = "#D62728";
const BLUE: &str = "#0072B2";
const ORANGE: &str = "#E69F00";

fn example() -> LoadedResult {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/example-report");
    let path = std::fs::read_dir(&dir)
        .expect("docs/example-report exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("the example result file is committed in docs/example-report");
    LoadedResult {
        file: "example.json".into(),
        result: load_result(&path).expect("the example result loads"),
    }
}

fn report() -> Report {
    within(example(), &ReportOptions::default()).expect("the example reports")
}

/// One SVG element: its tag and attributes.
#[derive(Debug)]
struct El {
    tag: String,
    attrs: Vec<(String, String)>,
    text: String,
}

impl El {
    fn get(&self, k: &str) -> &str {
        self.attrs
            .iter()
            .find(|(a, _)| a == k)
            .map_or("", |(_, v)| v.as_str())
    }

    fn points(&self) -> Vec<(i32, i32)> {
        self.get("points")
            .split_whitespace()
            .filter_map(|p| {
                let (x, y) = p.split_once(',')?;
                Some((x.parse().ok()?, y.parse().ok()?))
            })
            .collect()
    }
}

/// Every element of an SVG (a tiny parser for plotters' flat output).
fn parse(svg: &str) -> Vec<El> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        if rest.starts_with('/') {
            continue;
        }
        let end = rest.find('>').expect("every tag is closed");
        let body = rest[..end].trim_end_matches('/');
        let (tag, mut attrs_s) = body.split_once(' ').unwrap_or((body, ""));
        let mut attrs = Vec::new();
        while let Some(eq) = attrs_s.find("=\"") {
            let key = attrs_s[..eq].trim().to_owned();
            let after = &attrs_s[eq + 2..];
            let close = after.find('"').expect("attribute values are quoted");
            attrs.push((key, after[..close].to_owned()));
            attrs_s = &after[close + 1..];
        }
        let text = rest[end + 1..]
            .split('<')
            .next()
            .unwrap_or("")
            .trim()
            .to_owned();
        out.push(El {
            tag: tag.to_owned(),
            attrs,
            text,
        });
    }
    out
}

/// Error bars: six-point polylines shaped cap, stem, cap.
fn error_bars<'a>(els: &'a [El], color: &str) -> Vec<&'a El> {
    els.iter()
        .filter(|e| e.tag == "polyline" && e.get("stroke") == color)
        .filter(|e| {
            let p = e.points();
            p.len() == 6
                && p[0].1 == p[1].1
                && p[2].0 == p[3].0
                && p[4].1 == p[5].1
                && p[2].0 == (p[0].0 + p[1].0) / 2
        })
        .collect()
}

/// Series lines: polylines of stroke width 2 through four points or more (the example's
/// sweep), not error bars (a dash of a dashed line has two or three points).
fn series<'a>(els: &'a [El], color: &str) -> Vec<&'a El> {
    let bars: Vec<*const El> = error_bars(els, color)
        .into_iter()
        .map(|e| e as *const El)
        .collect();
    els.iter()
        .filter(|e| e.tag == "polyline" && e.get("stroke") == color)
        .filter(|e| e.get("stroke-width") == "2" && e.points().len() >= 4)
        .filter(|e| !bars.contains(&(*e as *const El)))
        .collect()
}

fn trial_dots(els: &[El], color: &str) -> usize {
    els.iter()
        .filter(|e| e.tag == "circle" && e.get("fill") == color && e.get("opacity") == "0.35")
        .count()
}

fn rings(els: &[El]) -> usize {
    els.iter()
        .filter(|e| e.tag == "circle" && e.get("stroke") == FLAG_RED && e.get("r") == "10")
        .count()
}

fn markers(els: &[El]) -> Vec<String> {
    els.iter()
        .filter(|e| e.tag == "text" && e.get("fill") == FLAG_RED && e.text.starts_with('['))
        .map(|e| e.text.clone())
        .collect()
}

fn texts(els: &[El]) -> Vec<&str> {
    els.iter()
        .filter(|e| e.tag == "text")
        .map(|e| e.text.as_str())
        .collect()
}

/// Points of `metric` ringed in the sweep plots, over all arms.
fn marked(r: &Report, metric: &str) -> usize {
    r.arms
        .iter()
        .enumerate()
        .map(|(i, arm)| {
            r.points(arm)
                .iter()
                .filter(|p| !r.marks.at(i, metric, &p.label).is_empty())
                .count()
        })
        .sum()
}

#[test]
fn throughput_has_a_series_bars_and_dots_per_arm() {
    let r = report();
    let els = parse(&Throughput.export(&r).expect("draws"));
    for (color, arm) in [(BLUE, &r.arms[0]), (ORANGE, &r.arms[1])] {
        assert_eq!(series(&els, color).len(), 1, "one line per arm ({color})");
        assert_eq!(
            series(&els, color)[0].points().len(),
            4,
            "through 4 sweep points"
        );
        assert_eq!(
            error_bars(&els, color).len(),
            4,
            "an interval bar per point"
        );
        let trials = r
            .result(arm)
            .trials
            .iter()
            .filter(|t| t.variant == arm.variant)
            .count();
        assert_eq!(trial_dots(&els, color), trials, "a dot per trial");
    }
    let t = texts(&els);
    assert!(
        t.contains(&"output throughput (tok/s)"),
        "y axis with its unit: {t:?}"
    );
    assert!(
        t.contains(&"concurrency limit (requests in flight), log scale"),
        "1…32 spans more than a decade: log x"
    );
    for tick in ["1", "4", "16", "32"] {
        assert!(t.contains(&tick), "a tick at each sweep value: {tick}");
    }
    assert!(
        t.contains(&"cutlass (baseline)") && t.contains(&"cutedsl"),
        "legend"
    );
}

#[test]
fn every_flagged_point_is_ringed_and_numbered() {
    let mut r = report();
    // The clean example has no flag (flags fire only where they could change a verdict):
    // mark two points by hand so the rule "one ring and one marker per flagged point" is
    // exercised on several points.
    let arm = r
        .arms
        .iter()
        .position(|a| a.role == Role::Baseline)
        .expect("baseline");
    for i in [0, 2] {
        let label = r.points(&r.arms[arm])[i].label.clone();
        r.marks.add(arm, "output_throughput", &label, 90 + i);
    }
    let els = parse(&Throughput.export(&r).expect("draws"));
    let n = marked(&r, "output_throughput");
    assert!(n >= 2);
    // One ring per flagged point, plus the legend's.
    assert_eq!(rings(&els), n);
    assert_eq!(markers(&els).len(), n);
    assert!(texts(&els).contains(&"flagged [n]: see Flags"));
}

#[test]
fn a_mark_added_by_hand_draws_one_more_ring_with_its_number() {
    let mut r = report();
    let before = rings(&parse(&Throughput.export(&r).expect("draws")));
    let arm = r
        .arms
        .iter()
        .position(|a| a.role == Role::Baseline)
        .expect("baseline");
    let label = r.points(&r.arms[arm])[1].label.clone();
    assert!(r.marks.at(arm, "output_throughput", &label).is_empty());
    r.marks.add(arm, "output_throughput", &label, 99);
    let els = parse(&Throughput.export(&r).expect("draws"));
    assert_eq!(rings(&els), before + 1);
    assert!(markers(&els).contains(&"[99]".to_owned()));
}

#[test]
fn without_flags_there_is_no_ring_and_no_flag_legend() {
    let mut r = report();
    r.flags.clear();
    r.marks = Default::default();
    let els = parse(&Throughput.export(&r).expect("draws"));
    assert_eq!(rings(&els), 0);
    assert!(markers(&els).is_empty());
    assert!(!texts(&els).contains(&"flagged [n]: see Flags"));
}

#[test]
fn latency_plots_draw_p50_solid_and_p99_dashed_per_arm() {
    let r = report();
    let lat = Latency {
        family: "ttft",
        name: "TTFT",
    };
    assert_eq!(lat.file_name(), "ttft.svg");
    let els = parse(&lat.export(&r).expect("draws"));
    for color in [BLUE, ORANGE] {
        assert_eq!(series(&els, color).len(), 1, "one solid p50 line ({color})");
        assert_eq!(
            error_bars(&els, color).len(),
            8,
            "p50 and p99 bars at 4 points"
        );
        let dashes = els
            .iter()
            .filter(|e| e.tag == "polyline" && e.get("stroke") == color)
            .filter(|e| e.points().len() <= 3)
            .count();
        assert!(dashes > 10, "the p99 line is dashed ({dashes} dashes)");
    }
    let t = texts(&els);
    assert!(
        t.iter().any(|s| s.starts_with("TTFT (ms)")),
        "unit on the y axis: {t:?}"
    );
    assert!(t.contains(&"cutlass (baseline) p99"));
    assert_eq!(rings(&els), marked(&r, "ttft_p50") + marked(&r, "ttft_p99"));
}

#[test]
fn the_ratio_plot_has_a_panel_per_metric_a_bar_per_point_and_the_band() {
    let r = report();
    let c = &r.compare.as_ref().expect("compared").comparisons[0];
    let ratio = Ratio {
        comparison: 0,
        candidate: c.candidate.variant.clone(),
    };
    assert_eq!(ratio.file_name(), file_for("cutedsl"));
    let els = parse(&ratio.export(&r).expect("draws"));
    let bars: usize = ["#009E73", "#CC79A7", "#555555"]
        .iter()
        .map(|c| error_bars(&els, c).len())
        .sum();
    let points: usize = c.metrics.iter().map(|m| m.points.len()).sum();
    assert_eq!(bars, points, "one interval bar per metric and point");
    let t = texts(&els);
    for m in &c.metrics {
        assert!(
            t.iter().any(|s| s.starts_with(&m.metric)),
            "a panel titled {}",
            m.metric
        );
    }
    assert!(t.contains(&"±θ: practically no change"));
    assert!(t.contains(&"0%"), "the no-change line is labelled");
    let flagged: usize = c
        .metrics
        .iter()
        .map(|m| {
            m.points
                .iter()
                .filter(|p| {
                    p.effect.is_some()
                        && !servebench_report::findings::numbers_at(&r, 0, &m.metric, &p.label)
                            .is_empty()
                })
                .count()
        })
        .sum();
    assert_eq!(rings(&els), flagged);
    let band = els
        .iter()
        .filter(|e| e.tag == "rect" && e.get("fill") == "#D9D9D9")
        .count();
    assert_eq!(
        band,
        c.metrics.len() + 1,
        "a band per panel and the legend's"
    );
}

#[test]
fn cdfs_draw_one_curve_per_arm_and_family_at_the_chosen_point() {
    let r = report();
    assert_eq!(r.cdf_point, "c=32", "default: the highest concurrency");
    let els = parse(&Cdf.export(&r).expect("draws"));
    for color in [BLUE, ORANGE] {
        let curves = els
            .iter()
            .filter(|e| e.tag == "polyline" && e.get("stroke") == color)
            .filter(|e| e.points().len() > 100)
            .count();
        assert_eq!(curves, 4, "TTFT, TPOT, ITL and E2E ({color})");
    }
    let t = texts(&els);
    assert!(t.iter().any(|s| s.contains("at c=32")));
    assert!(
        t.iter()
            .any(|s| s.starts_with("cutlass (baseline) (240 requests, 5 trials"))
    );

    let opts = ReportOptions {
        cdf_point: Some("4".into()),
        ..Default::default()
    };
    let r4 = within(example(), &opts).expect("reports");
    assert_eq!(r4.cdf_point, "c=4");
    let bad = ReportOptions {
        cdf_point: Some("c=7".into()),
        ..Default::default()
    };
    match within(example(), &bad) {
        Err(ReportError::UnknownPoint { available, .. }) => {
            assert_eq!(available, "c=1, c=4, c=16, c=32");
        }
        other => panic!("expected UnknownPoint, got {other:?}"),
    }
}

#[test]
fn a_sweep_of_less_than_a_decade_is_linear_and_other_keys_make_categories() {
    let mut lr = example();
    lr.result.points.truncate(3); // c = 1, 4, 16: more than a decade
    let r = within(lr.clone(), &ReportOptions::default()).expect("reports");
    assert!(matches!(r.axis, SweepAxis::Concurrency { log: true, .. }));

    lr.result
        .points
        .retain(|p| p.max_concurrency.unwrap_or(0) >= 4);
    let r = within(lr.clone(), &ReportOptions::default()).expect("reports");
    assert!(matches!(r.axis, SweepAxis::Concurrency { log: false, .. }));
    let t = texts(&parse(&Throughput.export(&r).expect("draws"))).join("|");
    assert!(t.contains("concurrency limit (requests in flight)") && !t.contains("log scale"));

    let mut lr = example();
    lr.result.points[3].input_tokens = Some(256);
    let r = within(lr, &ReportOptions::default()).expect("reports");
    match &r.axis {
        SweepAxis::Category { labels } => {
            assert_eq!(labels.len(), 4);
            assert!(labels.contains(&"c=32 in=256".to_owned()), "{labels:?}");
        }
        other => panic!("expected categories, got {other:?}"),
    }
    let els = parse(&Throughput.export(&r).expect("draws"));
    let t = texts(&els);
    assert!(t.contains(&"c=32 in=256") && t.contains(&"sweep point"));
}
