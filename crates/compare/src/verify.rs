//! A variant whose server failed verify (docs/compare.md, "Failed trials"): its change may
//! not have been in effect, so its trials measure something else and more of them would not
//! help. The comparison says so once — what the server reported — instead of one
//! invalid-trial flag per failed trial, metric and point, and gives no advice for its cells.

use servebench_result::RunResult;
use servebench_stats::flags::FlagId;

use crate::Comparison;

/// [`failures`] of both arms, each message once.
pub(crate) fn failures_of_both(
    base: &RunResult,
    base_v: &str,
    cand: &RunResult,
    cand_v: &str,
) -> Vec<String> {
    let mut out = failures(base, base_v);
    for r in failures(cand, cand_v) {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// What the server reported at each start of `variant` in `result` whose verify failed
/// (each reason once).
pub(crate) fn failures(result: &RunResult, variant: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in result.servers.iter().filter(|s| s.variant == variant) {
        if !s.verify.iter().any(|v| !v.passed) {
            continue;
        }
        let reason = s.error.clone().unwrap_or_else(|| {
            format!(
                "verify failed for variant `{variant}` (block {})",
                s.block + 1
            )
        });
        if !out.contains(&reason) {
            out.push(reason);
        }
    }
    out
}

/// Fold the verify failures into `c`: recorded in `verify_failed`, each failed trial's
/// invalid-trial flag whose reason is one of them dropped (the failure is said once), and
/// no advice (more trials of a server that fails verify measure nothing new).
pub(crate) fn fold(c: &mut Comparison, reasons: Vec<String>) {
    if reasons.is_empty() {
        return;
    }
    for m in &mut c.metrics {
        m.flags.retain(|f| {
            !(f.id == FlagId::InvalidTrial && reasons.iter().any(|r| f.evidence.contains(r)))
        });
        let still: Vec<String> = m
            .flags
            .iter()
            .filter(|f| f.id == FlagId::InvalidTrial)
            .map(|f| f.evidence.clone())
            .collect();
        for p in &mut m.points {
            let label = format!(" at {}, ", p.label);
            if !still.iter().any(|e| e.contains(&label)) {
                p.flags.retain(|id| *id != FlagId::InvalidTrial);
            }
        }
        m.advice.clear();
    }
    c.verify_failed = reasons;
}
