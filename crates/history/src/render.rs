//! `servebench history` as text: per spec and series, why the series starts, the baseline's
//! state, and per metric, point and variant the levels, change points and outlier runs.

use std::fmt::Write;

use servebench_compare::text::num;
use servebench_stats::verdict::Scale;

use crate::model::{Cell, History, Series};
use crate::words;

/// The levels of a cell between its change points, outlier runs left out:
/// `(first run, last run, mean)` with runs numbered across the spec (`first` is the number
/// of the series' first run, [`crate::RunInfo::number`]).
pub fn levels(c: &Cell, first: usize) -> Vec<(usize, usize, f64)> {
    let outlier = |i: usize| c.outliers.iter().any(|o| o.run.index == i);
    let mut bounds: Vec<usize> = c
        .change_points
        .iter()
        .map(|cp| cp.first_run_after.index)
        .collect();
    bounds.push(usize::MAX);
    let mut out = Vec::new();
    let mut start = 0;
    for b in bounds {
        let rows: Vec<&crate::model::RunValues> = c
            .runs
            .iter()
            .filter(|r| r.index >= start && r.index < b && !outlier(r.index))
            .collect();
        if let (Some(first_run), Some(last_run)) = (rows.first(), rows.last()) {
            let n = rows.len() as f64;
            let mean = match c.scale {
                Scale::Log => (rows.iter().map(|r| r.mean.ln()).sum::<f64>() / n).exp(),
                Scale::Arithmetic => rows.iter().map(|r| r.mean).sum::<f64>() / n,
            };
            out.push((first_run.index + first, last_run.index + first, mean));
        }
        start = b;
    }
    out
}

fn span(series: &Series) -> String {
    let at = |s: &str| s.chars().take(16).collect::<String>().replace('T', " ");
    match (series.runs.first(), series.runs.last()) {
        (Some(a), Some(b)) => format!("{} → {}", at(&a.created_at), at(&b.created_at)),
        _ => String::new(),
    }
}

fn direction(c: &Cell) -> &'static str {
    match c.direction {
        Some(servebench_stats::Direction::HigherIsBetter) => ", higher is better",
        Some(servebench_stats::Direction::LowerIsBetter) => ", lower is better",
        None => "",
    }
}

/// The summary of findings: a count, then one line per change point (steps first) and
/// outlier run, each naming its spec, series, metric, point and variant.
pub fn findings(h: &History) -> Vec<String> {
    let mut steps = Vec::new();
    let mut changes = Vec::new();
    let mut outliers = Vec::new();
    for spec in &h.specs {
        for series in &spec.series {
            for c in &series.cells {
                let at = format!(
                    "{} series {}: {} {} `{}`",
                    spec.spec_name, series.number, c.metric, c.label, c.variant
                );
                for cp in &c.change_points {
                    let line = format!("  {at}: {}", words::change(c, cp));
                    if cp.status == servebench_stats::changepoint::Status::Confirmed {
                        steps.push(line);
                    } else {
                        changes.push(line);
                    }
                }
                for o in &c.outliers {
                    outliers.push(format!(
                        "  {at}: outlier {}: {} from the runs around it",
                        words::run(&o.run),
                        words::outlier_shift(c.scale, o.shift, &c.unit)
                    ));
                }
            }
        }
    }
    let mut out = vec![if steps.len() + changes.len() + outliers.len() == 0 {
        "findings: none — no step, unconfirmed change or outlier run in any series".to_owned()
    } else {
        format!(
            "findings: {} step(s), {} unconfirmed change(s), {} outlier run(s) (details per \
             series below)",
            steps.len(),
            changes.len(),
            outliers.len()
        )
    }];
    out.extend(steps);
    out.extend(changes);
    out.extend(outliers);
    out
}

/// The history as text.
pub fn render(h: &History) -> String {
    let mut out = String::new();
    let runs: usize = h
        .specs
        .iter()
        .flat_map(|s| &s.series)
        .map(|s| s.runs.len())
        .sum();
    let _ = writeln!(
        out,
        "servebench history: {runs} run(s) of {} spec(s) from {}{}",
        h.specs.len(),
        h.sources.join(", "),
        if h.skipped.is_empty() {
            String::new()
        } else {
            format!("; {} file(s) skipped", h.skipped.len())
        }
    );
    // The findings first, one line each; the series in detail after.
    for l in findings(h) {
        let _ = writeln!(out, "{l}");
    }
    for s in &h.skipped {
        let _ = writeln!(out, "  skipped {}: {}", s.file, s.reason);
    }
    for spec in &h.specs {
        let n: usize = spec.series.iter().map(|s| s.runs.len()).sum();
        let _ = writeln!(
            out,
            "\nspec {}: {n} run(s) in {} comparable series{}",
            spec.spec_name,
            spec.series.len(),
            spec.reference
                .as_ref()
                .map(|r| format!("; changes are new when not confirmed as of run {r}"))
                .unwrap_or_default()
        );
        for series in &spec.series {
            let _ = writeln!(
                out,
                "\nseries {} — {} run(s), {}",
                series.number,
                series.runs.len(),
                span(series)
            );
            if let Some(b) = &series.starts {
                let fields: Vec<String> = b
                    .differences
                    .iter()
                    .map(|d| format!("{}: {} → {}", d.field, d.baseline, d.candidate))
                    .collect();
                let _ = writeln!(
                    out,
                    "  starts at run {}: not comparable with run {} ({})",
                    series.runs[0].run_id,
                    b.previous_run,
                    fields.join("; ")
                );
            }
            if let Some(v) = &series.baseline_variant {
                let _ = writeln!(out, "  baseline `{v}`:");
                for b in &series.baseline {
                    let _ = writeln!(out, "    {}", b.message);
                }
            }
            let mut metric = "";
            for c in &series.cells {
                if c.metric != metric {
                    metric = &c.metric;
                    let _ = writeln!(out, "  {} ({}{})", c.metric, c.unit, direction(c));
                }
                let first = series.runs.first().map_or(1, |r| r.number);
                let lv: Vec<String> = levels(c, first)
                    .iter()
                    .map(|(a, b, m)| {
                        if a == b {
                            format!("run {a} {}", num(*m))
                        } else {
                            format!("runs {a}–{b} {}", num(*m))
                        }
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "    {} `{}`: {} run(s); level {}",
                    c.label,
                    c.variant,
                    c.runs.len(),
                    lv.join(", then ")
                );
                for cp in &c.change_points {
                    let _ = writeln!(out, "      {}", words::change(c, cp));
                }
                for o in &c.outliers {
                    let _ = writeln!(
                        out,
                        "      outlier {}: {} from the runs around it (left out of the levels)",
                        words::run(&o.run),
                        words::outlier_shift(c.scale, o.shift, &c.unit)
                    );
                }
            }
        }
    }
    if let Some(g) = &h.gate {
        let _ = writeln!(
            out,
            "\n--fail-on {}: {}",
            g.fail_on.join(","),
            if g.tripped {
                format!("TRIPPED ({} confirmed new step(s))", g.confirmed.len())
            } else {
                "passed".into()
            }
        );
        for l in &g.confirmed {
            let _ = writeln!(out, "  confirmed: {l}");
        }
        for l in &g.unconfirmed {
            let _ = writeln!(out, "  unconfirmed (not failed on): {l}");
        }
    }
    out
}
