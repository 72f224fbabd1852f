//! The history report's content, once, as a [`Document`]: what was read and skipped, per
//! spec and series why it starts, the baseline's state, the change points and outlier
//! runs, the trend plots and the runs.

use servebench_history::{History, Series, SpecHistory, render::levels, words};

use super::trend::trends;
use crate::doc::{Block, Document, Line, code, strong, t};
use crate::text::num;

fn intro(h: &History) -> Vec<Block> {
    let runs: usize = h
        .specs
        .iter()
        .flat_map(|s| &s.series)
        .map(|s| s.runs.len())
        .sum();
    let mut line: Line = vec![t("Made by "), code("servebench history"), t(" from ")];
    for (i, s) in h.sources.iter().enumerate() {
        if i > 0 {
            line.push(t(", "));
        }
        line.push(code(s.clone()));
    }
    line.push(t(format!(
        ": {runs} run(s) of {} spec(s); ages counted from {}. Every number below is in the \
         result files; the method is docs/history.md.",
        h.specs.len(),
        h.now
    )));
    let mut out = vec![Block::Para(line)];
    if !h.skipped.is_empty() {
        out.push(Block::Para(vec![t(format!(
            "{} file(s) skipped, each with why:",
            h.skipped.len()
        ))]));
        out.push(Block::List(
            h.skipped
                .iter()
                .map(|s| vec![code(s.file.clone()), t(format!(": {}", s.reason))])
                .collect(),
        ));
    }
    out
}

fn series_blocks(series: &Series) -> Vec<Block> {
    let span = match (series.runs.first(), series.runs.last()) {
        (Some(a), Some(b)) => format!("{} to {}", a.created_at, b.created_at),
        _ => String::new(),
    };
    let mut out = vec![Block::Heading(
        3,
        format!(
            "Series {}: {} run(s), {span}",
            series.number,
            series.runs.len()
        ),
    )];
    if let Some(b) = &series.starts {
        out.push(Block::Para(vec![
            t("Starts at run "),
            code(series.runs[0].run_id.clone()),
            t(": not comparable with the run before it ("),
            code(b.previous_run.clone()),
            t("); a new series begins and no change is judged across the break:"),
        ]));
        out.push(Block::List(
            b.differences
                .iter()
                .map(|d| {
                    vec![
                        code(d.field.clone()),
                        t(format!(": {} → {}", d.baseline, d.candidate)),
                    ]
                })
                .collect(),
        ));
    }
    if let Some(v) = &series.baseline_variant
        && !series.baseline.is_empty()
    {
        out.push(Block::Para(vec![t("Baseline "), code(v.clone()), t(":")]));
        out.push(Block::List(
            series
                .baseline
                .iter()
                .map(|b| vec![t(b.message.clone())])
                .collect(),
        ));
    }
    let mut rows = Vec::new();
    for c in &series.cells {
        let first = series.runs.first().map_or(1, |r| r.number);
        let lv: Vec<String> = levels(c, first)
            .iter()
            .map(|(a, b, m)| {
                if a == b {
                    format!("run {a}: {}", num(*m))
                } else {
                    format!("runs {a}–{b}: {}", num(*m))
                }
            })
            .collect();
        let mut findings: Vec<String> = c
            .change_points
            .iter()
            .map(|cp| words::change(c, cp))
            .collect();
        findings.extend(c.outliers.iter().map(|o| {
            format!(
                "outlier {}: {} from the runs around it",
                words::run(&o.run),
                words::outlier_shift(c.scale, o.shift, &c.unit)
            )
        }));
        rows.push(vec![
            vec![t(c.metric.clone())],
            vec![t(c.label.clone())],
            vec![code(c.variant.clone())],
            vec![t(lv.join("; "))],
            if findings.is_empty() {
                vec![t("—")]
            } else {
                let mut l = Vec::new();
                for (i, f) in findings.into_iter().enumerate() {
                    if i > 0 {
                        l.push(t(" · "));
                    }
                    l.push(if f.starts_with("step") {
                        strong(f)
                    } else {
                        t(f)
                    });
                }
                l
            },
        ]);
    }
    out.push(Block::Table {
        header: vec![
            "metric".into(),
            "point".into(),
            "variant".into(),
            format!("levels (run means; {})", "outlier runs left out"),
            "change points and outlier runs".into(),
        ],
        right: vec![false; 5],
        rows,
    });
    out
}

