//! The gate rule for what could not be judged: a gate passes only on evidence it has. A
//! gated cell with no verdict (no values, an arm missing), a comparison with no gated cell
//! at all (the runs share no sweep point, or the gated metrics and points match none of
//! its cells) and an output gate with no probe recorded each trip the gate with the reason,
//! unless `--allow-unjudged` (docs/ci.md) says to pass them.

use super::super::report::{Comparison, FailOn, VerdictKind};
use super::GateSpec;

/// What a reason ends with: how to pass it on purpose.
const OPT_OUT: &str = "could not be judged (`--allow-unjudged` passes it)";

/// The conditions that read cells.
fn reads_cells(f: FailOn) -> bool {
    !matches!(f, FailOn::OutputChanged | FailOn::AccuracyDropped)
}

/// The reasons comparison `c` (`pair`: "candidate vs baseline") could not be judged by the
/// conditions in `asked`.
pub(super) fn reasons(
    c: &Comparison,
    pair: &str,
    asked: &[FailOn],
    gate: &GateSpec,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(first) = asked.iter().copied().find(|f| reads_cells(*f)) {
        out.extend(cells(c, pair, first, gate));
    }
    out.extend(outputs(c, pair, asked));
    out
}

/// No gated cell, or gated cells without a verdict (`not-shown-non-inferior` already trips
/// on those with its own words).
fn cells(c: &Comparison, pair: &str, first: FailOn, gate: &GateSpec) -> Vec<String> {
    let gated: Vec<_> = c
        .metrics
        .iter()
        .filter(|m| gate.gates_metric(&m.metric))
        .flat_map(|m| {
            m.points
                .iter()
                .filter(|p| gate.gates_point(&p.point_label))
                .map(move |p| (m, p))
        })
        .collect();
    if gated.is_empty() {
        let why = if !c.fingerprint_differences.is_empty() {
            let fields: Vec<&str> = c
                .fingerprint_differences
                .iter()
                .map(|d| d.field.as_str())
                .collect();
            format!(
                "the runs are not comparable ({} differ) and share no gated cell",
                fields.join(", ")
            )
        } else if c.metrics.iter().all(|m| m.points.is_empty()) {
            "the two arms have no sweep point in common".to_owned()
        } else {
            "the gated metrics and points match none of its cells".to_owned()
        };
        return vec![format!(
            "{}: {pair}, no gated cell: {why}; the gate {OPT_OUT}",
            first.as_str()
        )];
    }
    // `not-shown-non-inferior` trips on a cell without an interval in its own words.
    let blank: Vec<String> = gated
        .iter()
        .filter(|(_, p)| p.verdict == VerdictKind::NotComputed || p.effect.is_none())
        .map(|(m, p)| {
            let e = p.error.as_deref().unwrap_or("no interval");
            format!("{} at {} ({e})", m.metric, p.label)
        })
        .collect();
    if blank.is_empty() || gate.fail_on.contains(&FailOn::NotShownNonInferior) {
        return Vec::new();
    }
    vec![format!(
        "{}: {pair}, {} gated cell(s) without a verdict {OPT_OUT}: {}",
        first.as_str(),
        blank.len(),
        blank.join("; ")
    )]
}

/// An output gate on a comparison with no probe recorded (or no reference answers scored).
fn outputs(c: &Comparison, pair: &str, asked: &[FailOn]) -> Vec<String> {
    let mut out = Vec::new();
    if asked.contains(&FailOn::OutputChanged) && c.equivalence.is_none() {
        out.push(format!(
            "output-changed: {pair}, no output probe in the result(s) (`spec.equivalence` \
             not set, or the probe recorded nothing): the output gate {OPT_OUT}"
        ));
    }
    if asked.contains(&FailOn::AccuracyDropped)
        && c.equivalence
            .as_ref()
            .and_then(|e| e.accuracy.as_ref())
            .is_none()
    {
        out.push(format!(
            "accuracy-dropped: {pair}, no accuracy on reference answers in the result(s) \
             (`equivalence.reference` not set, or nothing was scored): the accuracy gate \
             {OPT_OUT}"
        ));
    }
    out
}

/// The reason when there is no comparison at all.
pub(super) fn nothing_compared(asked: &[FailOn]) -> String {
    let names: Vec<&str> = asked.iter().map(|f| f.as_str()).collect();
    format!(
        "{}: no comparison was made, so no gated cell: the gate {OPT_OUT}",
        names.join(",")
    )
}
