//! The per-point and per-comparison rules of the validity-flag table in
//! docs/statistics-method.md (the sweep-level rule and the crossover finding live in `sweep`).
//! Each is a pure function of its evidence. The rules for outlier trials, drift and invalid
//! trials recompute the cell's verdict without what they found (that trial, that trend) and
//! fire only when it differs: a threat that cannot change the answer is not a flag.

use crate::advice::PRACTICAL_TRIALS;
use crate::flags::evidence::{
    Analysis, ArmEvidence, ComparisonContext, MetricSettings, PointComparison, RuleSettings,
    TrialCheck,
};
use crate::flags::{Flag, FlagId, FlagLevel, Threat, pct, pct_plain, rerun_action};
use crate::interval::log_prediction_interval;
use crate::summary::{geometric_mean, mean};
use crate::verdict::{Direction, Scale, Verdict};

/// Trials per arm to recommend in re-run actions: the most any point needs to resolve the
/// metric's margin at its observed spread (`ArmComparison::trials_for_margin`), capped at
/// `advice::PRACTICAL_TRIALS`, and at least `settings.rerun_trials`.
pub fn recommended_trials(points: &[PointComparison], settings: &RuleSettings) -> u64 {
    points
        .iter()
        .filter_map(|p| p.comparison.as_ref().and_then(|c| c.trials_for_margin))
        .max()
        .unwrap_or(0)
        .min(PRACTICAL_TRIALS)
        .max(settings.rerun_trials as u64)
}

/// **not-comparable**: the fingerprints differ in some field. Re-baseline.
pub fn not_comparable(ctx: &ComparisonContext) -> Option<Flag> {
    if ctx.fingerprint_differences.is_empty() {
        return None;
    }
    let fields: Vec<String> = ctx
        .fingerprint_differences
        .iter()
        .map(|d| {
            format!(
                "{} (baseline `{}`, candidate `{}`)",
                d.field, d.baseline, d.candidate
            )
        })
        .collect();
    Some(Flag::new(
        FlagId::NotComparable,
        FlagLevel::ReBaseline,
        format!(
            "the fingerprints differ in {} field(s) besides the variant's own change: {}",
            fields.len(),
            fields.join("; ")
        ),
        "make everything but the variant identical, then re-run baseline and candidate \
         interleaved in one session",
    ))
}

/// **stale-baseline**: different runs/sessions, or one run not interleaved. Re-baseline.
pub fn stale_baseline(ctx: &ComparisonContext, trials_per_arm: u64) -> Option<Flag> {
    let runs = match (&ctx.baseline_run, &ctx.candidate_run) {
        (Some(a), Some(b)) => format!(" (baseline run `{a}`, candidate run `{b}`)"),
        _ => String::new(),
    };
    let evidence = if !ctx.same_run {
        format!(
            "baseline and candidate were measured in different runs or sessions{runs}: the \
             between-session variance is missing from the standard error, so the CI is too \
             narrow"
        )
    } else if !ctx.interleaved {
        format!(
            "baseline and candidate were measured in one run{runs} but not interleaved \
             (blocked order): drift during the run is confounded with the difference"
        )
    } else {
        return None;
    };
    Some(Flag::new(
        FlagId::StaleBaseline,
        FlagLevel::ReBaseline,
        evidence,
        rerun_action(trials_per_arm),
    ))
}

/// **too-few-trials**: fewer than `min_trials` (3) trials in an arm: no confidence interval,
/// so no verdict. Re-baseline.
pub fn too_few_trials(
    point: &PointComparison,
    metric: &MetricSettings,
    settings: &RuleSettings,
    trials_per_arm: u64,
) -> Option<Flag> {
    let (na, nb) = (
        point.baseline.trial_values.len(),
        point.candidate.trial_values.len(),
    );
    if na.min(nb) >= settings.min_trials {
        return None;
    }
    Some(
        Flag::new(
            FlagId::TooFewTrials,
            FlagLevel::ReBaseline,
            format!(
                "{} at {}: {na} baseline and {nb} candidate trial(s); below {} there is no \
                 confidence interval",
                metric.name, point.label, settings.min_trials
            ),
            rerun_action(trials_per_arm),
        )
        .threatening(vec![threat(metric, point, None)]),
    )
}

