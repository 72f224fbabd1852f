//! The gates on a comparison's outputs (`spec.equivalence`): `output-changed` and
//! `accuracy-dropped` (the module docs of [`super`]). They read no cell.

use super::super::report::{Comparison, FailOn};

/// The reasons the output gates asked in `asked` trip on comparison `c` (`pair`: its
/// names, "candidate vs baseline").
pub(super) fn reasons(c: &Comparison, pair: &str, asked: &[FailOn]) -> Vec<String> {
    let has = |f: FailOn| asked.contains(&f);
    let mut reasons = Vec::new();
    if has(FailOn::OutputChanged)
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
    if has(FailOn::AccuracyDropped)
        && let Some(a) = c.equivalence.as_ref().and_then(|e| e.accuracy.as_ref())
        && a.verdict == "lower"
    {
        reasons.push(format!(
            "accuracy-dropped: {pair}, {:.1}% right against the baseline's {:.1}% on {} \
             reference prompts ({} only the baseline got right, {} only the candidate), \
             McNemar p = {:.3}",
            100.0 * a.candidate,
            100.0 * a.baseline,
            a.prompts,
            a.baseline_only,
            a.candidate_only,
            a.p_value
        ));
    }
    reasons
}
