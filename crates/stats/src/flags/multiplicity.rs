//! **multiplicity**: many tests in one comparison (every metric × sweep point). Which verdicts
//! a multiplicity correction decides is the caller's choice (`compare.multiplicity`):
//!
//! * **applied** (Holm's step-down, the default): each cell's test of "no difference" is
//!   read at its Holm level ([`crate::holm::holm_levels`], through
//!   [`crate::flags::PointComparison::tested_at`]), so the verdicts printed *are* the
//!   corrected ones. [`multiplicity_applied`] says which verdicts the correction changed and
//!   what each would be at its own α — the flag explains the table, it never contradicts it;
//! * **not applied** (`none`): every cell is read at its own α. [`multiplicity`] says how
//!   many false alarms m·α tests give by chance and which significant results would not
//!   survive Holm's correction, as a look — what a per-cell reading means, not another
//!   verdict.
//!
//! Reference: S. Holm, Scand. J. Statist. 6, 1979 (docs/statistics-method.md, "Many tests").

use crate::error::StatsError;
use crate::flags::evidence::NamedP;
use crate::flags::{Flag, FlagId, FlagLevel, Threat, fmt_p};
use crate::holm::{expected_false_alarms, holm_adjust};
use crate::verdict::Verdict;

/// **multiplicity**, per-cell reading (`compare.multiplicity: none`): among `tests` (every
/// metric × level of a comparison), some result is significant at α but would not be under
/// Holm's correction. Says how many false alarms m·α tests give by chance. Look.
pub fn multiplicity(tests: &[NamedP], alpha: f64) -> Result<Option<Flag>, StatsError> {
    if tests.len() < 2 {
        return Ok(None);
    }
    let raw: Vec<f64> = tests.iter().map(|t| t.p).collect();
    let adjusted = holm_adjust(&raw)?;
    let expected = expected_false_alarms(tests.len(), alpha)?;
    let before = raw.iter().filter(|p| **p < alpha).count();
    let after = adjusted.iter().filter(|p| **p < alpha).count();
    if before == after {
        return Ok(None);
    }
    let lost: Vec<(&NamedP, f64)> = tests
        .iter()
        .zip(&adjusted)
        .filter(|(t, adj)| t.p < alpha && **adj >= alpha)
        .map(|(t, adj)| (t, *adj))
        .collect();
    let words: Vec<String> = lost
        .iter()
        .map(|(t, adj)| format!("{} (p = {} → {})", t.label(), fmt_p(t.p), fmt_p(*adj)))
        .collect();
    let threats = lost
        .iter()
        .map(|(t, _)| Threat {
            metric: t.metric.clone(),
            point: t.point.clone(),
            verdict: Some(t.verdict),
            otherwise: None,
        })
        .collect();
    Ok(Some(
        Flag::new(
            FlagId::Multiplicity,
            FlagLevel::Look,
            format!(
                "{} tests, each read at its own α = {alpha} (compare.multiplicity: none): \
                 {expected:.2} false alarm(s) expected by chance; {before} significant at its \
                 own α, {after} would be under Holm's correction; would not be: {}",
                tests.len(),
                words.join(", ")
            ),
            "these verdicts hold per cell, not for the comparison as a whole; set \
             `compare.multiplicity: holm` (or `--multiplicity holm`) to have the correction \
             decide them, or confirm these cells with a dedicated re-run",
        )
        .threatening(threats),
    ))
}

/// **multiplicity**, correction applied (`compare.multiplicity: holm`): `tests` hold every
/// cell's p and its verdict at its own α, `corrected` the verdict each got at its Holm
/// level (the one the table shows), in the same order. Fires when the correction changed
/// some verdict, naming each with its p before and after and what it would be at its own
/// α (`otherwise`). Look: the verdicts already include the correction.
pub fn multiplicity_applied(
    tests: &[NamedP],
    corrected: &[Verdict],
    alpha: f64,
) -> Result<Option<Flag>, StatsError> {
    if tests.len() < 2 || corrected.len() != tests.len() {
        return Ok(None);
    }
    let raw: Vec<f64> = tests.iter().map(|t| t.p).collect();
    let adjusted = holm_adjust(&raw)?;
    let expected = expected_false_alarms(tests.len(), alpha)?;
    let changed: Vec<(&NamedP, f64, Verdict)> = tests
        .iter()
        .zip(&adjusted)
        .zip(corrected)
        .filter(|((t, _), v)| t.verdict != **v)
        .map(|((t, adj), v)| (t, *adj, *v))
        .collect();
    if changed.is_empty() {
        return Ok(None);
    }
    let before = raw.iter().filter(|p| **p < alpha).count();
    let after = adjusted.iter().filter(|p| **p < alpha).count();
    let words: Vec<String> = changed
        .iter()
        .map(|(t, adj, v)| {
            format!(
                "{} (p = {} → {}: {}, {} at its own α)",
                t.label(),
                fmt_p(t.p),
                fmt_p(*adj),
                v.as_str(),
                t.verdict.as_str()
            )
        })
        .collect();
    let threats = changed
        .iter()
        .map(|(t, _, v)| Threat {
            metric: t.metric.clone(),
            point: t.point.clone(),
            verdict: Some(*v),
            otherwise: Some(t.verdict),
        })
        .collect();
    Ok(Some(
        Flag::new(
            FlagId::Multiplicity,
            FlagLevel::Look,
            format!(
                "Holm's correction over {} tests at α = {alpha} decided the verdicts shown \
                 ({expected:.2} false alarm(s) expected among them without it): {before} \
                 significant at its own α, {after} after the correction; changed by it: {}",
                tests.len(),
                words.join(", ")
            ),
            "the table's verdicts include the correction; to claim one of these cells, \
             confirm it with a re-run that compares only it (`--metric`, fewer sweep points)",
        )
        .threatening(threats),
    ))
}
