//! The SVG plots, one exporter per file: [`throughput`], [`latency`] (TTFT, TPOT), [`cdf`],
//! all drawn on the shared [`canvas`] and [`axis`] with the sweep layout of [`sweep`].

pub mod axis;
pub mod canvas;
pub mod cdf;
pub mod divergence;
pub mod latency;
pub mod ratio;
pub mod sweep;
pub mod throughput;
pub mod timeline;

use servebench_spec::metrics::min_requests_for_quantile;

use super::Exporter;
use super::model::Report;

/// A plot and the words that go with it in the report.
pub struct Figure {
    /// Draws the SVG.
    pub exporter: Box<dyn Exporter>,
    /// Short alternative text.
    pub alt: String,
    /// What to read in it.
    pub caption: String,
}

impl std::fmt::Debug for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Figure")
            .field("file", &self.exporter.file_name())
            .field("alt", &self.alt)
            .finish()
    }
}

const MEANS: &str = "Faint dots are single trials; a marker with its bar is the mean across \
                     trials (geometric) with its 95% confidence interval.";

fn requests_per_trial(report: &Report) -> Option<u32> {
    report
        .sources
        .iter()
        .flat_map(|s| {
            servebench_spec::plan::sweep_points(&s.result.spec)
                .into_iter()
                .filter_map(|p| p.requests)
        })
        .min()
}

fn flag_note(report: &Report) -> &'static str {
    if report.marks.is_empty() {
        ""
    } else {
        " A red ring with [n] marks a point that flag n (under Flags) concerns."
    }
}

fn p99_note(report: &Report) -> String {
    let need = min_requests_for_quantile(0.99, 0.99);
    match requests_per_trial(report) {
        Some(n) if u64::from(n) < need => format!(
            " With {n} requests per trial a trial's p99 is close to its maximum (a reportable \
             p99 needs {need}): read the dashed line as a tail indicator, not a p99."
        ),
        _ => String::new(),
    }
}

/// Every plot written beside the report: [`figures`] (the Plots section) and those that
/// sections place themselves ([`divergence`] in the output-equivalence section).
pub fn all(report: &Report) -> Vec<Figure> {
    let mut out = figures(report);
    out.extend(divergence_figures(report));
    out
}

/// The first-divergence plot of each comparison whose outputs were judged.
pub fn divergence_figures(report: &Report) -> Vec<Figure> {
    let Some(c) = &report.compare else {
        return Vec::new();
    };
    c.comparisons
        .iter()
        .enumerate()
        .filter(|(_, x)| x.equivalence.as_ref().is_some_and(divergence::wanted))
        .map(|(ci, x)| Figure {
            exporter: Box::new(divergence::FirstDivergence {
                comparison: ci,
                candidate: x.candidate.variant.clone(),
            }),
            alt: format!(
                "first positions where the probe outputs of {} and of the baseline {}'s own \
                 starts differ from the baseline's first start",
                x.candidate.variant, x.baseline.variant
            ),
            caption: format!(
                "Where outputs first differ from the baseline {}'s first server start: each \
                 output of another start that differs is a dot at its first differing \
                 position; dots at one position are drawn as one, its size and the number \
                 above it the count. The baseline row (its other starts against its first) \
                 is how much the engine varies by itself; a candidate row far busier than it \
                 is a change.",
                x.baseline.variant
            ),
        })
        .collect()
}

