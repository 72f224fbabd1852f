//! The report's summary of a one-variant run, as bench_serving prints one (throughputs and
//! the mean, p50 and p99 of TTFT, TPOT, ITL and E2E per sweep point, each the mean over
//! trials with its interval), and every arm's per-turn TTFT of multi-turn points. The same
//! figures as the end-of-run table (`servebench_result::table::overview`).

use servebench_result::table::overview::{
    self, LATENCIES, STATS, THROUGHPUTS, TurnRow, fmt_cell, fmt_num, summarize,
};

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
                THROUGHPUTS
                    .iter()
                    .zip(&p.throughput)
                    .map(|((_, words, unit), c)| {
                        format!("{}: {} {unit}", capital(words), fmt_cell(c.as_ref()))
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            ))]));
            let mut header = vec!["ms".to_owned()];
            header.extend(STATS.iter().map(|s| (*s).to_owned()));
            out.push(Block::Table {
                header,
                right: vec![false, true, true, true],
                rows: LATENCIES
                    .iter()
                    .zip(&p.latency)
                    .map(|((_, words), cells)| {
                        let mut row = vec![vec![t(*words)]];
                        row.extend(cells.iter().map(|c| vec![t(fmt_cell(c.as_ref()))]));
                        row
                    })
                    .collect(),
            });
            if !p.turns.is_empty() {
                out.push(Block::Para(vec![t(
                    "Per turn (mean over trials; later turns carry the conversation's history):",
                )]));
                out.push(turn_table(&p.turns));
            }
        }
        return out;
    }
    for arm in &report.arms {
        let result = report.result(arm);
        for p in &result.points {
            let rows = overview::turn_rows(result, &arm.variant, p.index);
            if rows.is_empty() {
                continue;
            }
            if out.is_empty() {
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

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
