//! The report's output-equivalence section (`spec.equivalence`, docs/equivalence.md): per
//! comparison the verdict, the shares of identical outputs (the candidate's against the
//! baseline's, and the baseline's own across its starts), the test, and where outputs first
//! differ; with reference answers, each arm's task accuracy and McNemar's test. A
//! comparison with nothing judged (no prompt answered by two baseline starts and one
//! candidate start) shows no shares: `not judged` and dashes.

use super::doc::{Block, t};
use servebench_compare::Comparison;
use servebench_compare::equivalence::EquivalenceReport;

use super::model::Report;

fn positions(p: &[usize]) -> String {
    if p.is_empty() {
        return "none".into();
    }
    let median = p[p.len() / 2];
    format!(
        "{} (min {}, median {median}, max {})",
        p.len(),
        p[0],
        p[p.len() - 1]
    )
}

/// The section, when some comparison has an `equivalence` object.
pub(crate) fn blocks(report: &Report) -> Vec<Block> {
    let Some(cmp) = &report.compare else {
        return Vec::new();
    };
    let rows: Vec<_> = cmp
        .comparisons
        .iter()
        .filter_map(|c| c.equivalence.as_ref().map(|e| (c, e)))
        .collect();
    if rows.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Block::Heading(2, "Output equivalence".into()),
        Block::Para(vec![t(
            "The same prompts, sent greedily after each server start's warm-up: is the \
             candidate's output the baseline's, beyond how much the baseline's own outputs \
             vary across its server starts? (docs/equivalence.md)",
        )]),
    ];
    let header = [
        "candidate vs baseline",
        "verdict",
        "prompts",
        "identical",
        "baseline's own",
        "difference [CI]",
        "p",
        "first divergence: candidate",
        "baseline's own",
    ];
    let body = rows
        .iter()
        .map(|(c, e)| {
            let judged = e.prompts > 0;
            let share = |x: f64| {
                if judged {
                    format!("{:.0}%", 100.0 * x)
                } else {
                    "—".to_owned()
                }
            };
            vec![
                vec![t(format!(
                    "{} vs {}",
                    c.candidate.variant, c.baseline.variant
                ))],
                vec![t(if judged {
                    format!("outputs {}", e.verdict)
                } else {
                    format!(
                        "not judged ({} and {} starts probed)",
                        e.baseline_starts, e.candidate_starts
                    )
                })],
                vec![t(format!(
                    "{} by {}, c={}",
                    e.prompts, e.compared_by, e.concurrency
                ))],
                vec![t(share(e.identical))],
                vec![t(share(e.baseline_identical))],
                vec![t(if judged {
                    format!(
                        "{:+.3} [{:.3}, {:.3}]",
                        e.test.difference.point,
                        e.test.difference.ci.lower,
                        e.test.difference.ci.upper
                    )
                } else {
                    "—".to_owned()
                })],
                vec![t(if judged {
                    format!("{:.3}", e.test.p)
                } else {
                    "—".to_owned()
                })],
                vec![t(positions(&e.first_divergence_candidate))],
                vec![t(positions(&e.first_divergence_baseline))],
            ]
        })
        .collect();
    out.push(Block::Table {
        header: header.iter().map(|s| (*s).to_owned()).collect(),
        right: vec![false, false, false, true, true, true, true, false, false],
        rows: body,
    });
    for f in crate::plots::divergence_figures(report) {
        out.push(Block::Figure {
            file: f.exporter.file_name(),
            alt: f.alt,
            caption: vec![t(f.caption)],
        });
    }
    out.extend(accuracy(&rows));
    let mut notes = Vec::new();
    for (c, e) in &rows {
        if let Some(b) = &e.batch {
            notes.push(vec![t(format!(
                "{} vs {}: at concurrency {} the outputs are those at {} for {:.0}% of the \
                 baseline's prompts and {:.0}% of the candidate's; verdict there {}",
                c.candidate.variant,
                c.baseline.variant,
                b.concurrency,
                e.concurrency,
                100.0 * b.baseline_invariant,
                100.0 * b.candidate_invariant,
                b.verdict.as_deref().unwrap_or("not judged")
            ))]);
        }
        if let Some(k) = &e.collapsed {
            notes.push(vec![t(format!(
                "{} vs {}: {}",
                c.candidate.variant,
                c.baseline.variant,
                k.sentence(&c.baseline.variant)
            ))]);
        }
        if let Some(a) = &e.advice {
            notes.push(vec![t(format!(
                "{} vs {}: {a}",
                c.candidate.variant, c.baseline.variant
            ))]);
        }
    }
    if !notes.is_empty() {
        out.push(Block::List(notes));
    }
    out
}

/// The task-accuracy table, when some comparison scored reference answers.
fn accuracy(rows: &[(&Comparison, &EquivalenceReport)]) -> Vec<Block> {
    let scored: Vec<_> = rows
        .iter()
        .filter_map(|(c, e)| e.accuracy.as_ref().map(|a| (c, a)))
        .collect();
    let Some((_, first)) = scored.first() else {
        return Vec::new();
    };
    let header = [
        "candidate vs baseline",
        "accuracy",
        "prompts",
        "baseline",
        "candidate",
        "difference [CI]",
        "McNemar p",
        "only baseline / only candidate right",
    ];
    let body = scored
        .iter()
        .map(|(c, a)| {
            vec![
                vec![t(format!(
                    "{} vs {}",
                    c.candidate.variant, c.baseline.variant
                ))],
                vec![t(a.verdict.clone())],
                vec![t(a.prompts.to_string())],
                vec![t(format!("{:.1}%", 100.0 * a.baseline))],
                vec![t(format!("{:.1}%", 100.0 * a.candidate))],
                vec![t(format!(
                    "{:+.1} [{:+.1}, {:+.1}] points",
                    100.0 * a.difference.point,
                    100.0 * a.difference.ci.lower,
                    100.0 * a.difference.ci.upper
                ))],
                vec![t(format!("{:.3}", a.p_value))],
                vec![t(format!("{} / {}", a.baseline_only, a.candidate_only))],
            ]
        })
        .collect();
    vec![
        Block::Para(vec![t(format!(
            "Task accuracy on the reference answers: each arm's starts pooled per prompt by \
             {}; McNemar's exact test on the prompts only one arm got right, Newcombe's \
             paired interval on the difference; unchanged needs it within ±{:.0} points.",
            first.pooling,
            100.0 * first.margin
        ))]),
        Block::Table {
            header: header.iter().map(|s| (*s).to_owned()).collect(),
            right: vec![false, false, true, true, true, true, true, true],
            rows: body,
        },
    ]
}
