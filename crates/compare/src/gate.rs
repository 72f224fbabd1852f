//! `--fail-on` gates for CI pipelines (docs/compare.md, "Gates"):
//! * `regressed` trips when any metric at any point is *regressed*: significant and the whole
//!   interval beyond −θ. It does not trip on noise (an A/A run is regressed at a cell in far
//!   fewer than α of cells) nor on a change whose size is unsure.
//! * `likely-regressed` trips on *regressed* or *likely regressed*: significantly worse, by an
//!   amount whose interval reaches inside θ. Stricter: it catches a regression whose size is
//!   not yet known, and trips on about α/2 of A/A cells by chance.
//! * `suspicious` trips when any re-baseline flag was raised (the comparison cannot be trusted
//!   yet — across runs that is always so, since `stale-baseline` is always raised). Flags fire
//!   only where they could change a verdict, so a clean interleaved run passes.
//! * `output-changed` trips when a comparison's output-equivalence verdict is `changed`: the
//!   candidate's greedy outputs differ from the baseline's beyond the baseline's own
//!   variation across its server starts (docs/equivalence.md).
//!
//! A tripped gate is exit code 1 (docs/architecture.md, "Exit codes").

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
        let likely = asked.contains(&FailOn::LikelyRegressed);
        if likely || asked.contains(&FailOn::Regressed) {
            for m in &c.metrics {
                let regressed: Vec<String> = m
                    .points
                    .iter()
                    .filter(|p| {
                        p.verdict == VerdictKind::Regressed
                            || (likely && p.verdict == VerdictKind::LikelyRegressed)
                    })
                    .map(|p| format!("{} ({})", p.label, p.verdict.as_str()))
                    .collect();
                if !regressed.is_empty() {
                    reasons.push(format!(
                        "{}: {pair}, {} at {}",
                        if likely {
                            "likely-regressed"
                        } else {
                            "regressed"
                        },
                        m.metric,
                        regressed.join(", ")
                    ));
                }
            }
        }
        if asked.contains(&FailOn::OutputChanged)
            && let Some(e) = &c.equivalence
            && e.verdict == "changed"
        {
            reasons.push(format!(
                "output-changed: {pair}, {} of {} probe prompts identical (the baseline's own \
                 starts {}), p = {:.3}",
                (e.identical * e.prompts as f64).round(),
                e.prompts,
                (e.baseline_identical * e.prompts as f64).round(),
                e.test.p
            ));
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
