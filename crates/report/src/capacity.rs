//! The report of a capacity search (`spec.search`; docs/search.md): `report.md`,
//! `report.html`, `capacity.svg` — SLO attainment against load per variant, the target line,
//! each variant's capacity marked and its interval shaded — and `capacity.csv`, one row per
//! trial of the search with why its load was chosen. The numbers are servebench-compare's
//! capacity analysis; the document model, canvas and axes are the sweep report's.

use std::path::{Path, PathBuf};

use plotters::style::text_anchor::HPos;
use plotters::style::{BLACK, Color, RGBColor};
use servebench_compare::LoadedResult;
use servebench_compare::capacity::load;
use servebench_compare::capacity::{CapacityOutcome, CapacityReport, capacity_report};
use servebench_compare::text::{pct, signed_pct};
use servebench_result::{SearchOutcome, TrialStatus};

use crate::doc::{Block, Document, Line, code, strong, t};
use crate::error::ReportError;
use crate::plots::axis::{Axis, Panel, Ticks};
use crate::plots::canvas::{Key, arm_color, svg, text_width};

/// The plot's file name.
pub const SVG_FILE: &str = "capacity.svg";
/// The steps' file name.
pub const CSV_FILE: &str = "capacity.csv";
const SIZE: (u32, u32) = (960, 560);

/// A capacity report: the result and compare's analysis of it.
#[derive(Debug, Clone)]
pub struct Capacity {
    /// The result file.
    pub source: LoadedResult,
    /// compare's capacity analysis.
    pub analysis: CapacityReport,
}

/// The capacity report of `source`, or `None` when it is not a search.
pub fn capacity(source: LoadedResult) -> Option<Capacity> {
    let analysis = capacity_report(&source.result)?;
    Some(Capacity { source, analysis })
}

/// One point of the plot: a trial's load and attainment.
struct Dot {
    variant: usize,
    load: f64,
    attainment: f64,
}

fn dots(c: &Capacity) -> Vec<Dot> {
    let names: Vec<&str> = c
        .analysis
        .variants
        .iter()
        .map(|v| v.variant.as_str())
        .collect();
    let Some(log) = &c.source.result.search else {
        return Vec::new();
    };
    log.blocks
        .iter()
        .flat_map(|b| b.steps.iter().map(move |s| (b, s)))
        .filter_map(|(b, s)| {
            Some(Dot {
                variant: names.iter().position(|n| *n == b.variant)?,
                load: s.load,
                attainment: s.attainment?,
            })
        })
        .collect()
}

