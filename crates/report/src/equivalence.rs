//! The report's output-equivalence section (`spec.equivalence`, docs/equivalence.md): per
//! comparison the verdict, the shares of identical outputs (the candidate's against the
//! baseline's, and the baseline's own across its starts), the test, and where outputs first
//! differ.

use super::doc::{Block, t};
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
            vec![
                vec![t(format!(
                    "{} vs {}",
                    c.candidate.variant, c.baseline.variant
                ))],
                vec![t(format!("outputs {}", e.verdict))],
                vec![t(format!(
                    "{} by {}, c={}",
                    e.prompts, e.compared_by, e.concurrency
                ))],
                vec![t(format!("{:.0}%", 100.0 * e.identical))],
                vec![t(format!("{:.0}%", 100.0 * e.baseline_identical))],
                vec![t(format!(
                    "{:+.3} [{:.3}, {:.3}]",
                    e.test.difference.point, e.test.difference.ci.lower, e.test.difference.ci.upper
                ))],
                vec![t(format!("{:.3}", e.test.p))],
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
