//! The "Verdicts" and "Flags" sections, from `servebench compare`'s report: per comparison
//! its arms, notes and fingerprint differences, per metric a table of sweep points (means
//! with CIs, change with CI, p, verdict, footnote markers), the advice for undecided cells
//! and any sign change; then every flag group with its evidence, the verdicts it threatens
//! and its action.

use servebench_stats::flags::FlagLevel;
use servebench_stats::verdict::Scale;
use servebench_stats::{Direction, Estimate};

use servebench_compare::words::{advice_sentence, threatens_words};
use servebench_compare::{Comparison, MetricReport, Mode, PointReport, VerdictKind};

use super::doc::{Block, Line, Span, code, strong, t};
use super::findings::numbers_at;
use super::model::Report;
use super::text::{change, num};
use servebench_compare::text::pct;

fn estimate(e: Option<&Estimate>, n: usize) -> String {
    match e {
        Some(e) => format!(
            "{} [{}, {}]",
            num(e.point),
            num(e.ci.lower),
            num(e.ci.upper)
        ),
        None if n == 0 => "—".into(),
        None => format!("n={n}, no CI"),
    }
}

fn signed(v: f64) -> String {
    if v >= 0.0 {
        format!("+{}", num(v))
    } else {
        num(v)
    }
}

fn effect(m: &MetricReport, p: &PointReport) -> String {
    match (&p.effect, m.scale) {
        (None, _) => p.error.clone().unwrap_or_else(|| "—".into()),
        (Some(e), Scale::Log) => format!(
            "{} [{}, {}]",
            change(e.point),
            change(e.ci.lower),
            change(e.ci.upper)
        ),
        (Some(e), Scale::Arithmetic) => format!(
            "{} [{}, {}]",
            signed(e.point),
            signed(e.ci.lower),
            signed(e.ci.upper)
        ),
    }
}

/// compare's own formatting of a p, so a cell reads the same in both.
fn p_value(p: Option<f64>) -> String {
    p.map_or_else(|| "—".into(), servebench_compare::text::p_value)
}

fn verdict(p: &PointReport) -> Line {
    let word = p.verdict.as_str().to_owned();
    match p.verdict {
        VerdictKind::Improved | VerdictKind::Regressed | VerdictKind::Equivalent => {
            vec![strong(word)]
        }
        _ => vec![t(word)],
    }
}

fn direction(d: Direction) -> &'static str {
    match d {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    }
}

fn metric_blocks(report: &Report, ci: usize, m: &MetricReport) -> Vec<Block> {
    let (means, what) = match m.scale {
        Scale::Log => ("geometric mean", format!("θ = ±{}", pct(m.threshold))),
        Scale::Arithmetic => ("mean", "θ: see each point's margin".to_owned()),
    };
    let mut out = vec![Block::Para(vec![
        code(m.metric.clone()),
        t(format!(
            " ({}, {}, {what}) — {means} [95% CI] over trials; change = {}",
            m.unit,
            direction(m.direction),
            match m.scale {
                Scale::Log => "candidate / baseline − 1",
                Scale::Arithmetic => "candidate − baseline",
            }
        )),
    ])];
    let rows = m
        .points
        .iter()
        .map(|p| {
            let mut flags: Line = Vec::new();
            for n in numbers_at(report, ci, &m.metric, &p.label) {
                if !flags.is_empty() {
                    flags.push(t(" "));
                }
                flags.push(Span::Flag(n));
            }
            if flags.is_empty() {
                flags.push(t(""));
            }
            vec![
                vec![t(p.label.clone())],
                vec![t(format!("{}/{}", p.n_baseline, p.n_candidate))],
                vec![t(estimate(p.baseline.as_ref(), p.n_baseline))],
                vec![t(estimate(p.candidate.as_ref(), p.n_candidate))],
                vec![t(effect(m, p))],
                vec![t(p_value(p.table_p()))],
                verdict(p),
                flags,
            ]
        })
        .collect();
    out.push(Block::Table {
        header: [
            "point",
            "n",
            "baseline",
            "candidate",
            "change [95% CI]",
            m.p_header(),
            "verdict",
            "flags",
        ]
        .map(String::from)
        .to_vec(),
        right: vec![false, true, true, true, true, true, false, false],
        rows,
    });
    if let Some(a) = advice_sentence(m) {
        out.push(Block::Para(vec![strong("Advice:"), t(format!(" {a}."))]));
    }
    for c in &m.crossovers {
        let mut line = vec![
            strong(if c.sound {
                "Crossover:"
            } else {
                "Sign change (not a finding yet):"
            }),
            t(" "),
        ];
        line.push(t(c.description.clone()));
        if let Some(why) = &c.why_not {
            line.push(t(format!(" — {why}.")));
        }
        out.push(Block::Para(line));
    }
    out
}

