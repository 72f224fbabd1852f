//! `report.md` (insta snapshot, volatile fields redacted), `report.html` (self-contained: no
//! network reference, every plot inline) and `trials.csv`, on the committed example result
//! (`docs/example-report/`) and variations of it: a failed trial, one variant only, and a
//! baseline and a candidate from two runs.

use std::path::PathBuf;

use servebench_compare::LoadedResult;
use servebench_report::csv::TrialsCsv;
use servebench_report::html::Html;
use servebench_report::markdown::Markdown;
use servebench_report::plots::figures;
use servebench_report::{Exporter, Report, ReportOptions, across, within, write};
use servebench_result::{RunResult, TrialStatus};

fn example() -> LoadedResult {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/example-report");
    let path = std::fs::read_dir(&dir)
        .expect("docs/example-report exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("the example result file is committed in docs/example-report");
    LoadedResult {
        file: "results/sim-ab/example.json".into(),
        result: servebench_result::load_result(&path).expect("the example loads"),
    }
}

fn opts() -> ReportOptions {
    ReportOptions::default()
}

/// Run ids, times, hashes, SHAs, the host and readiness times replaced by placeholders.
fn redact(text: &str, results: &[&RunResult]) -> String {
    let mut out = text.to_owned();
    for r in results {
        let mut pairs: Vec<(String, &str)> = vec![
            (r.run_id.clone(), "[run-id]"),
            (r.spec_hash.clone(), "[spec-hash]"),
            (r.created_at.clone(), "[time]"),
            (r.updated_at.clone(), "[time]"),
        ];
        if let Some(sha) = &r.tool.git_sha {
            pairs.push((sha.clone(), "[git-sha]"));
        }
        if let Some(repo) = &r.repo {
            pairs.push((repo.sha.clone(), "[git-sha]"));
        }
        if let Some(h) = &r.host {
            for v in [&h.hostname, &h.os, &h.kernel, &h.cpu] {
                pairs.push((v.clone(), "[host]"));
            }
            pairs.push((
                format!(
                    "({} cores), {:.0} GiB RAM",
                    h.cores,
                    h.memory_bytes as f64 / (1u64 << 30) as f64
                ),
                "([host])",
            ));
        }
        for variant in r.spec.spec.variants.iter().map(|v| &v.name) {
            let times: Vec<f64> = r
                .servers
                .iter()
                .filter(|s| &s.variant == variant)
                .filter_map(|s| s.ready_after_s)
                .collect();
            let lo = times.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = times.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            pairs.push((format!("{lo:.2}–{hi:.2} s"), "[ready]"));
        }
        // Longest first, so that a SHA is replaced before a prefix of it.
        pairs.sort_by_key(|(k, _)| std::cmp::Reverse(k.len()));
        for (k, v) in pairs {
            if !k.is_empty() {
                out = out.replace(&k, v);
            }
        }
    }
    out
}

fn md(r: &Report) -> String {
    Markdown.export(r).expect("renders")
}

#[test]
fn markdown_of_the_example() {
    let lr = example();
    let raw = lr.result.clone();
    let r = within(lr, &opts()).expect("reports");
    let text = md(&r);
    for section in [
        "## What was run",
        "### Variants",
        "## Verdicts",
        "## Plots",
        "## Flags",
        "## Trials",
    ] {
        assert!(text.contains(section), "{section}");
    }
    for f in figures(&r) {
        assert!(
            text.contains(&format!("]({})", f.exporter.file_name())),
            "plot embedded"
        );
    }
    insta::assert_snapshot!("example_report_md", redact(&text, &[&raw]));
}

/// The example with the candidate's third trial at c=1 made 40% slower: an outlier that
/// changes that cell's verdicts, so the report has flags to list.
fn example_with_a_slow_trial() -> LoadedResult {
    let mut lr = example();
    let t = lr
        .result
        .trials
        .iter_mut()
        .filter(|t| t.variant == "cutedsl" && t.point == 0)
        .nth(2)
        .expect("five cutedsl trials at c=1");
    let s = t.summary.as_mut().expect("a summary");
    for v in [&mut s.all.output_throughput, &mut s.all.total_throughput] {
        *v = v.map(|x| x * 0.6);
    }
    lr
}

#[test]
fn every_flag_is_listed_with_evidence_and_action() {
    let clean = within(example(), &opts()).expect("reports");
    assert!(
        md(&clean).contains("No flag was raised."),
        "the clean example has no flag"
    );
    let r = within(example_with_a_slow_trial(), &opts()).expect("reports");
    let text = md(&r);
    let compare = r.compare.as_ref().expect("compared");
    let all = compare
        .comparisons
        .iter()
        .flat_map(|c| c.metrics.iter().flat_map(|m| &m.flags).chain(&c.flags));
    let mut n = 0;
    for f in all {
        n += 1;
        assert!(
            text.contains(&f.evidence),
            "evidence listed: {}",
            f.evidence
        );
        assert!(text.contains(&f.action), "action listed: {}", f.action);
    }
    assert!(n > 0);
    // The slow trial keeps the cell inconclusive (it would be improved without it): nothing
    // is claimed, so the flag is a look.
    assert!(
        text.contains("`outlier-trial`** (look) — output_throughput at c=1"),
        "{text}"
    );
    assert!(
        text.contains("threatens output_throughput at c=1 (inconclusive; otherwise improved)"),
        "{text}"
    );
    for g in &r.flags {
        assert!(
            text.contains(&format!("**[{}] `{}`**", g.number, g.id.as_str())),
            "group {} headed",
            g.number
        );
    }
}

#[test]
fn html_is_one_self_contained_file() {
    let r = within(example(), &opts()).expect("reports");
    let html = Html.export(&r).expect("renders");
    for banned in [
        "http://", "https://", "<script", "<link", " src=", "url(", "@import", "<iframe", "<object",
    ] {
        assert!(!html.contains(banned), "no {banned:?} in report.html");
    }
    let mut rest = html.as_str();
    while let Some(i) = rest.find("href=\"") {
        rest = &rest[i + 6..];
        let target = &rest[..rest.find('"').expect("quoted")];
        assert!(
            target.starts_with('#') || target == "trials.csv",
            "only in-page anchors and the CSV beside it: {target}"
        );
    }
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    assert_eq!(
        html.matches("<svg").count(),
        figures(&r).len(),
        "every plot inline"
    );
    assert!(html.contains("<style>") && html.starts_with("<!DOCTYPE html>"));
    for g in &r.flags {
        assert!(
            html.contains(&format!("id=\"flag-{}\"", g.number)),
            "anchor per flag"
        );
    }
}

#[test]
fn csv_has_a_row_per_trial() {
    let lr = example();
    let trials = lr.result.trials.len();
    let r = within(lr, &opts()).expect("reports");
    let csv = TrialsCsv.export(&r).expect("renders");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    for col in [
        "run_id",
        "variant",
        "trial",
        "point_label",
        "max_concurrency",
        "status",
        "failure",
        "output_throughput",
        "ttft_p50",
        "tpot_p99",
        "e2e_mean",
    ] {
        assert!(header.contains(&col), "{col}");
    }
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), trials);
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let tput = header
        .iter()
        .position(|c| *c == "output_throughput")
        .expect("column");
    assert!(
        rows.iter()
            .all(|r| r[tput].parse::<f64>().is_ok_and(|v| v > 0.0))
    );
}

