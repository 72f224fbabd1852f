//! The report's kernel section (`evidence.kernels`, docs/kernels.md): per comparison, each
//! arm's time per output token by category side by side with the change, the one line on
//! how much of TPOT is kernel time, and each arm's top kernels.

use servebench_compare::kernels::{KernelsReport, change_words, tpot_words};

use super::doc::{Block, t};
use super::model::Report;

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_owned(), |x| format!("{x:.3}"))
}

/// The section, when some comparison has kernel evidence on both arms.
pub(crate) fn blocks(report: &Report) -> Vec<Block> {
    let Some(cmp) = &report.compare else {
        return Vec::new();
    };
    let rows: Vec<&KernelsReport> = cmp
        .comparisons
        .iter()
        .filter_map(|c| c.kernels.as_ref())
        .collect();
    if rows.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Block::Heading(2, "Where the time goes (kernels)".into()),
        Block::Para(vec![t(
            "The engine's profiler around a short probe load after each server start's \
             warm-up, before its trials: the kernels' busy time (the union of their \
             intervals per device; on a CPU, the operators') per output token, by category \
             (docs/kernels.md).",
        )]),
    ];
    for r in rows {
        let (b, c) = (&r.baseline, &r.candidate);
        out.push(Block::Heading(
            3,
            format!("`{}` against `{}`", c.variant, b.variant),
        ));
        let mut body: Vec<Vec<super::doc::Line>> = r
            .categories
            .iter()
            .map(|ch| {
                vec![
                    vec![t(ch.category.label())],
                    vec![t(format!("{:.3}", ch.baseline_ms))],
                    vec![t(format!("{:.3}", ch.candidate_ms))],
                    vec![t(ch.change.map_or_else(
                        || "new".to_owned(),
                        |x| format!("{:+.0}%", x * 100.0),
                    ))],
                ]
            })
            .collect();
        body.push(vec![
            vec![t("busy (union)")],
            vec![t(ms(b.busy_per_token_ms))],
            vec![t(ms(c.busy_per_token_ms))],
            vec![t(match (b.busy_per_token_ms, c.busy_per_token_ms) {
                (Some(x), Some(y)) if x > 0.0 => format!("{:+.0}%", (y / x - 1.0) * 100.0),
                _ => "—".to_owned(),
            })],
        ]);
        out.push(Block::Table {
            header: vec![
                "ms per output token".into(),
                b.variant.clone(),
                c.variant.clone(),
                "change".into(),
            ],
            right: vec![false, true, true, true],
            rows: body,
        });
        out.push(Block::Para(vec![t(format!(
            "Change: {}.",
            change_words(r)
        ))]));
        out.push(Block::List(vec![
            vec![t(tpot_words(b))],
            vec![t(tpot_words(c))],
        ]));
        for a in [b, c] {
            out.push(Block::Para(vec![t(format!(
                "Top kernels of `{}` (first start, first rank):",
                a.variant
            ))]));
            out.push(Block::Table {
                header: vec!["share".into(), "calls".into(), "name".into()],
                right: vec![true, true, false],
                rows: a
                    .top
                    .iter()
                    .map(|(name, share, calls)| {
                        vec![
                            vec![t(format!("{:.1}%", share * 100.0))],
                            vec![t(calls.to_string())],
                            vec![t(name.chars().take(160).collect::<String>())],
                        ]
                    })
                    .collect(),
            });
        }
    }
    out
}
