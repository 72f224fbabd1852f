//! The one headline rule of a comparison (docs/compare.md, "The text report"): the most
//! serious thing first, then the answer. What is most serious, in order: nothing could be
//! compared (and why); the arms are not comparable (their verdicts are not findings); the
//! candidate's server failed verify; re-baseline flags. Then the answer: the verdict count —
//! named "not findings" when the arms are not comparable — and the findings in words.
//! `compare`'s text, the report and `rerun` read it here, so they say the same thing first.

use std::collections::BTreeMap;

use servebench_stats::flags::FlagLevel;

use super::report::Comparison;

/// Number of metric × point cells of a comparison.
pub fn cells(c: &Comparison) -> usize {
    c.metrics.iter().map(|m| m.points.len()).sum()
}

/// Why nothing was compared, when no metric × point cell was: no sweep point in both files
/// (with both sweeps), or no metric with a value in both.
pub fn nothing_compared(c: &Comparison) -> Option<String> {
    if cells(c) > 0 {
        return None;
    }
    if let Some(d) = c
        .fingerprint_differences
        .iter()
        .find(|d| d.field == "sweep")
    {
        let others: Vec<&str> = c
            .fingerprint_differences
            .iter()
            .filter(|d| d.field != "sweep")
            .map(|d| d.field.as_str())
            .collect();
        let because = if others.is_empty() {
            String::new()
        } else {
            format!(" — the workloads differ in {}", others.join(", "))
        };
        return Some(format!(
            "no sweep point is in both files{because} (baseline: {}; candidate: {})",
            d.baseline, d.candidate
        ));
    }
    if c.metrics.is_empty() {
        return Some("no compared metric is in both files".into());
    }
    Some("no metric has a value at any point in both files".into())
}

/// True when a comparison's verdicts are findings: something was compared and the arms'
/// fingerprints agree.
pub fn verdicts_are_findings(c: &Comparison) -> bool {
    cells(c) > 0 && c.fingerprint_differences.is_empty() && c.verify_failed.is_empty()
}

/// The verdict count, `8 improved, 2 inconclusive, 6 regressed` (alphabetical).
pub fn verdict_counts<'a>(points: impl IntoIterator<Item = &'a super::PointReport>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for p in points {
        *counts.entry(p.verdict.as_str()).or_insert(0) += 1;
    }
    let parts: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    parts.join(", ")
}

/// The serious lines, most serious first (empty when there is nothing serious to say).
pub fn serious(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(why) = nothing_compared(c) {
        out.push(format!("NOTHING COMPARED — {why}"));
    } else if !c.fingerprint_differences.is_empty() {
        let fields: Vec<&str> = c
            .fingerprint_differences
            .iter()
            .map(|d| d.field.as_str())
            .collect();
        out.push(format!(
            "NOT COMPARABLE — {} fingerprint field(s) differ ({}): the verdicts below are \
             not findings; measure both arms with the same workload, target and host",
            fields.len(),
            fields.join(", ")
        ));
    }
    for r in &c.verify_failed {
        out.push(format!(
            "VERIFY FAILED — {r}: its trials are not measurements of the change, and more \
             trials would not help; fix the server and run again"
        ));
    }
    let rebaseline = rebaseline_ids(c);
    if !rebaseline.is_empty() {
        out.push(format!(
            "re-baseline flags: {} — re-run before trusting the verdicts they threaten",
            rebaseline.join(", ")
        ));
    }
    out
}

/// The answer: the verdict count (or why there is none) and the findings.
pub fn answer(c: &Comparison) -> Vec<String> {
    let n = cells(c);
    let mut out = Vec::new();
    if n == 0 {
        out.push("verdicts: none (nothing was compared)".into());
    } else if verdicts_are_findings(c) {
        out.push(format!(
            "verdicts ({n} metric × point): {}",
            verdict_counts(c.metrics.iter().flat_map(|m| &m.points))
        ));
    } else {
        out.push(format!(
            "verdicts ({n} metric × point, not findings: {}): {}",
            if c.verify_failed.is_empty() {
                "the arms are not comparable"
            } else {
                "a server failed verify"
            },
            verdict_counts(c.metrics.iter().flat_map(|m| &m.points))
        ));
    }
    if verdicts_are_findings(c) {
        for f in &c.findings {
            out.push(format!("finding: {f}"));
        }
    }
    if rebaseline_ids(c).is_empty() {
        out.push("re-baseline flags: none".into());
    }
    out
}

/// The whole headline: [`serious`] then [`answer`].
pub fn lines(c: &Comparison) -> Vec<String> {
    let mut out = serious(c);
    out.extend(answer(c));
    out
}

/// Ids of the comparison's re-baseline flags, each once.
pub fn rebaseline_ids(c: &Comparison) -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = c
        .metrics
        .iter()
        .flat_map(|m| m.flags.iter())
        .chain(c.flags.iter())
        .filter(|f| f.level == FlagLevel::ReBaseline)
        .map(|f| f.id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}