#[test]
fn a_failed_trial_is_listed_and_kept_in_the_csv() {
    let mut lr = example();
    let t = &mut lr.result.trials[5];
    t.status = TrialStatus::Failed;
    t.failure = Some("server exited, status 1".into());
    t.summary = None;
    let (variant, trial) = (t.variant.clone(), t.trial);
    let r = within(lr, &opts()).expect("reports");
    let text = md(&r);
    assert!(text.contains("1 trial(s) failed and are left out of every statistic"));
    assert!(text.contains(&format!("{variant} trial {trial} at ")));
    let csv = TrialsCsv.export(&r).expect("renders");
    assert!(
        csv.contains(",failed,\"server exited, status 1\","),
        "quoted"
    );
}

#[test]
fn one_variant_is_reported_without_a_comparison() {
    let mut lr = example();
    lr.result.spec.spec.variants.retain(|v| v.baseline);
    lr.result.trials.retain(|t| t.variant == "cutlass");
    lr.result.servers.retain(|s| s.variant == "cutlass");
    let r = within(lr, &opts()).expect("reports");
    assert!(r.compare.is_none() && r.no_compare.is_some());
    assert_eq!(r.arms.len(), 1);
    assert!(
        !figures(&r)
            .iter()
            .any(|f| f.exporter.file_name().starts_with("ratio-"))
    );
    let text = md(&r);
    assert!(text.contains("No comparison: "));
    assert!(text.contains("No comparison, so no flags."));
}

#[test]
fn two_runs_make_an_across_report() {
    let base = example();
    let mut cand = example();
    cand.file = "results/sim-ab/other.json".into();
    cand.result.run_id = format!("{}-again", cand.result.run_id);
    let (rb, rc) = (base.result.clone(), cand.result.clone());
    let r = across(base, cand, &opts()).expect("reports");
    assert_eq!(r.sources.len(), 2);
    assert_eq!(r.arms.len(), 2);
    assert_eq!(r.arms[0].label, "cutlass (baseline run)");
    assert_eq!(r.arms[1].label, "cutlass (candidate run)");
    let text = redact(&md(&r), &[&rc, &rb]);
    assert!(text.contains("baseline: `results/sim-ab/example.json`"));
    assert!(text.contains("candidate: `results/sim-ab/other.json`"));
    assert!(text.contains("across two runs"));
    assert!(
        text.contains("`stale-baseline`"),
        "across runs is always stale"
    );
}

#[test]
fn write_puts_every_file_in_the_folder() {
    let r = within(example(), &opts()).expect("reports");
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("nested/report");
    let written = write(&r, &out).expect("writes");
    let mut names: Vec<String> = written
        .iter()
        .map(|p| {
            p.file_name()
                .expect("a file")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "cdf.svg",
            "ratio-cutedsl.svg",
            "report.html",
            "report.md",
            "throughput.svg",
            "tpot.svg",
            "trials.csv",
            "ttft.svg"
        ]
    );
    for p in written {
        assert!(std::fs::metadata(&p).expect("exists").len() > 0);
    }
}