/// `capacity.svg`.
pub fn capacity_svg(c: &Capacity) -> Result<String, ReportError> {
    let a = &c.analysis;
    let dots = dots(c);
    let mut xs: Vec<f64> = dots.iter().map(|d| d.load).collect();
    xs.extend([a.lower_bound, a.upper_bound]);
    for v in &a.variants {
        xs.extend(v.lower.iter().chain(&v.upper).copied().filter(|x| *x > 0.0));
    }
    let x = Axis::fit(
        &format!(
            "{} ({})",
            match a.axis {
                servebench_spec::SearchAxis::RequestRate => "request rate",
                servebench_spec::SearchAxis::MaxConcurrency => "concurrency limit",
            },
            a.unit
        ),
        &xs,
        true,
        false,
        Ticks::Number,
    );
    let mut ys: Vec<f64> = dots.iter().map(|d| d.attainment).collect();
    ys.extend([a.attainment, 1.0]);
    let lo = ys.iter().copied().fold(1.0, f64::min).min(a.attainment);
    let y = Axis::fit(
        "requests meeting every SLO (share of the trial)",
        &[lo, 1.0],
        false,
        false,
        Ticks::Percent,
    );
    svg(SVG_FILE, SIZE, |canvas| {
        let mut keys: Vec<Key> = a
            .variants
            .iter()
            .enumerate()
            .map(|(i, v)| Key::Series {
                label: format!("{} capacity", v.variant),
                color: arm_color(i),
                dashed: false,
            })
            .collect();
        keys.push(Key::Trial("one trial".into()));
        keys.push(Key::Band("capacity interval".into()));
        keys.push(Key::Line {
            label: format!("attainment target {}", pct(a.attainment)),
            color: BLACK,
        });
        let width = SIZE.0 as i32 - 40;
        let legend_h = canvas.legend(&keys, (20, 0), width, false)?;
        let (top, _) = canvas
            .root
            .split_vertically((SIZE.1 as i32 - legend_h - 8).max(200) as u32);
        let panel = Panel::new(
            SVG_FILE,
            &top,
            Some("SLO attainment against load, and each variant's capacity"),
            x,
            y,
        )?;
        let (left, ptop, right, bottom) = panel.bounds();
        // Capacity intervals first (shaded), then the target, the trials and the estimates.
        for (i, v) in a.variants.iter().enumerate() {
            if let (Some(l), Some(u)) = (v.lower, v.upper) {
                let (x0, _) = panel.px(l.max(panel.x.lo), 0.0);
                let (x1, _) = panel.px(u.min(panel.x.hi), 0.0);
                canvas.rect(
                    (x0.max(left), ptop),
                    (x1.min(right).max(x0.max(left) + 1), bottom),
                    arm_color(i).mix(0.15),
                )?;
            }
        }
        let (_, yt) = panel.px(panel.x.lo, a.attainment);
        canvas.dashed(&[(left, yt), (right, yt)], BLACK.mix(0.8), 1)?;
        for d in &dots {
            canvas.circle(
                panel.px(d.load, d.attainment),
                3,
                arm_color(d.variant).mix(0.35),
                true,
                1,
            )?;
        }
        for (i, v) in a.variants.iter().enumerate() {
            let color: RGBColor = arm_color(i);
            let (Some(e), CapacityOutcome::Estimated) = (v.estimate, &v.outcome) else {
                continue;
            };
            let (xe, _) = panel.px(e, 0.0);
            canvas.line(&[(xe, ptop), (xe, bottom)], color.to_rgba(), 2)?;
            canvas.marker((xe, yt), color, false)?;
            let label = format!("{} {}", a.load_text(e), v.variant);
            let flip = xe + text_width(&label, 13) + 6 > right;
            let (h, dx) = if flip {
                (HPos::Right, -5)
            } else {
                (HPos::Left, 5)
            };
            canvas.text(
                (xe + dx, ptop + 12 + 16 * i as i32),
                &label,
                13,
                color,
                h,
                true,
            )?;
        }
        canvas.legend(&keys, (20, SIZE.1 as i32 - legend_h - 4), width, true)?;
        Ok(())
    })
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// `capacity.csv`: one row per trial of the search.
pub fn capacity_csv(c: &Capacity) -> String {
    let mut out = String::from(
        "variant,round,block,seq,step,load,why,attainment,passed,invalid,start_outcome,start_estimate\n",
    );
    let Some(log) = &c.source.result.search else {
        return out;
    };
    for b in &log.blocks {
        let (outcome, estimate) = match &b.outcome {
            Some(SearchOutcome::Bracketed { estimate, .. }) => ("bracketed", estimate.to_string()),
            Some(SearchOutcome::BelowLower { .. }) => ("below_lower", String::new()),
            Some(SearchOutcome::AboveUpper { .. }) => ("above_upper", String::new()),
            Some(SearchOutcome::Invalid { .. }) => ("invalid", String::new()),
            None => ("cut_short", String::new()),
        };
        for (i, s) in b.steps.iter().enumerate() {
            let row = [
                csv_field(&b.variant),
                b.round.to_string(),
                b.block.to_string(),
                s.seq.to_string(),
                (i + 1).to_string(),
                s.load.to_string(),
                csv_field(&s.why),
                s.attainment.map(|a| a.to_string()).unwrap_or_default(),
                s.passed.map(|p| p.to_string()).unwrap_or_default(),
                csv_field(s.invalid.as_deref().unwrap_or("")),
                outcome.to_owned(),
                estimate.clone(),
            ];
            out.push_str(&row.join(","));
            out.push('\n');
        }
    }
    out
}

/// The report's document.
pub fn document(c: &Capacity) -> Document {
    let a = &c.analysis;
    let r = &c.source.result;
    let mut blocks = vec![Block::Para(vec![
        t("The highest "),
        t(match a.axis {
            servebench_spec::SearchAxis::RequestRate => "request rate",
            servebench_spec::SearchAxis::MaxConcurrency => "concurrency",
        }),
        t(" each variant sustains with at least "),
        strong(pct(a.attainment)),
        t(" of a trial's requests meeting "),
        strong(a.slo.clone()),
        t(format!(
            ", searched between {} and {} {} to a precision of {}. Run ",
            load(a.lower_bound),
            load(a.upper_bound),
            a.unit,
            a.precision
        )),
        code(r.run_id.clone()),
        t(format!(
            ", {} round(s). Intervals are {}% repeated confidence intervals over server starts \
             (docs/search.md).",
            a.rounds,
            load((1.0 - a.alpha) * 100.0)
        )),
    ])];
    blocks.push(Block::Para(match &a.stopped {
        Some(w) => vec![t("Stopped: "), t(w.clone())],
        None => vec![strong(
            "The search did not finish (interrupted or failed): the numbers are from the rounds \
             measured.",
        )],
    }));
    blocks.push(Block::Heading(2, "Capacity".into()));
    let rows: Vec<Vec<Line>> = a
        .variants
        .iter()
        .map(|v| {
            let name = if v.baseline {
                format!("{} (baseline)", v.variant)
            } else {
                v.variant.clone()
            };
            let (cap, ci) = match (&v.outcome, v.estimate, v.lower, v.upper) {
                (CapacityOutcome::Estimated, Some(e), Some(l), Some(u)) => (
                    format!("{} {}", a.load_text(e), a.unit),
                    format!("[{}, {}]", a.load_text(l), a.load_text(u)),
                ),
                (CapacityOutcome::BelowLower { .. }, ..) => {
                    (format!("< {} {}", load(a.lower_bound), a.unit), "—".into())
                }
                (CapacityOutcome::AboveUpper { .. }, ..) => {
                    (format!("> {} {}", load(a.upper_bound), a.unit), "—".into())
                }
                _ => ("—".into(), "—".into()),
            };
            vec![
                vec![t(name)],
                vec![strong(cap)],
                vec![t(ci)],
                vec![t(v.start_estimates.len().to_string())],
                vec![t(v.trials.to_string())],
                vec![t(v.note.clone())],
            ]
        })
        .collect();
    blocks.push(Block::Table {
        header: [
            "variant",
            "capacity",
            "interval",
            "server starts",
            "trials",
            "note",
        ]
        .map(String::from)
        .to_vec(),
        right: vec![false, true, true, true, true, false],
        rows,
    });
    if !a.comparisons.is_empty() {
        blocks.push(Block::Heading(2, "Against the baseline".into()));
        blocks.push(Block::List(
            a.comparisons
                .iter()
                .map(|cmp| match (cmp.ratio, cmp.lower, cmp.upper) {
                    (Some(x), Some(l), Some(u)) => vec![
                        t(format!("{} vs {}: capacity ", cmp.candidate, cmp.baseline)),
                        strong(signed_pct(x - 1.0)),
                        t(format!(
                            " [{}, {}] — ",
                            signed_pct(l - 1.0),
                            signed_pct(u - 1.0)
                        )),
                        strong(cmp.verdict.clone()),
                        t(format!(" (θ = {})", pct(a.threshold))),
                    ],
                    _ => vec![t(format!(
                        "{} vs {}: not compared — {}",
                        cmp.candidate,
                        cmp.baseline,
                        cmp.note.as_deref().unwrap_or("no interval")
                    ))],
                })
                .collect(),
        ));
    }
    blocks.push(Block::Figure {
        file: SVG_FILE.into(),
        alt: "SLO attainment against load per variant, with each capacity and its interval".into(),
        caption: vec![t(format!(
            "Each dot is one trial: its load and the share of its requests that met every SLO. \
             The dashed line is the target ({}); a vertical line is a variant's capacity and \
             its shade the interval. Loads differ between server starts (each round's grid is \
             shifted), so dots rarely share a load.",
            pct(a.attainment)
        ))],
    });
    blocks.push(Block::Heading(2, "How it was searched".into()));
    blocks.push(Block::Para(vec![t(
        "Each server start bisected its round's grid (the first round the whole of it, later \
         rounds from the estimate so far, stepping away until the outcome changed). ✓ passed, \
         ✗ failed, ? could not be judged.",
    )]));
    if let Some(log) = &r.search {
        let failed: u64 = r
            .trials
            .iter()
            .filter(|t| t.status != TrialStatus::Ok)
            .count() as u64;
        let rows: Vec<Vec<Line>> = log
            .blocks
            .iter()
            .map(|b| {
                let steps: Vec<String> = b
                    .steps
                    .iter()
                    .map(|s| {
                        format!(
                            "{}{}",
                            load(s.load),
                            match s.passed {
                                Some(true) => "✓",
                                Some(false) => "✗",
                                None => "?",
                            }
                        )
                    })
                    .collect();
                let outcome = match &b.outcome {
                    Some(SearchOutcome::Bracketed { estimate, .. }) => {
                        format!("≈ {} {}", a.load_text(*estimate), a.unit)
                    }
                    Some(SearchOutcome::BelowLower { .. }) => "below the lower bound".into(),
                    Some(SearchOutcome::AboveUpper { .. }) => "above the upper bound".into(),
                    Some(SearchOutcome::Invalid { reason }) => format!("no estimate: {reason}"),
                    None => "cut short (not used)".into(),
                };
                vec![
                    vec![t(b.round.to_string())],
                    vec![t(b.variant.clone())],
                    vec![t(b.start.map(load).unwrap_or_else(|| "—".into()))],
                    vec![t(steps.join(" "))],
                    vec![t(outcome)],
                ]
            })
            .collect();
        blocks.push(Block::Table {
            header: [
                "round",
                "variant",
                "started at",
                "loads measured",
                "outcome",
            ]
            .map(String::from)
            .to_vec(),
            right: vec![true, false, true, false, false],
            rows,
        });
        if failed > 0 {
            blocks.push(Block::Para(vec![t(format!(
                "{failed} trial(s) failed; their server starts gave no estimate."
            ))]));
        }
    }
    blocks.push(Block::Para(vec![
        t("Every trial with its load, reason and attainment: "),
        crate::doc::Span::Link {
            text: CSV_FILE.into(),
            href: CSV_FILE.into(),
        },
        t("."),
    ]));
    Document {
        title: format!("Capacity under SLOs: {}", r.spec_name),
        blocks,
    }
}

/// Write `report.md`, `report.html`, `capacity.svg` and `capacity.csv` into `dir`.
pub fn write(c: &Capacity, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    std::fs::create_dir_all(dir).map_err(|error| ReportError::Write {
        path: dir.to_owned(),
        error,
    })?;
    let svg = capacity_svg(c)?;
    let doc = document(c);
    let files = [
        (SVG_FILE.to_owned(), svg.clone()),
        (CSV_FILE.to_owned(), capacity_csv(c)),
        ("report.md".to_owned(), crate::markdown::render(&doc)),
        (
            "report.html".to_owned(),
            crate::html::render(&doc, &[(SVG_FILE.to_owned(), svg)]),
        ),
    ];
    let mut written = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|error| ReportError::Write {
            path: path.clone(),
            error,
        })?;
        written.push(path);
    }
    Ok(written)
}
