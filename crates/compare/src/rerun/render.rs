//! The re-run report as text: a header, one table of published values (variant × point ×
//! metric: published, new, new/published with its CI, outcome, flags), one table of
//! published A/B claims, the fingerprint differences, every flag with its evidence and
//! action, notes, and the counts.

use std::fmt::Write;

use servebench_stats::Estimate;

use super::assess::{ClaimRow, RerunReport, ValueRow};
use crate::text::change;
use crate::text::{aligned, num, pct};
use crate::words::threatens_words;

fn value(e: Option<&Estimate>, n: usize) -> String {
    match e {
        Some(e) => format!("{} (n={n})", num(e.point)),
        None if n == 0 => "—".into(),
        None => format!("n={n}"),
    }
}

fn flag_ids(r: &ValueRow) -> String {
    let ids: Vec<&str> = r.flags.iter().map(|f| f.as_str()).collect();
    if ids.is_empty() {
        "—".into()
    } else {
        ids.join(", ")
    }
}

fn relative(r: &ValueRow) -> [String; 2] {
    match (&r.relative, r.relative_outcome) {
        (Some(e), Some(o)) => [
            change(servebench_stats::verdict::Scale::Log, Some(e)),
            o.as_str().to_owned(),
        ],
        _ => ["—".into(), "—".into()],
    }
}

fn values_table(out: &mut String, rows: &[ValueRow], level: f64) {
    if rows.iter().any(|r| r.relative.is_some()) {
        return values_table_with_levels(out, rows, level);
    }
    let _ = writeln!(
        out,
        "\npublished values (change = new vs published, or new − published for metrics that \
         can be 0; {} CI; reproduced = CI inside ±θ)",
        pct(level)
    );
    let head = [
        "variant",
        "point",
        "metric",
        "θ",
        "published",
        "new",
        "change [CI]",
        "outcome",
        "flags",
    ];
    let body: Vec<[String; 9]> = rows
        .iter()
        .map(|r| {
            [
                r.variant.clone(),
                r.point.clone(),
                format!("{} ({})", r.metric, r.unit),
                pct(r.threshold),
                value(r.published.as_ref(), r.published_trials),
                value(r.new.as_ref(), r.new_trials),
                change(r.scale, r.change.as_ref()),
                r.outcome.as_str().to_owned(),
                flag_ids(r),
            ]
        })
        .collect();
    table(out, &head, body);
}

/// The values judged without and with the common change: `vs common` is the cell's change
/// over its metric's common change, with the interval of its departure.
fn values_table_with_levels(out: &mut String, rows: &[ValueRow], level: f64) {
    let _ = writeln!(
        out,
        "\npublished values (change = new vs published, {} CI, reproduced = CI inside ±θ; \
         vs common = the same with the metric's common change taken out)",
        pct(level)
    );
    let head = [
        "variant",
        "point",
        "metric",
        "θ",
        "published",
        "new",
        "change [CI]",
        "outcome",
        "vs common [CI]",
        "outcome",
        "flags",
    ];
    let body: Vec<[String; 11]> = rows
        .iter()
        .map(|r| {
            let [rel, rel_outcome] = relative(r);
            [
                r.variant.clone(),
                r.point.clone(),
                format!("{} ({})", r.metric, r.unit),
                pct(r.threshold),
                value(r.published.as_ref(), r.published_trials),
                value(r.new.as_ref(), r.new_trials),
                change(r.scale, r.change.as_ref()),
                r.outcome.as_str().to_owned(),
                rel,
                rel_outcome,
                flag_ids(r),
            ]
        })
        .collect();
    table(out, &head, body);
}

fn claims_table(out: &mut String, rows: &[ClaimRow]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\npublished A/B claims (candidate vs baseline within each run; reproduced = same \
         verdict direction)"
    );
    let head = [
        "candidate vs baseline",
        "point",
        "metric",
        "published",
        "new",
        "outcome",
    ];
    let eff = |e: Option<Estimate>| e.map_or(String::new(), |e| format!(" {:.3}", e.point));
    let body: Vec<[String; 6]> = rows
        .iter()
        .map(|c| {
            [
                format!("{} vs {}", c.candidate, c.baseline),
                c.point.clone(),
                c.metric.clone(),
                format!(
                    "{}{}",
                    c.published_verdict.as_str(),
                    eff(c.published_effect)
                ),
                format!("{}{}", c.new_verdict.as_str(), eff(c.new_effect)),
                c.outcome.as_str().to_owned(),
            ]
        })
        .collect();
    table(out, &head, body);
}