fn comparison_blocks(report: &Report, ci: usize, c: &Comparison) -> Vec<Block> {
    let how = match (c.mode, c.interleaved) {
        (Mode::WithinRun, true) => "within one run, interleaved",
        (Mode::WithinRun, false) => "within one run, NOT interleaved",
        (Mode::AcrossRuns, _) => "across two runs (between-session variance is not in the SE)",
    };
    let mut out = vec![
        Block::Heading(
            3,
            format!("{} vs {} ({how})", c.candidate.variant, c.baseline.variant),
        ),
        Block::List(vec![
            vec![
                t("baseline "),
                code(c.baseline.variant.clone()),
                t(format!(" — run {}", c.baseline.run_id)),
            ],
            vec![
                t("candidate "),
                code(c.candidate.variant.clone()),
                t(format!(" — run {}", c.candidate.run_id)),
            ],
        ]),
    ];
    if !c.fingerprint_differences.is_empty() {
        out.push(Block::Para(vec![strong("Fingerprint differences:")]));
        out.push(Block::List(
            c.fingerprint_differences
                .iter()
                .map(|d| {
                    vec![
                        code(d.field.clone()),
                        t(format!(
                            ": baseline {}, candidate {}",
                            d.baseline, d.candidate
                        )),
                    ]
                })
                .collect(),
        ));
    }
    if !c.notes.is_empty() {
        out.push(Block::List(
            c.notes.iter().map(|n| vec![t(n.clone())]).collect(),
        ));
    }
    for m in &c.metrics {
        out.extend(metric_blocks(report, ci, m));
    }
    out
}

/// The "Verdicts" section.
pub fn verdict_blocks(report: &Report) -> Vec<Block> {
    let mut out = vec![Block::Heading(2, "Verdicts".into())];
    let Some(compare) = &report.compare else {
        out.push(Block::Para(vec![t(format!(
            "No comparison: {}.",
            report.no_compare.as_deref().unwrap_or("none was made")
        ))]));
        return out;
    };
    // compare's headline rule: the most serious thing first, then the answer.
    for c in &compare.comparisons {
        for l in servebench_compare::headline::serious(c) {
            out.push(Block::Para(vec![strong(format!(
                "{} vs {}: {l}",
                c.candidate.variant, c.baseline.variant
            ))]));
        }
    }
    let (findings_points, other_points): (Vec<_>, Vec<_>) = compare
        .comparisons
        .iter()
        .partition(|c| servebench_compare::headline::verdicts_are_findings(c));
    let count = |cs: &[&servebench_compare::Comparison]| {
        servebench_compare::headline::verdict_counts(
            cs.iter().flat_map(|c| &c.metrics).flat_map(|m| &m.points),
        )
    };
    let mut counted = vec![
        t("From "),
        code("servebench compare"),
        t(format!(
            " at α = {} (intervals at {}): ",
            compare.alpha,
            pct(1.0 - compare.alpha)
        )),
    ];
    if !findings_points.is_empty() {
        counted.push(strong(count(&findings_points)));
    }
    if !other_points.is_empty() {
        if !findings_points.is_empty() {
            counted.push(t("; "));
        }
        counted.push(t(format!(
            "not counted as findings (not comparable or nothing compared): {}",
            match count(&other_points) {
                s if s.is_empty() => "no verdict".to_owned(),
                s => s,
            }
        )));
    }
    counted.push(t(
        ". A verdict is improved or regressed only when p < α and the whole interval \
           lies beyond ±θ, equivalent when it lies inside ±θ; likely improved or likely \
           regressed when p < α but the interval reaches inside ±θ (the direction is known, \
           the size is not). Markers like [3] point to the Flags below.",
    ));
    out.push(Block::Para(counted));
    let findings: Vec<&String> = findings_points.iter().flat_map(|c| &c.findings).collect();
    if !findings.is_empty() {
        out.push(Block::Para(vec![strong("Findings:")]));
        out.push(Block::List(
            findings
                .into_iter()
                .map(|f| vec![t(format!("{f}."))])
                .collect(),
        ));
    }
    for (ci, c) in compare.comparisons.iter().enumerate() {
        out.extend(comparison_blocks(report, ci, c));
    }
    out
}

/// The "Flags" section.
pub fn flag_blocks(report: &Report) -> Vec<Block> {
    let mut out = vec![Block::Heading(2, "Flags".into())];
    if report.compare.is_none() {
        out.push(Block::Para(vec![t("No comparison, so no flags.")]));
        return out;
    }
    if report.flags.is_empty() {
        out.push(Block::Para(vec![t("No flag was raised.")]));
        return out;
    }
    let rebase = report
        .flags
        .iter()
        .filter(|g| g.level == FlagLevel::ReBaseline)
        .count();
    out.push(Block::Para(vec![t(format!(
        "{} group(s) of flags: {rebase} re-baseline (the measurement cannot be trusted yet: \
         re-run) and {} look (sound numbers, a pattern worth a human look). Each number \
         matches the [n] markers in the tables and the red rings in the plots.",
        report.flags.len(),
        report.flags.len() - rebase
    ))]));
    let compare = report.compare.as_ref();
    for g in &report.flags {
        let pair = compare
            .and_then(|c| c.comparisons.get(g.comparison))
            .map(|c| format!(" — {} vs {}", c.candidate.variant, c.baseline.variant))
            .unwrap_or_default();
        let mut labels: Vec<&str> = Vec::new();
        for (l, _) in &g.points {
            if !labels.contains(&l.as_str()) {
                labels.push(l);
            }
        }
        let scope = match (&g.metric, labels.is_empty()) {
            (Some(m), false) => format!("{m} at {}{pair}", labels.join(", ")),
            (Some(m), true) => format!("{m}{pair}"),
            (None, _) => format!("the whole comparison{pair}"),
        };
        out.push(Block::Flag {
            number: g.number,
            level: g.level.as_str().to_owned(),
            id: g.id.as_str().to_owned(),
            scope,
            items: g
                .flags
                .iter()
                .map(|f| {
                    (
                        format!("{} — threatens {}", f.evidence, threatens_words(f)),
                        f.action.clone(),
                    )
                })
                .collect(),
        });
    }
    out
}
