//! The re-run report as text: a header, one table of published values (variant × point ×
//! metric: published, new, new/published with its CI, outcome, flags), one table of
//! published A/B claims, the fingerprint differences, every flag with its evidence and
//! action, notes, and the counts.

use std::fmt::Write;

use servebench_stats::Estimate;
use servebench_stats::flags::FlagLevel;
use servebench_stats::verdict::Scale;

use super::assess::{ClaimRow, RerunReport, ValueRow};

fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn value(e: Option<&Estimate>, n: usize) -> String {
    match e {
        Some(e) => format!("{} (n={n})", num(e.point)),
        None if n == 0 => "—".into(),
        None => format!("n={n}"),
    }
}

fn change(scale: Scale, e: Option<&Estimate>) -> String {
    let Some(e) = e else {
        return "no interval".into();
    };
    match scale {
        Scale::Log => format!("{:.3} [{:.3}, {:.3}]", e.point, e.ci.lower, e.ci.upper),
        Scale::Arithmetic => format!(
            "{:+} [{:+}, {:+}]",
            num(e.point),
            num(e.ci.lower),
            num(e.ci.upper)
        ),
    }
}

fn outcome(r: &ValueRow) -> String {
    match r.trials_per_arm {
        Some(n) => format!("{} (~{n} trials/arm)", r.outcome.as_str()),
        None => r.outcome.as_str().to_owned(),
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

fn values_table(out: &mut String, rows: &[ValueRow], level: f64) {
    let _ = writeln!(
        out,
        "\npublished values (change = new/published, or new − published for metrics that can \
         be 0; {:.0}% CI; reproduced = CI inside ±θ)",
        level * 100.0
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
                format!("{:.0}%", r.threshold * 100.0),
                value(r.published.as_ref(), r.published_trials),
                value(r.new.as_ref(), r.new_trials),
                change(r.scale, r.change.as_ref()),
                outcome(r),
                flag_ids(r),
            ]
        })
        .collect();
    table(out, &head, &body);
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
    table(out, &head, &body);
}

fn table<const N: usize>(out: &mut String, head: &[&str; N], body: &[[String; N]]) {
    let mut width = [0usize; N];
    for (i, h) in head.iter().enumerate() {
        width[i] = h.chars().count();
    }
    for row in body {
        for (i, c) in row.iter().enumerate() {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::from(" ");
        for (i, c) in cells.iter().enumerate() {
            let pad = width[i].saturating_sub(c.chars().count());
            let _ = write!(s, " {c}{}", " ".repeat(pad));
        }
        s.trim_end().to_owned()
    };
    let _ = writeln!(out, "{}", line(head.to_vec()));
    for row in body {
        let _ = writeln!(out, "{}", line(row.iter().map(String::as_str).collect()));
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
            let level = match f.level {
                FlagLevel::ReBaseline => "re-baseline",
                FlagLevel::Look => "look",
            };
            let _ = writeln!(out, "  [{level}] {}: {}", f.id.as_str(), f.evidence);
            let _ = writeln!(out, "      action: {}", f.action);
        }
    }
    if !r.notes.is_empty() {
        let _ = writeln!(out, "\nnotes:");
        for n in &r.notes {
            let _ = writeln!(out, "  - {n}");
        }
    }
    let s = &r.summary;
    let _ = writeln!(
        out,
        "\n{} value(s) reproduced, {} not reproduced, {} inconclusive",
        s.reproduced, s.not_reproduced, s.inconclusive
    );
    if s.claims_reproduced + s.claims_not_reproduced + s.claims_inconclusive > 0 {
        let _ = writeln!(
            out,
            "{} A/B claim(s) reproduced, {} not reproduced, {} inconclusive",
            s.claims_reproduced, s.claims_not_reproduced, s.claims_inconclusive
        );
    }
    out
}