/// The verdict of `point` as a threat to it, with what it would be otherwise.
pub(super) fn threat(
    metric: &MetricSettings,
    point: &PointComparison,
    otherwise: Option<Verdict>,
) -> Threat {
    Threat {
        metric: metric.name.clone(),
        point: point.label.clone(),
        verdict: point.verdict(),
        otherwise,
    }
}

/// Whether a trial or trend whose removal turns the cell's `verdict` into `otherwise` is a
/// flag, and at which level. **Re-baseline** when a claim rests on it: the verdict as
/// measured is decided (improved, regressed, equivalent) and would be anything else without
/// it, or it is likely improved/regressed and would not keep that direction (inconclusive,
/// equivalent, the other way). **Look** when it only costs a decision: an inconclusive cell,
/// or a likely one, that would be decided — in the same direction — without it (nothing
/// claimed is at stake; re-measuring may settle the cell). Nothing otherwise: the same
/// verdict, or an inconclusive cell that would merely lean one way.
pub(super) fn threat_level(verdict: Verdict, otherwise: Option<Verdict>) -> Option<FlagLevel> {
    if otherwise == Some(verdict) {
        return None;
    }
    let strengthens = match (verdict, otherwise) {
        (Verdict::Inconclusive, Some(o)) => o.is_decided(),
        (Verdict::LikelyImproved, Some(Verdict::Improved))
        | (Verdict::LikelyRegressed, Some(Verdict::Regressed)) => true,
        _ => false,
    };
    if strengthens {
        Some(FlagLevel::Look)
    } else if verdict == Verdict::Inconclusive {
        None
    } else {
        Some(FlagLevel::ReBaseline)
    }
}

/// `" (without it: equivalent)"`-style words for a flag's evidence.
pub(super) fn otherwise_words(what: &str, otherwise: Option<Verdict>) -> String {
    match otherwise {
        Some(v) => format!("{what}: {}", v.as_str()),
        None => format!("{what}: no comparison left"),
    }
}

fn arm_center(arm: &ArmEvidence, scale: Scale) -> Option<f64> {
    match scale {
        Scale::Log => geometric_mean(&arm.trial_values).ok(),
        Scale::Arithmetic => mean(&arm.trial_values),
    }
}

pub(super) fn scale_of(analysis: Analysis) -> Scale {
    match analysis {
        Analysis::Log { .. } => Scale::Log,
        Analysis::Arithmetic { .. } => Scale::Arithmetic,
    }
}

/// Every trial of one arm lies beyond every trial of the other (at least 3 each): the trials
/// agree on the direction of the change, none of them carries it alone.
fn trials_agree(point: &PointComparison) -> bool {
    let (b, c) = (&point.baseline.trial_values, &point.candidate.trial_values);
    if b.len() < 3 || c.len() < 3 {
        return false;
    }
    let lo = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    lo(c) > hi(b) || hi(c) < lo(b)
}

