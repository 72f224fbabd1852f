//! The report's summary of a one-variant run, as bench_serving prints one (throughputs and
//! the mean, p50 and p99 of TTFT, TPOT, ITL and E2E per sweep point, each the mean over
//! trials with its interval, and where a request reasoned its times to first reasoning and
//! answer token and its reasoning and answer tokens), and every arm's per-turn TTFT of
//! multi-turn points. The same
//! figures as the end-of-run table (`servebench_result::table::overview`).

use servebench_result::table::overview::{
    self, LATENCIES, REASONING, TurnRow, fmt_cell, fmt_num, summarize,
};

use servebench_result::table::CellStat;

use super::doc::{Block, t};
use super::model::Report;

fn turn_table(turns: &[TurnRow]) -> Block {
    let f = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), fmt_num);
    Block::Table {
        header: vec![
            "turn".into(),
            "requests".into(),
            "TTFT mean (ms)".into(),
            "TTFT p50 (ms)".into(),
            "prompt tokens".into(),
        ],
        right: vec![true; 5],
        rows: turns
            .iter()
            .map(|r| {
                vec![
                    vec![t((r.turn + 1).to_string())],
                    vec![t(r.requests.to_string())],
                    vec![t(f(r.ttft_mean))],
                    vec![t(f(r.ttft_p50))],
                    vec![t(f(r.prompt_tokens))],
                ]
            })
            .collect(),
    }
}

/// The summary section (one arm), or the per-turn tables (several arms); nothing when
/// neither applies.
pub fn blocks(report: &Report) -> Vec<Block> {
    let mut out = Vec::new();
    if let [arm] = report.arms.as_slice() {
        let result = report.result(arm);
        out.push(Block::Heading(2, "Summary".into()));
        out.push(Block::Para(vec![t(format!(
            "{} per sweep point: each figure is the mean over its trials with the 95% \
             interval in brackets (none below 3 trials).",
            arm.label
        ))]));
        for p in summarize(result, &arm.variant) {
            out.push(Block::Heading(3, p.label.clone()));
            out.push(Block::Para(vec![t(format!(
                "{} trial(s), {} requests{}. {}",
                p.trials,
                p.requests,
                if p.failed > 0 {
                    format!(", {} failed", p.failed)
                } else {
                    String::new()
                },
                p.rates
                    .iter()
                    .map(|r| format!(
                        "{}: {} {}",
                        capital(r.words),
                        fmt_cell(r.cell.as_ref()),
                        r.unit
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ))]));
            let unit = if p.reasoning.is_empty() {
                "ms"
            } else {
                "ms (tok where marked)"
            };
            let rows = LATENCIES
                .iter()
                .zip(&p.latency)
                .chain(REASONING.iter().zip(&p.reasoning));
            out.push(stat_table(unit, &p.columns, rows));
            for n in &p.notes {
                out.push(Block::Para(vec![t(format!("Note: {n}."))]));
            }
            if !p.turns.is_empty() {
                out.push(Block::Para(vec![t(
                    "Per turn (mean over trials; later turns carry the conversation's history):",
                )]));
                out.push(turn_table(&p.turns));
            }
        }
        return out;
    }
    reasoning_blocks(report, &mut out);
    let mut turns_heading = false;
    for arm in &report.arms {
        let result = report.result(arm);
        for p in &result.points {
            let rows = overview::turn_rows(result, &arm.variant, p.index);
            if rows.is_empty() {
                continue;
            }
            if !turns_heading {
                turns_heading = true;
                out.push(Block::Heading(2, "Per turn".into()));
            }
            out.push(Block::Para(vec![t(format!(
                "{} at {}: TTFT per turn (mean over trials; later turns carry the history):",
                arm.label, p.label
            ))]));
            out.push(turn_table(&rows));
        }
    }
    out
}

type StatRow<'a> = (&'a (&'a str, &'a str), &'a Vec<Option<CellStat>>);

/// A table of one row per family and one column per statistic (`columns`), the first
/// column headed `unit`.
fn stat_table<'a>(
    unit: &str,
    columns: &[String],
    rows: impl Iterator<Item = StatRow<'a>>,
) -> Block {
    let mut header = vec![unit.to_owned()];
    header.extend(columns.iter().cloned());
    let mut right = vec![true; header.len()];
    right[0] = false;
    Block::Table {
        header,
        right,
        rows: rows
            .map(|((_, words), cells)| {
                let mut row = vec![vec![t(*words)]];
                row.extend(cells.iter().map(|c| vec![t(fmt_cell(c.as_ref()))]));
                row
            })
            .collect(),
    }
}

/// Several arms: per arm and point where a request reasoned, its times to first reasoning
/// and answer token and its token split (nothing for runs that never reasoned).
fn reasoning_blocks(report: &Report, out: &mut Vec<Block>) {
    let mut first = true;
    for arm in &report.arms {
        let result = report.result(arm);
        for p in summarize(result, &arm.variant) {
            if p.reasoning.is_empty() {
                continue;
            }
            if first {
                first = false;
                out.push(Block::Heading(2, "Reasoning".into()));
                out.push(Block::Para(vec![t(
                    "Times to the first reasoning and the first answer token, and the output \
                     split into reasoning and answer tokens (docs/metrics.md, \"Reasoning and \
                     answer\"); each figure the mean over trials with its 95% interval.",
                )]));
            }
            out.push(Block::Para(vec![t(format!(
                "{} at {}:",
                arm.label, p.label
            ))]));
            out.push(stat_table(
                "",
                &p.columns,
                REASONING.iter().zip(&p.reasoning),
            ));
        }
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
