//! `--fail-on` gates for CI pipelines: `regressed` trips when any metric at any point is
//! regressed; `suspicious` trips when any re-baseline flag was raised (the comparison cannot
//! be trusted yet — across runs that is always so, since `stale-baseline` is always raised).
//! A tripped gate is exit code 1 (DESIGN.md, "Exit codes").

use servebench_stats::flags::FlagLevel;

use super::report::{CompareReport, FailOn, GateOutcome, VerdictKind};

/// Evaluate `fail_on` over `report` (duplicates are ignored).
pub fn evaluate(report: &CompareReport, fail_on: &[FailOn]) -> GateOutcome {
    let mut asked: Vec<FailOn> = Vec::new();
    for f in fail_on {
        if !asked.contains(f) {
            asked.push(*f);
        }
    }
    let mut reasons = Vec::new();
    for c in &report.comparisons {
        let pair = format!("{} vs {}", c.candidate.variant, c.baseline.variant);
        if asked.contains(&FailOn::Regressed) {
            for m in &c.metrics {
                let regressed: Vec<&str> = m
                    .points
                    .iter()
                    .filter(|p| p.verdict == VerdictKind::Regressed)
                    .map(|p| p.label.as_str())
                    .collect();
                if !regressed.is_empty() {
                    reasons.push(format!(
                        "regressed: {pair}, {} at {}",
                        m.metric,
                        regressed.join(", ")
                    ));
                }
            }
        }
        if asked.contains(&FailOn::Suspicious) {
            let mut ids: Vec<&str> = c
                .metrics
                .iter()
                .flat_map(|m| m.flags.iter())
                .chain(c.flags.iter())
                .filter(|f| f.level == FlagLevel::ReBaseline)
                .map(|f| f.id.as_str())
                .collect();
            ids.sort_unstable();
            ids.dedup();
            if !ids.is_empty() {
                reasons.push(format!(
                    "suspicious: {pair} has re-baseline flag(s) {}",
                    ids.join(", ")
                ));
            }
        }
    }
    GateOutcome {
        fail_on: asked,
        tripped: !reasons.is_empty(),
        reasons,
    }
}
