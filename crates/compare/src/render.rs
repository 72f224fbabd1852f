//! The report as text: per comparison a header (arms, run ids, notes), per metric a table
//! of sweep points (baseline and candidate means with CIs, change with CI, p, verdict, the
//! ids of the flags that threaten it), the advice for the undecided cells and crossovers;
//! then every flag with its evidence, the verdicts it threatens and its action. The
//! headline ([`crate::headline`]) comes first, under the title: the most serious thing
//! (nothing compared, not comparable, re-baseline flags), then the verdict count and the
//! findings.

use std::fmt::Write;

use servebench_stats::flags::Flag;
use servebench_stats::verdict::Scale;
use servebench_stats::{Direction, Estimate};

use super::report::{ArmSource, CompareReport, Comparison, MetricReport, Mode};
use super::text::change;
use super::text::{aligned, num, p_value, pct};
use super::words::{advice_sentence, threatens_words};

fn estimate(e: Option<&Estimate>, n: usize) -> String {
    match e {
        Some(e) => format!(
            "{} [{}, {}]",
            num(e.point),
            num(e.ci.lower),
            num(e.ci.upper)
        ),
        None if n == 0 => "—".into(),
        None => format!("n={n}, no CI"),
    }
}

fn source_line(role: &str, s: &ArmSource) -> String {
    let patch = if s.patch.is_empty() {
        "no server patch".to_owned()
    } else {
        format!("patch: {}", s.patch.join(" "))
    };
    format!(
        "  {role:<9} {} — {} (run {}, {}, {}; servebench {}); {patch}",
        s.variant, s.file, s.run_id, s.origin, s.status, s.tool_version
    )
}

fn metric_table(out: &mut String, m: &MetricReport, level: f64) {
    let dir = match m.direction {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    };
    let (means, change_word, theta) = match m.scale {
        Scale::Log => (
            "geometric mean",
            "change",
            format!("θ = {}", pct(m.threshold)),
        ),
        Scale::Arithmetic => (
            "mean",
            "difference",
            format!("θ = {} (margin per point below)", pct(m.threshold)),
        ),
    };
    let ci = format!("{}% CI", pct(level).trim_end_matches('%'));
    let _ = writeln!(
        out,
        "\n{} ({}, {dir}, {theta}): {means} [{ci}] over trials",
        m.metric, m.unit
    );
    let rows: Vec<[String; 8]> = m
        .points
        .iter()
        .map(|p| {
            [
                p.label.clone(),
                format!("{}/{}", p.n_baseline, p.n_candidate),
                estimate(p.baseline.as_ref(), p.n_baseline),
                estimate(p.candidate.as_ref(), p.n_candidate),
                change(m.scale, p.effect.as_ref()),
                p.table_p().map_or("—".into(), p_value),
                p.verdict.as_str().to_owned(),
                p.flags
                    .iter()
                    .map(|f| f.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
            ]
        })
        .collect();
    let header = [
        "point".to_owned(),
        "n".to_owned(),
        "baseline".to_owned(),
        "candidate".to_owned(),
        format!("{change_word} [{ci}]"),
        m.p_header().to_owned(),
        "verdict".to_owned(),
        "flags".to_owned(),
    ];
    let lines = aligned(&std::iter::once(header).chain(rows).collect::<Vec<_>>());
    let _ = writeln!(out, "{}", lines[0]);
    for (line, p) in lines[1..].iter().zip(&m.points) {
        let _ = writeln!(out, "{line}");
        if let Some(e) = &p.error {
            let _ = writeln!(out, "    {}: no comparison: {e}", p.label);
        }
        if m.scale == Scale::Arithmetic
            && let Some(margin) = p.margin
        {
            let _ = writeln!(out, "    {}: margin ±{}", p.label, num(margin));
        }
    }
    if let Some(a) = advice_sentence(m) {
        let _ = writeln!(out, "  advice: {a}");
    }
    for c in &m.crossovers {
        if c.sound {
            let _ = writeln!(out, "  crossover: {}", c.description);
        } else {
            let _ = writeln!(
                out,
                "  sign change (not a finding yet): {}\n    why: {}",
                c.description,
                c.why_not.as_deref().unwrap_or("")
            );
        }
    }
}

/// Each flag once (the same rule with the same evidence, whatever its action says), the
/// re-baseline ones first, then by rule.
pub(crate) fn distinct_flags<'a>(flags: impl IntoIterator<Item = &'a Flag>) -> Vec<&'a Flag> {
    let mut seen: Vec<&Flag> = Vec::new();
    for f in flags {
        if !seen
            .iter()
            .any(|s| s.id == f.id && s.evidence == f.evidence)
        {
            seen.push(f);
        }
    }
    seen.sort_by_key(|f| (f.level, f.id));
    seen
}