/// `report.html` with each inline plot cut to its opening tag: the plots have their own tests
/// (`report_svg`), and the snapshot reviews the document around them.
fn without_svg_bodies(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
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
fn html_of_the_example() {
    let lr = example();
    let raw = lr.result.clone();
    let r = within(lr, &opts()).expect("reports");
    let html = Html.export(&r).expect("renders");
    insta::assert_snapshot!(
        "example_report_html",
        redact(&without_svg_bodies(&html), &[&raw])
    );
}

#[test]
fn csv_of_the_example() {
    let lr = example();
    let raw = lr.result.clone();
    let r = within(lr, &opts()).expect("reports");
    let csv = TrialsCsv.export(&r).expect("renders");
    insta::assert_snapshot!("example_trials_csv", redact(&csv, &[&raw]));
}

#[test]
fn the_share_of_batched_token_events_is_shown_beside_the_trials_when_recorded() {
    // The example predates the share: no table. With shares recorded (one value per
    // variant), a row per point with the baseline's column first.
    let text = md(&within(example(), &opts()).expect("reports"));
    assert!(
        !text.contains("arrived in one read with another"),
        "none recorded"
    );
    let mut lr = example();
    for t in &mut lr.result.trials {
        let s = t.summary.as_mut().expect("a summary");
        s.batched_event_share = Some(if t.variant == "cutedsl" { 0.25 } else { 0.125 });
    }
    let text = md(&within(lr, &opts()).expect("reports"));
    assert!(text.contains("arrived in one read with another"), "{text}");
    let after = &text[text.find("arrived in one read with another").expect("said")..];
    let rows: Vec<&str> = after
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| l.contains("c="))
        .collect();
    assert!(!rows.is_empty(), "{after}");
    for row in rows {
        let (base, cand) = (row.find("12.5%"), row.find("25.0%"));
        assert!(base.is_some() && cand.is_some() && base < cand, "{row}");
    }
}

/// Issue 41, item 2: the report's p column is the same p as `compare`'s for every cell —
/// the Holm-adjusted one when the correction decided the verdicts — and says so in its
/// header. (The report printed each cell's raw p under a note saying the table's p was the
/// adjusted one.)
#[test]
fn the_report_prints_the_same_p_as_compare() {
    let r = within(example(), &opts()).expect("reports");
    let text = md(&r);
    let compare = r.compare.as_ref().expect("compared");
    let compare_text = servebench_compare::render(compare);
    let mut differing = 0;
    for m in compare.comparisons.iter().flat_map(|c| &c.metrics) {
        assert_eq!(m.p_header(), "p (Holm)");
        for p in &m.points {
            let shown = servebench_compare::text::p_value(p.table_p().expect("a p"));
            let raw = servebench_compare::text::p_value(p.p.expect("a p"));
            differing += usize::from(shown != raw);
            let row = text
                .lines()
                .filter(|l| l.starts_with(&format!("| {} |", p.label)))
                .find(|l| l.contains(p.verdict.as_str()) && l.contains(&format!("| {shown} |")))
                .unwrap_or_else(|| {
                    panic!("{} {}: p {shown} in the report\n{text}", m.metric, p.label)
                });
            assert!(row.contains(&format!("| {shown} |")), "{row}");
            assert!(compare_text.contains(&shown), "compare prints {shown}");
        }
    }
    assert!(
        differing > 0,
        "the example has cells whose raw p differs from the adjusted one"
    );
    assert!(text.contains("| p (Holm) |"), "the header says which p");
}

/// The H200 nested design (`trials.per_start: 4`): the four repeats of a trial in one start
/// share its number, and each gets its own telemetry figure (before, the four wrote one file
/// and the report listed it four times).
#[test]
fn every_repeat_within_a_start_has_its_own_telemetry_figure() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../results/gpu-transformers-moe-cost-nested/20261202T021111Z-9b64.json");
    let loaded = LoadedResult {
        file: path.display().to_string(),
        result: servebench_result::load_result(&path).expect("the H200 result loads"),
    };
    let telemetry_trials = loaded
        .result
        .trials
        .iter()
        .filter(|t| t.summary.as_ref().is_some_and(|s| s.telemetry.is_some()))
        .count();
    assert_eq!(telemetry_trials, 24);
    let r = within(loaded, &opts()).expect("reports");
    let names: Vec<String> = figures(&r)
        .iter()
        .map(|f| f.exporter.file_name())
        .filter(|n| n.starts_with("telemetry-"))
        .collect();
    let unique: std::collections::BTreeSet<&String> = names.iter().collect();
    assert_eq!(names.len(), 24, "{names:?}");
    assert_eq!(unique.len(), 24, "{names:?}");
    assert!(unique.contains(&"telemetry-eager-t2-r3-p0.svg".to_owned()));
}