fn table<const N: usize>(out: &mut String, head: &[&str; N], body: Vec<[String; N]>) {
    let rows: Vec<[String; N]> = std::iter::once(head.map(str::to_owned))
        .chain(body)
        .collect();
    for line in aligned(&rows) {
        let _ = writeln!(out, "{line}");
    }
}

/// The report as text.
pub fn render(r: &RerunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "rerun of {} (run {})\n     as {} (run {}); spec hash {}",
        r.published_file, r.published_run, r.new_file, r.new_run, r.spec_hash
    );
    if let Some(l) = &r.levels {
        let _ = writeln!(out);
        for line in crate::levels::lines(l) {
            let _ = writeln!(out, "{line}");
        }
    }
    // The summary first (what reproduced, and what threatens it), the details after.
    summary(&mut out, r);
    values_table(&mut out, &r.values, 1.0 - r.alpha);
    claims_table(&mut out, &r.claims);
    if !r.fingerprint_differences.is_empty() {
        let _ = writeln!(out, "\nfields that differ (published → new):");
        for d in &r.fingerprint_differences {
            let _ = writeln!(out, "  {}: {} → {}", d.field, d.baseline, d.candidate);
        }
    }
    if !r.flags.is_empty() {
        let _ = writeln!(out, "\nflags:");
        for f in &r.flags {
            let _ = writeln!(
                out,
                "  [{}] {}: {}",
                f.level.as_str(),
                f.id.as_str(),
                f.evidence
            );
            let _ = writeln!(out, "      threatens: {}", threatens_words(f));
            let _ = writeln!(out, "      action: {}", f.action);
        }
    }
    if !r.advice.is_empty() {
        let _ = writeln!(out, "\nadvice (inconclusive values):");
        for a in &r.advice {
            let _ = writeln!(out, "  {a}");
        }
    }
    if let Some(o) = &r.outputs {
        let _ = writeln!(out);
        for l in super::outputs::lines(o) {
            let _ = writeln!(out, "{l}");
        }
    }
    if !r.notes.is_empty() {
        let _ = writeln!(out, "\nnotes:");
        for n in &r.notes {
            let _ = writeln!(out, "  - {n}");
        }
    }
    out
}

/// The counts, the environment values that differ, the fields that differ and the
/// re-baseline flags, each in a line.
fn summary(out: &mut String, r: &RerunReport) {
    let s = &r.summary;
    let _ = writeln!(
        out,
        "{} value(s) reproduced, {} not reproduced, {} inconclusive",
        s.reproduced, s.not_reproduced, s.inconclusive
    );
    if s.claims_reproduced + s.claims_not_reproduced + s.claims_inconclusive > 0 {
        let _ = writeln!(
            out,
            "{} A/B claim(s) reproduced, {} not reproduced, {} inconclusive",
            s.claims_reproduced, s.claims_not_reproduced, s.claims_inconclusive
        );
    }
    for e in &r.environment {
        let _ = writeln!(out, "environment: {e}");
    }
    if !r.fingerprint_differences.is_empty() {
        let fields: Vec<&str> = r
            .fingerprint_differences
            .iter()
            .map(|d| d.field.as_str())
            .collect();
        let _ = writeln!(out, "fields that differ: {}", fields.join(", "));
    }
    let rebaseline: Vec<&str> = r
        .flags
        .iter()
        .filter(|f| f.level == servebench_stats::flags::FlagLevel::ReBaseline)
        .map(|f| f.id.as_str())
        .collect();
    if !rebaseline.is_empty() {
        let _ = writeln!(out, "re-baseline flags: {}", rebaseline.join(", "));
    }
}
