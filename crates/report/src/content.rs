//! The report's content, once, as a [`Document`]: what was run, the verdicts and flags of the
//! comparison, the plots with what to read in them, and the trials.

use servebench_result::TrialStatus;

use super::describe;
use super::doc::{Block, Document, Span, code, t};
use super::model::{Arm, Report};
use super::plots;
use super::summary;
use super::text::mean_ci;
use super::verdicts;

fn intro(report: &Report) -> Vec<Block> {
    let first = &report.sources[0].result;
    let mut out = Vec::new();
    if let Some(d) = &first.spec.metadata.description {
        out.push(Block::Para(vec![t(d.clone())]));
    }
    let arms = report
        .arms
        .iter()
        .map(|a| a.label.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let mut line = vec![
        t(format!("Arms: {arms}. Made by ")),
        code("servebench report"),
        t(" from "),
    ];
    for (i, s) in report.sources.iter().enumerate() {
        if i > 0 {
            line.push(t(" and "));
        }
        line.push(code(s.file.clone()));
    }
    line.push(t("; every number below is in the result file(s)."));
    out.push(Block::Para(line));
    out
}

fn figures(report: &Report) -> Vec<Block> {
    let mut out = vec![Block::Heading(2, "Plots".into())];
    for f in plots::figures(report) {
        out.push(Block::Figure {
            file: f.exporter.file_name(),
            alt: f.alt,
            caption: vec![t(f.caption)],
        });
    }
    out
}

/// Mean throughput per arm and point, the table a reader checks the plots against.
fn throughput_table(report: &Report) -> Block {
    metric_table(report, "output_throughput", "tok/s")
}

/// Mean `metric` (in `unit`) per arm and point, with its interval.
fn metric_table(report: &Report, metric: &str, unit: &str) -> Block {
    arm_table(
        report,
        |a| format!("{} ({unit})", a.label),
        |arm, point| {
            report
                .cell(arm, point, metric)
                .map(|c| mean_ci(c.mean, c.ci, c.n))
        },
    )
}

/// A row per sweep point (short label, in the arms' order of first appearance) and a column
/// per arm headed `header`: `cell(arm, point index)`, or "—".
fn arm_table(
    report: &Report,
    header: impl Fn(&Arm) -> String,
    cell: impl Fn(&Arm, usize) -> Option<String>,
) -> Block {
    let mut head = vec!["sweep point".to_owned()];
    head.extend(report.arms.iter().map(header));
    let mut labels: Vec<String> = Vec::new();
    for arm in &report.arms {
        for p in report.points(arm) {
            if !labels.contains(&p.short) {
                labels.push(p.short);
            }
        }
    }
    let rows = labels
        .iter()
        .map(|label| {
            let mut row = vec![vec![t(label.clone())]];
            for arm in &report.arms {
                let value = report
                    .points(arm)
                    .into_iter()
                    .find(|p| p.short == *label)
                    .and_then(|p| cell(arm, p.index));
                row.push(vec![t(value.unwrap_or_else(|| "—".into()))]);
            }
            row
        })
        .collect();
    let right = (0..=report.arms.len()).map(|i| i > 0).collect();
    Block::Table {
        header: head,
        right,
        rows,
    }
}

fn trials(report: &Report) -> Vec<Block> {
    let mut out = vec![
        Block::Heading(2, "Trials".into()),
        Block::Para(vec![t(
            "Output throughput, mean across trials [95% CI] (geometric mean, t interval on \
             logs; no interval below 3 trials):",
        )]),
        throughput_table(report),
    ];
    let cache = "cache_hit_ratio";
    let has_cache = report.arms.iter().any(|arm| {
        report
            .points(arm)
            .into_iter()
            .any(|p| report.cell(arm, p.index, cache).is_some())
    });
    if has_cache {
        out.push(Block::Para(vec![t(
            "Prefix-cache hit ratio (prompt tokens the server reported taken from its cache \
             over all prompt tokens), mean across trials [95% CI]:",
        )]));
        out.push(metric_table(report, cache, "fraction"));
    }
    if let Some(table) = batched_table(report) {
        out.push(Block::Para(vec![t(
            "Token events that arrived in one read with another event of the same request \
             (their ITL gap is 0 ms, so ITL percentiles at or below this share read 0 ms; \
             docs/metrics.md, \"ITL and batched events\"), mean over trials:",
        )]));
        out.push(table);
    }
    let mut failed = Vec::new();
    for arm in &report.arms {
        let r = report.result(arm);
        for tr in r
            .trials
            .iter()
            .filter(|x| x.variant == arm.variant && x.status == TrialStatus::Failed)
        {
            let point = r
                .points
                .get(tr.point)
                .map_or_else(|| tr.point.to_string(), |p| p.label.clone());
            failed.push(vec![t(format!(
                "{} trial {} at {point}: {}",
                arm.variant,
                tr.trial,
                tr.failure.as_deref().unwrap_or("no reason recorded")
            ))]);
        }
    }
    if failed.is_empty() {
        out.push(Block::Para(vec![t("No trial failed.")]));
    } else {
        out.push(Block::Para(vec![t(format!(
            "{} trial(s) failed and are left out of every statistic:",
            failed.len()
        ))]));
        out.push(Block::List(failed));
    }
    out.push(Block::Para(vec![
        t("Every trial with its main metrics: "),
        Span::Link {
            text: "trials.csv".into(),
            href: "trials.csv".into(),
        },
        t(" (one row per trial and sweep point, for spreadsheets and pandas)."),
    ]));
    out
}

/// The share of batched token events per arm and point (mean over ok trials), when it is
/// [`BATCHED_SHOWN`] or more somewhere (below that no ITL percentile a report reads is
/// touched); results written before the share existed have none.
fn batched_table(report: &Report) -> Option<Block> {
    let share = |arm: &Arm, point: usize| report.result(arm).batched_share(&arm.variant, point);
    let shown = report.arms.iter().any(|arm| {
        report
            .points(arm)
            .iter()
            .any(|p| share(arm, p.index).is_some_and(|m| m >= BATCHED_SHOWN))
    });
    shown.then(|| {
        arm_table(
            report,
            |a| a.label.clone(),
            |arm, point| share(arm, point).map(|m| format!("{:.1}%", 100.0 * m)),
        )
    })
}

/// The share of batched token events from which the report shows them.
const BATCHED_SHOWN: f64 = 0.01;

/// Mean over `arm`'s ok trials at `point` of what `f` reads from a trial's summary.
fn trial_mean(
    report: &Report,
    arm: &Arm,
    point: usize,
    f: impl Fn(&servebench_result::metrics::TrialSummary) -> Option<f64>,
) -> Option<f64> {
    let v: Vec<f64> = report
        .result(arm)
        .trials
        .iter()
        .filter(|t| t.variant == arm.variant && t.point == point && t.status == TrialStatus::Ok)
        .filter_map(|t| f(t.summary.as_ref()?))
        .filter(|v| v.is_finite())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// What the GPUs and the engine did (`spec.telemetry`) and how close each point came to the
/// memory-bound decode ceiling (`spec.model_facts`), when the run recorded them.
fn telemetry(report: &Report) -> Vec<Block> {
    let any = |f: &dyn Fn(&servebench_result::metrics::TrialSummary) -> bool| {
        report.sources.iter().any(|s| {
            s.result
                .trials
                .iter()
                .filter_map(|t| t.summary.as_ref())
                .any(f)
        })
    };
    let has_telemetry = any(&|s| s.telemetry.is_some());
    let has_ceiling = any(&|s| s.decode_ceiling.is_some());
    if !has_telemetry && !has_ceiling {
        return Vec::new();
    }
    let mut out = vec![Block::Heading(
        2,
        "The GPUs, the engine and the physical limit".into(),
    )];
    if has_ceiling {
        out.push(Block::Para(vec![t(
            "Output throughput as a share of the memory-bound decode ceiling (every step reads              the weights one token passes through and each sequence's KV cache at the GPUs'              peak bandwidth; docs/gpu.md, \"The physical limit\"), mean over trials, with the              ceiling in tok/s:",
        )]));
        out.push(arm_table(
            report,
            |a| format!("{} (efficiency)", a.label),
            |arm, point| {
                let share = trial_mean(report, arm, point, |s| {
                    s.decode_ceiling.as_ref().map(|c| c.share)
                })?;
                let ceiling = trial_mean(report, arm, point, |s| {
                    s.decode_ceiling.as_ref().map(|c| c.tok_per_s)
                })?;
                Some(format!("{:.1}% of {ceiling:.0}", 100.0 * share))
            },
        ));
    }
    if has_telemetry {
        out.push(Block::Para(vec![t(
            "Energy per output token (the server's GPUs over the trial's window: NVML's \
             energy counter, else the power samples integrated), mean across trials [95% CI]:",
        )]));
        out.push(metric_table(report, "joules_per_output_token", "J/tok"));
        out.push(Block::Para(vec![t(
            "Per arm and point, means over trials: GPU power (all the server's GPUs), SM \
             clock, share of GPU samples throttled (power or thermal limit), and the engine's \
             running / waiting requests:",
        )]));
        out.push(arm_table(
            report,
            |a| a.label.clone(),
            |arm, point| {
                let tel =
                    |f: fn(&servebench_result::telemetry::TelemetrySummary) -> Option<f64>| {
                        trial_mean(report, arm, point, |s| s.telemetry.as_ref().and_then(f))
                    };
                let show = |v: Option<f64>, fmt: &dyn Fn(f64) -> String| {
                    v.map_or_else(|| "—".to_owned(), fmt)
                };
                let power = show(tel(|t| t.gpu.power_w.map(|p| p.mean)), &|v| {
                    format!("{v:.0} W")
                });
                let clock = show(tel(|t| t.gpu.sm_clock_mhz.map(|p| p.mean)), &|v| {
                    format!("{v:.0} MHz")
                });
                let thr = show(tel(|t| t.gpu.throttled_share), &|v| {
                    format!("{:.0}% throttled", 100.0 * v)
                });
                let run = show(tel(|t| t.server.as_ref()?.running.map(|s| s.mean)), &|v| {
                    format!("{v:.1}")
                });
                let wait = show(tel(|t| t.server.as_ref()?.waiting.map(|s| s.mean)), &|v| {
                    format!("{v:.1}")
                });
                Some(format!("{power}, {clock}, {thr}; engine {run} / {wait}"))
            },
        ));
        let sources: Vec<String> = report
            .sources
            .iter()
            .flat_map(|s| {
                s.result
                    .trials
                    .iter()
                    .filter_map(|t| t.summary.as_ref()?.telemetry.as_ref())
            })
            .map(|t| match &t.gpu.note {
                Some(n) if t.gpu.source == "none" => format!("no GPU sampled ({n})"),
                _ => format!("GPU samples from {}", t.gpu.source),
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        out.push(Block::Para(vec![t(format!("{}.", sources.join("; ")))]));
    }
    out
}

/// The whole report.
pub fn document(report: &Report) -> Document {
    let first = &report.sources[0].result;
    let mut blocks = intro(report);
    blocks.extend(describe::blocks(report));
    blocks.extend(summary::blocks(report));
    blocks.extend(verdicts::verdict_blocks(report));
    blocks.extend(super::equivalence::blocks(report));
    blocks.extend(super::kernels::blocks(report));
    blocks.extend(figures(report));
    blocks.extend(verdicts::flag_blocks(report));
    blocks.extend(trials(report));
    blocks.extend(telemetry(report));
    Document {
        title: format!("servebench report: {}", first.spec_name),
        blocks,
    }
}