/// **implausible**: `|ratio − 1|` above `settings.implausible_change` (50%), or an arm's
/// value outside the prediction interval of its earlier runs. Look. A large change is not
/// flagged when servebench already checked what the flag would ask: every server start of
/// both arms passed its verify rules (the variant was in effect) and the trials agree (each
/// of one arm beyond each of the other); when only one of the two holds, the flag says which.
pub fn implausible(
    point: &PointComparison,
    metric: &MetricSettings,
    settings: &RuleSettings,
) -> Option<Flag> {
    let scale = scale_of(metric.analysis);
    let mut reasons = Vec::new();
    let base = arm_center(&point.baseline, scale);
    let cand = arm_center(&point.candidate, scale);
    let verified = point.baseline.verified && point.candidate.verified;
    let agree = trials_agree(point);
    if let (Some(b), Some(c)) = (base, cand)
        && b != 0.0
    {
        let change = c / b - 1.0;
        if change.abs() > settings.implausible_change && !(verified && agree) {
            let checked = match (verified, agree) {
                (true, _) => {
                    "; every server start passed its verify rules, but the arms' \
                              trials overlap"
                }
                (false, true) => {
                    "; the trials agree, but no verify rule showed each start \
                                  running its variant"
                }
                (false, false) => "",
            };
            reasons.push(format!(
                "candidate/baseline = {:.3} ({}), beyond ±{}{checked}",
                c / b,
                pct(change),
                pct_plain(settings.implausible_change)
            ));
        }
    }
    for (name, arm, center) in [
        ("baseline", &point.baseline, base),
        ("candidate", &point.candidate, cand),
    ] {
        let (Some(value), true) = (center, arm.history.len() >= 3) else {
            continue;
        };
        if value <= 0.0 {
            continue;
        }
        if let Ok(pi) = log_prediction_interval(&arm.history, settings.prediction_level)
            && !pi.contains(value)
        {
            reasons.push(format!(
                "the {name} value {value:.4} lies outside the {} prediction interval \
                 [{:.4}, {:.4}] of {} earlier runs with the same fingerprint",
                pct_plain(settings.prediction_level),
                pi.lower,
                pi.upper,
                arm.history.len()
            ));
        }
    }
    if reasons.is_empty() {
        return None;
    }
    Some(
        Flag::new(
            FlagId::Implausible,
            FlagLevel::Look,
            format!("{} at {}: {}", metric.name, point.label, reasons.join("; ")),
            if verified {
                "the variant was in effect (its verify rules passed at every start): check \
                 that the workload was identical, and confirm with both arms re-measured in \
                 one session before believing it"
            } else {
                "check that the variant was really in effect and the workload identical \
                 (server log, argv; a verify rule proves the first at every start), and \
                 confirm with both arms re-measured in one session before believing it"
            },
        )
        .threatening(vec![threat(metric, point, None)]),
    )
}

/// A value's distance from a reference on the analysis scale: `|ln x − ln r|` (log) or
/// `|x − r|` (arithmetic); signed so that positive means *worse* by the metric's direction.
pub(super) fn worse_by(x: f64, reference: f64, scale: Scale, direction: Direction) -> f64 {
    let d = match scale {
        Scale::Log if x > 0.0 && reference > 0.0 => x.ln() - reference.ln(),
        Scale::Log => return 0.0,
        Scale::Arithmetic => x - reference,
    };
    if direction.is_better(d) {
        -d.abs()
    } else {
        d.abs()
    }
}