fn flags_section(out: &mut String, c: &Comparison) {
    let seen = distinct_flags(
        c.metrics
            .iter()
            .flat_map(|m| m.flags.iter())
            .chain(c.flags.iter()),
    );
    if seen.is_empty() {
        let _ = writeln!(out, "\nflags: none");
        return;
    }
    let _ = writeln!(
        out,
        "\nflags (re-baseline: re-run before trusting the numbers; look: worth a human look):"
    );
    for f in seen {
        let _ = writeln!(
            out,
            "  [{}] {}: {}\n      threatens: {}\n      → {}",
            f.level.as_str(),
            f.id.as_str(),
            f.evidence,
            threatens_words(f),
            f.action
        );
    }
}

/// The whole report as text.
pub fn render(report: &CompareReport) -> String {
    let mut out = String::new();
    let level = 1.0 - report.alpha;
    // Levels come after the first headline (a NOT COMPARABLE or NOTHING COMPARED is more
    // serious), and only when some metric's common change could be computed.
    let mut levels = report
        .levels
        .as_ref()
        .filter(|l| l.metrics.iter().any(|m| m.common.is_some()));
    for (i, c) in report.comparisons.iter().enumerate() {
        if i > 0 {
            let _ = writeln!(out, "\n{}", "─".repeat(78));
        }
        let how = match c.mode {
            Mode::WithinRun if c.interleaved => "within one run, interleaved".to_owned(),
            Mode::WithinRun => "within one run, NOT interleaved".to_owned(),
            Mode::AcrossRuns => "across two runs".to_owned(),
        };
        let _ = writeln!(
            out,
            "{} vs {} ({how}; α = {})",
            c.candidate.variant, c.baseline.variant, report.alpha
        );
        // The headline first (the most serious thing, then the answer), details after.
        for l in crate::headline::lines(c) {
            let _ = writeln!(out, "{l}");
        }
        if let Some(l) = levels.take() {
            for line in crate::levels::lines(l) {
                let _ = writeln!(out, "{line}");
            }
        }
        let _ = writeln!(out, "{}", source_line("baseline", &c.baseline));
        let _ = writeln!(out, "{}", source_line("candidate", &c.candidate));
        if !c.fingerprint_differences.is_empty() {
            let _ = writeln!(out, "  NOT COMPARABLE — fingerprint fields that differ:");
            for d in &c.fingerprint_differences {
                let _ = writeln!(
                    out,
                    "    {}: baseline `{}`, candidate `{}`",
                    d.field, d.baseline, d.candidate
                );
            }
        }
        for n in &c.notes {
            let _ = writeln!(out, "  note: {n}");
        }
        if let Some(e) = &c.equivalence {
            for l in crate::equivalence::lines(e) {
                let _ = writeln!(out, "  {l}");
            }
        }
        if let Some(k) = &c.kernels {
            for l in crate::kernels::lines(k) {
                let _ = writeln!(out, "  {l}");
            }
        }
        for m in &c.metrics {
            metric_table(&mut out, m, level);
        }
        flags_section(&mut out, c);
    }
    if let Some(g) = &report.gate {
        let asked: Vec<&str> = g.fail_on.iter().map(|f| f.as_str()).collect();
        let state = if g.tripped { "TRIPPED" } else { "passed" };
        let _ = writeln!(out, "\ngate --fail-on {}: {state}", asked.join(","));
        let _ = writeln!(out, "  gated: {}", crate::gate::describe(g));
        for r in &g.reasons {
            let _ = writeln!(out, "  {r}");
        }
    }
    out
}
