//! Findings in words: crossovers ("the candidate is faster at c ≤ 4 and slower at c ≥ 16"),
//! the advice for undecided cells and the verdicts a flag threatens (numbers and percentages
//! are [`super::text`]'s).

use servebench_stats::Direction;
use servebench_stats::advice::{PRACTICAL_TRIALS, Settle};
use servebench_stats::flags::{Flag, Side, Threatens};
use servebench_stats::verdict::Scale;

use super::report::{MetricReport, Region};
use super::text::{num, pct, signed_pct};

/// "faster"/"slower" for throughputs and latencies, "better"/"worse" otherwise.
fn side_word(metric: &str, side: Side) -> &'static str {
    let speed = metric.contains("throughput")
        || ["ttft", "ttfr", "ttfa", "tpot", "itl", "e2e", "queue_time"]
            .iter()
            .any(|f| metric.starts_with(f));
    match (speed, side) {
        (true, Side::Better) => "faster",
        (true, Side::Worse) => "slower",
        (false, Side::Better) => "better",
        (false, Side::Worse) => "worse",
    }
}

/// Where a region lies on the axis: `at c=4`, `at c ≤ 4`, `at c ≥ 16`, `at c from 4 to 16`.
fn place(r: &Region, axis: &str, lowest: Option<&str>, highest: Option<&str>) -> String {
    let starts_low = lowest == Some(r.from.as_str());
    let ends_high = highest == Some(r.to.as_str());
    if r.from == r.to {
        format!("at {axis}={}", r.from)
    } else if starts_low && !ends_high {
        format!("at {axis} ≤ {}", r.to)
    } else if ends_high && !starts_low {
        format!("at {axis} ≥ {}", r.from)
    } else {
        format!("at {axis} from {} to {}", r.from, r.to)
    }
}

/// One sentence for a sweep whose delta changes sign, e.g. "the candidate is faster at
/// c ≤ 4 and slower at c ≥ 16 (output_throughput, higher is better)". `lowest`/`highest`
/// are the sweep's first and last axis values; points whose difference is not significant
/// belong to no region.
pub(crate) fn describe_regions(
    regions: &[Region],
    axis: &str,
    lowest: Option<&str>,
    highest: Option<&str>,
    metric: &str,
    direction: Direction,
    group: &str,
) -> String {
    let joined = region_phrase(regions, axis, lowest, highest, metric);
    let dir = match direction {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    };
    let group = if group.is_empty() {
        String::new()
    } else {
        format!(", {group}")
    };
    format!("the candidate is {joined} ({metric}{group}, {dir})")
}

/// The regions alone: "faster at c ≤ 4 and slower at c ≥ 16".
pub(crate) fn region_phrase(
    regions: &[Region],
    axis: &str,
    lowest: Option<&str>,
    highest: Option<&str>,
    metric: &str,
) -> String {
    let parts: Vec<String> = regions
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                side_word(metric, r.side),
                place(r, axis, lowest, highest)
            )
        })
        .collect();
    match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => parts.join(""),
    }
}

/// The findings of a comparison: one sentence per distinct sound crossover, the metrics
/// that share it named together — "the candidate is faster at c ≤ 4 and slower at c ≥ 16
/// (output_throughput, tpot_p50, e2e_mean)".
pub(crate) fn findings(metrics: &[MetricReport]) -> Vec<String> {
    let mut found: Vec<(String, String, Vec<&str>)> = Vec::new();
    for m in metrics {
        for c in m.crossovers.iter().filter(|c| c.sound) {
            match found
                .iter_mut()
                .find(|(phrase, group, _)| *phrase == c.phrase && *group == c.group)
            {
                Some((_, _, names)) => names.push(&m.metric),
                None => found.push((c.phrase.clone(), c.group.clone(), vec![&m.metric])),
            }
        }
    }
    found
        .into_iter()
        .map(|(phrase, group, names)| {
            let group = if group.is_empty() {
                String::new()
            } else {
                format!("; {group}")
            };
            format!("the candidate is {phrase} ({}{group})", names.join(", "))
        })
        .collect()
}