/// **load-not-sustained**: at a closed-loop point, the share of each trial during which the
/// client held the in-flight count at ≥ 90% of the limit while requests were still waiting
/// (`TrialCheck::limit_held_fraction`) is judged on its mean over the point's trials (both
/// arms) with a t interval at `1 − α`, each side widened to at least
/// `settings.limit_held_grey` (0.1) so that identical trials do not make a knife edge:
/// * the whole interval below `min_limit_held` (one half) → **re-baseline**: the trials
///   measure ramp-up and drain, not the load the point names (a one-wave trial — 256
///   requests at c=256 — holds the limit for none of its time; k equal waves hold it for
///   about (k − 1)/k);
/// * the interval around one half → **look**: the point sits at the edge (two waves, or
///   nearly), and two runs of it could read the held share either side of one half;
/// * the whole interval at or above one half → nothing.
///
/// Points without the evidence (open loop, imported results) are not checked. The flag is
/// about the point, whatever the metric: the caller says which verdicts it threatens.
pub fn load_not_sustained(
    label: &str,
    baseline: &[TrialCheck],
    candidate: &[TrialCheck],
    settings: &RuleSettings,
) -> Option<Flag> {
    let held: Vec<f64> = baseline
        .iter()
        .chain(candidate)
        .filter_map(|t| t.limit_held_fraction)
        .filter(|f| f.is_finite())
        .collect();
    let m = mean(&held)?;
    let grey = settings.limit_held_grey.max(0.0);
    let half = if held.len() >= 2 {
        crate::interval::mean_ci(&held, 1.0 - settings.alpha)
            .map(|e| (e.point - e.ci.lower).max(grey))
            .unwrap_or(grey)
    } else {
        grey
    };
    let (lo, hi) = ((m - half).max(0.0), (m + half).min(1.0));
    if lo >= settings.min_limit_held {
        return None;
    }
    let limit = baseline
        .iter()
        .chain(candidate)
        .find_map(|t| t.max_concurrency)
        .map_or_else(|| "the limit".to_owned(), |l| format!("the limit {l}"));
    let requests = baseline
        .iter()
        .chain(candidate)
        .map(|t| t.requests)
        .max()
        .unwrap_or(0);
    let waves = baseline
        .iter()
        .chain(candidate)
        .find_map(|t| t.max_concurrency)
        .filter(|c| *c > 0)
        .map(|c| format!(", {:.1} wave(s) of the limit", requests as f64 / c as f64))
        .unwrap_or_default();
    let held_words = format!(
        "the client held {limit} in flight for a mean {} [{}, {}] of each trial ({} trials; \
         {requests} requests per trial at most{waves})",
        pct_plain(m),
        pct_plain(lo),
        pct_plain(hi),
        held.len()
    );
    let action = "give the point more requests (several times the concurrency limit, so that \
                  it holds the limit for most of the trial: e.g. `sweep.include[].requests`) \
                  and re-run";
    if hi < settings.min_limit_held {
        Some(Flag::new(
            FlagId::LoadNotSustained,
            FlagLevel::ReBaseline,
            format!(
                "{label}: {held_words}: below {} throughout — the trials measure ramp-up and \
                 drain, not the load the point names",
                pct_plain(settings.min_limit_held)
            ),
            action,
        ))
    } else {
        Some(Flag::new(
            FlagId::LoadNotSustained,
            FlagLevel::Look,
            format!(
                "{label}: {held_words}: at the edge of {} — the point is close to one wave \
                 per trial at a time, and another run may read it either side",
                pct_plain(settings.min_limit_held)
            ),
            action,
        ))
    }
}

pub use super::multiplicity::{multiplicity, multiplicity_applied};

#[cfg(test)]
mod threat_tests {
    use super::*;

    #[test]
    fn what_is_at_stake_sets_the_level() {
        use Verdict::*;
        let re = Some(FlagLevel::ReBaseline);
        let look = Some(FlagLevel::Look);
        // The same verdict either way: no flag.
        assert_eq!(threat_level(Improved, Some(Improved)), None);
        // A decided claim that would not stand: re-baseline.
        assert_eq!(threat_level(Improved, Some(LikelyImproved)), re);
        assert_eq!(threat_level(Equivalent, Some(Inconclusive)), re);
        assert_eq!(threat_level(Regressed, None), re);
        // A likely direction that would be lost or reversed: re-baseline.
        assert_eq!(threat_level(LikelyRegressed, Some(Equivalent)), re);
        assert_eq!(threat_level(LikelyImproved, Some(Inconclusive)), re);
        assert_eq!(threat_level(LikelyImproved, Some(Regressed)), re);
        // Only a decision missed: look.
        assert_eq!(threat_level(LikelyImproved, Some(Improved)), look);
        assert_eq!(threat_level(Inconclusive, Some(Equivalent)), look);
        assert_eq!(threat_level(Inconclusive, Some(Regressed)), look);
        // An inconclusive cell that would only lean: nothing.
        assert_eq!(threat_level(Inconclusive, Some(LikelyImproved)), None);
        assert_eq!(threat_level(Inconclusive, None), None);
    }
}