/// Every plot of the Plots section, in reading order.
pub fn figures(report: &Report) -> Vec<Figure> {
    let latency = |family: &'static str, name: &'static str, what: &str| Figure {
        exporter: Box::new(latency::Latency { family, name }),
        alt: format!("{name} p50 and p99 against the sweep"),
        caption: format!(
            "{what}: each trial's median (p50, solid) and 99th percentile (p99, dashed). \
             {MEANS}{}{}",
            p99_note(report),
            flag_note(report)
        ),
    };
    let mut out = vec![Figure {
        exporter: Box::new(throughput::Throughput),
        alt: "output throughput against the sweep".into(),
        caption: format!(
            "Output tokens per second over each trial (first send to last response). \
                 {MEANS}{}",
            flag_note(report)
        ),
    }];
    if let Some(c) = &report.compare {
        for (ci, comparison) in c.comparisons.iter().enumerate() {
            let theta: Vec<String> = comparison
                .metrics
                .iter()
                .map(|m| {
                    format!(
                        "{} {}",
                        m.metric,
                        servebench_compare::text::pct(m.threshold)
                    )
                })
                .collect();
            out.push(Figure {
                exporter: Box::new(ratio::Ratio {
                    comparison: ci,
                    candidate: comparison.candidate.variant.clone(),
                }),
                alt: format!(
                    "{} against {} per metric across the sweep",
                    comparison.candidate.variant, comparison.baseline.variant
                ),
                caption: format!(
                    "{} against {} at each sweep point, from servebench compare: the ratio of \
                     geometric means (for metrics that can be 0, the difference of means) with \
                     its 95% Welch interval. The grey band is ±θ ({}): inside it a change is \
                     too small to matter. Green: improved, purple: regressed (p < α and the \
                     whole interval beyond θ), grey: any other verdict.{}",
                    comparison.candidate.variant,
                    comparison.baseline.variant,
                    theta.join(", "),
                    flag_note(report)
                ),
            });
        }
    }
    out.extend([
        latency("ttft", "TTFT", "Time to first token"),
        latency("tpot", "TPOT", "Time per output token after the first"),
        Figure {
            exporter: Box::new(cdf::Cdf),
            alt: format!("latency CDFs at {}", report.cdf_point),
            caption: format!(
                "Share of requests at or below each latency at {}, from the HDR histograms of \
                 all ok trials of each arm merged (≤ 0.1% relative error). Merging pools \
                 requests across trials: read the shapes here, the intervals in the plots \
                 above. Choose the point with --cdf-point.",
                report.cdf_point
            ),
        },
    ]);
    out.extend(timelines(report));
    out
}

/// One telemetry timeline per trial that recorded telemetry, arm by arm in run order.
fn timelines(report: &Report) -> Vec<Figure> {
    let mut out = Vec::new();
    let shared: Vec<std::rc::Rc<std::cell::OnceCell<timeline::SourceData>>> = report
        .sources
        .iter()
        .map(|_| std::rc::Rc::default())
        .collect();
    for arm in &report.arms {
        let result = report.result(arm);
        let Some(data) = shared.get(arm.source).cloned() else {
            continue;
        };
        let mut trials: Vec<_> = result
            .trials
            .iter()
            .filter(|t| t.variant == arm.variant)
            .filter(|t| t.summary.as_ref().is_some_and(|s| s.telemetry.is_some()))
            .collect();
        trials.sort_by_key(|t| (t.point, t.trial, t.repeat));
        for t in trials {
            let point = report
                .points(arm)
                .into_iter()
                .find(|p| p.index == t.point)
                .map_or_else(|| t.point.to_string(), |p| p.short);
            // Repeats within one start (`trials.per_start`) share the trial number: each has
            // its own figure and file.
            let (repeat, r) = if t.repeat > 1 {
                (format!(" repeat {}", t.repeat), format!("-r{}", t.repeat))
            } else {
                (String::new(), String::new())
            };
            let title = format!("{} trial {}{repeat} at {point}", arm.variant, t.trial);
            out.push(Figure {
                exporter: Box::new(timeline::Timeline {
                    seq: t.seq,
                    name: format!(
                        "telemetry-{}-t{}{r}-p{}.svg",
                        arm.variant, t.trial, t.point
                    ),
                    title: title.clone(),
                    data: data.clone(),
                    file: report.sources[arm.source].file.clone(),
                }),
                alt: format!("{title}: GPU clocks and power, the engine's queue, over time"),
                caption: format!(
                    "{title}, over time (telemetry): the SM clock and the power of each of the                      server's GPUs, and the requests the engine ran and held waiting beside                      the requests the client had in flight. Where the engine's running count                      stays below the client's in flight, the engine queued the rest                      (server-queued)."
                ),
            });
        }
    }
    out
}