fn runs_table(spec: &SpecHistory) -> Block {
    let mut rows = Vec::new();
    let mut n = 0;
    for s in &spec.series {
        for r in &s.runs {
            n += 1;
            rows.push(vec![
                vec![t(n.to_string())],
                vec![code(r.run_id.clone())],
                vec![t(r.created_at.clone())],
                vec![t(s.number.to_string())],
                vec![t(r.status.clone())],
                vec![code(
                    r.commit
                        .as_deref()
                        .or(r.repo_sha.as_deref())
                        .map(|c| c.chars().take(12).collect::<String>())
                        .unwrap_or_else(|| "—".into()),
                )],
                vec![code(r.file.clone())],
            ]);
        }
    }
    Block::Table {
        header: [
            "run", "run id", "started", "series", "status", "commit", "file",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect(),
        right: vec![true, false, false, true, false, false, false],
        rows,
    }
}

fn spec_blocks(spec: &SpecHistory) -> Vec<Block> {
    let runs: usize = spec.series.iter().map(|s| s.runs.len()).sum();
    let mut intro = vec![t(format!(
        "{runs} run(s) in {} comparable series (a run whose fingerprint or spec hash differs \
         from the run before it starts a new one).",
        spec.series.len()
    ))];
    if let Some(r) = &spec.reference {
        intro.push(t(
            " A change is new when it was not confirmed when the history ended at run ",
        ));
        intro.push(code(r.clone()));
        intro.push(t("."));
    }
    let mut out = vec![
        Block::Heading(2, format!("Spec {}", spec.spec_name)),
        Block::Para(intro),
    ];
    for s in &spec.series {
        out.extend(series_blocks(s));
    }
    out.push(Block::Heading(3, format!("Trends of {}", spec.spec_name)));
    for tr in trends(spec) {
        out.push(Block::Figure {
            file: tr.file_name(),
            alt: format!("{} at {} across runs", tr.metric, tr.label),
            caption: vec![t(format!(
                "{} at {} across the runs of {}, oldest left. Faint dots are single trials; a \
                 marker with its bar is the run's mean (geometric) with its 95% interval. A \
                 solid vertical line is a confirmed step, in its variant's colour, before its \
                 first run; a dashed one an unconfirmed change at the newest run; a red ring \
                 an outlier run (off, and the series back to its level); a grey dashed line a \
                 fingerprint change (a new series).",
                tr.metric, tr.label, spec.spec_name
            ))],
        });
    }
    out.push(Block::Heading(3, format!("Runs of {}", spec.spec_name)));
    out.push(runs_table(spec));
    out
}

fn gate_blocks(h: &History) -> Vec<Block> {
    let Some(g) = &h.gate else {
        return Vec::new();
    };
    let mut out = vec![
        Block::Heading(2, format!("--fail-on {}", g.fail_on.join(","))),
        Block::Para(vec![strong(if g.tripped {
            format!("Tripped: {} confirmed new step(s).", g.confirmed.len())
        } else {
            "Passed: no confirmed new step.".into()
        })]),
    ];
    let mut items: Vec<Line> = g
        .confirmed
        .iter()
        .map(|l| vec![t(format!("confirmed: {l}"))])
        .collect();
    items.extend(
        g.unconfirmed
            .iter()
            .map(|l| vec![t(format!("unconfirmed (not failed on): {l}"))]),
    );
    if !items.is_empty() {
        out.push(Block::List(items));
    }
    out
}

/// The whole history report.
pub fn document(h: &History) -> Document {
    let mut blocks = intro(h);
    for spec in &h.specs {
        blocks.extend(spec_blocks(spec));
    }
    blocks.extend(gate_blocks(h));
    let names: Vec<&str> = h.specs.iter().map(|s| s.spec_name.as_str()).collect();
    Document {
        title: format!("servebench history: {}", names.join(", ")),
        blocks,
    }
}