/// A change as measured: `+2.1%` (log scale, the ratio − 1) or `+0.0123` (arithmetic).
pub(crate) fn change_words(scale: Scale, change: f64) -> String {
    match scale {
        Scale::Log => signed_pct(change),
        Scale::Arithmetic if change >= 0.0 => format!("+{}", num(change)),
        Scale::Arithmetic => num(change),
    }
}

/// The metric's advice in one sentence, or `None` when every cell is decided: "about 12
/// trials per arm would settle c=4 and c=8, 30 would settle c=16; c=32 (+2.1% against
/// θ = 2%) sits at the threshold: no practical number of trials would settle it".
pub fn advice_sentence(m: &MetricReport) -> Option<String> {
    if m.advice.is_empty() {
        return None;
    }
    let mut counts: Vec<(u64, Vec<&str>)> = Vec::new();
    let mut at_threshold: Vec<String> = Vec::new();
    for a in &m.advice {
        match a.settle {
            Settle::Trials { per_arm } => match counts.iter_mut().find(|(n, _)| *n == per_arm) {
                Some((_, points)) => points.push(&a.point),
                None => counts.push((per_arm, vec![&a.point])),
            },
            Settle::AtThreshold { .. } => at_threshold.push(match a.change {
                Some(c) => format!("{} ({})", a.point, change_words(m.scale, c)),
                None => a.point.clone(),
            }),
        }
    }
    counts.sort_by_key(|(n, _)| *n);
    let mut parts = Vec::new();
    for (i, (n, points)) in counts.iter().enumerate() {
        let lead = if i == 0 {
            format!("about {n} trials per arm would settle")
        } else {
            format!("{n} would settle")
        };
        parts.push(format!("{lead} {}", and_list(points)));
    }
    let mut sentence = parts.join(", ");
    if !at_threshold.is_empty() {
        let theta = pct(m.threshold);
        let verb = if at_threshold.len() == 1 {
            "sits"
        } else {
            "sit"
        };
        if !sentence.is_empty() {
            sentence.push_str("; ");
        }
        sentence.push_str(&format!(
            "{} {verb} at the threshold (θ = {theta}): no practical number of trials (at most \
             {PRACTICAL_TRIALS} per arm) would settle it",
            and_list(&at_threshold.iter().map(String::as_str).collect::<Vec<_>>())
        ));
    }
    Some(format!("{} undecided cell(s): {sentence}", m.advice.len()))
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => (*last).to_owned(),
        None => String::new(),
    }
}

/// The verdicts a flag threatens, in words: "every verdict of this comparison", or
/// "output_throughput at c=4 (improved; without it: equivalent)".
pub fn threatens_words(flag: &Flag) -> String {
    match &flag.threatens {
        Threatens::Comparison => "every verdict of this comparison".to_owned(),
        Threatens::Cells(cells) => {
            let parts: Vec<String> = cells
                .iter()
                .map(|c| {
                    let now = c.verdict.map_or("no verdict", |v| v.as_str());
                    match c.otherwise {
                        Some(o) => format!(
                            "{} at {} ({now}; otherwise {})",
                            c.metric,
                            c.point,
                            o.as_str()
                        ),
                        None => format!("{} at {} ({now})", c.metric, c.point),
                    }
                })
                .collect();
            parts.join(", ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(from: &str, to: &str, side: Side) -> Region {
        Region {
            from: from.into(),
            to: to.into(),
            side,
        }
    }

    #[test]
    fn two_regions_read_as_below_and_above() {
        let s = describe_regions(
            &[
                region("1", "4", Side::Better),
                region("16", "32", Side::Worse),
            ],
            "c",
            Some("1"),
            Some("32"),
            "output_throughput",
            Direction::HigherIsBetter,
            "",
        );
        assert_eq!(
            s,
            "the candidate is faster at c ≤ 4 and slower at c ≥ 16 (output_throughput, higher \
             is better)"
        );
    }

    #[test]
    fn three_regions_and_a_group() {
        let s = describe_regions(
            &[
                region("1", "1", Side::Worse),
                region("4", "8", Side::Better),
                region("16", "16", Side::Worse),
            ],
            "c",
            Some("1"),
            Some("32"),
            "goodput",
            Direction::HigherIsBetter,
            "in=512",
        );
        assert_eq!(
            s,
            "the candidate is worse at c=1, better at c from 4 to 8 and worse at c=16 \
             (goodput, in=512, higher is better)"
        );
    }
}
