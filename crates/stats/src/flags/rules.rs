//! The per-point and per-comparison rules of STATISTICS.md's flag table (the sweep-level rule
//! and the crossover finding live in `sweep`). Each is a pure function of its evidence.

use crate::error::StatsError;
use crate::flags::evidence::{
    Analysis, ArmEvidence, ComparisonContext, MetricSettings, NamedP, PointComparison,
    RuleSettings, TrialCheck,
};
use crate::flags::{Flag, FlagId, FlagLevel, fmt_p, p_clause, pct, pct_plain, rerun_action};
use crate::holm::{expected_false_alarms, holm_adjust};
use crate::interval::log_prediction_interval;
use crate::mann_whitney::min_attainable_p;
use crate::order_stat::min_requests_for_quantile;
use crate::robust::{outlier_cutoff, robust_z};
use crate::spearman::trend;
use crate::summary::{geometric_mean, mean};
use crate::verdict::Scale;

/// Trials per arm to recommend in re-run actions: the most any point needs to resolve the
/// metric's margin at its observed spread (`ArmComparison::trials_for_margin`), and at least
/// `settings.warn_trials`.
pub fn recommended_trials(points: &[PointComparison], settings: &RuleSettings) -> u64 {
    points
        .iter()
        .filter_map(|p| p.comparison.as_ref().and_then(|c| c.trials_for_margin))
        .max()
        .unwrap_or(0)
        .max(settings.warn_trials as u64)
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

/// **too-few-trials**: fewer than 3 trials in an arm (no CI: re-baseline) or fewer than 5
/// (a warning, level look).
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
    let n = na.min(nb);
    let counts = format!(
        "{} at {}: {na} baseline and {nb} candidate trial(s)",
        metric.name, point.label
    );
    if n < settings.min_trials {
        Some(Flag::new(
            FlagId::TooFewTrials,
            FlagLevel::ReBaseline,
            format!(
                "{counts}; below {} there is no confidence interval",
                settings.min_trials
            ),
            rerun_action(trials_per_arm),
        ))
    } else if n < settings.warn_trials {
        Some(Flag::new(
            FlagId::TooFewTrials,
            FlagLevel::Look,
            format!(
                "{counts}; below {} the interval is wide (the smallest p a Mann–Whitney test \
                 can reach here is {})",
                settings.warn_trials,
                fmt_p(min_attainable_p(na, nb))
            ),
            format!("prefer at least {} trials per arm", settings.warn_trials),
        ))
    } else {
        None
    }
}

/// **underpowered**: an arm's CV above the metric's limit, or the minimum detectable effect
/// at these counts above the threshold. Re-baseline.
pub fn underpowered(point: &PointComparison, metric: &MetricSettings) -> Option<Flag> {
    let c = point.comparison.as_ref()?;
    let mut reasons = Vec::new();
    for (arm, cv) in [("baseline", c.cv_baseline), ("candidate", c.cv_candidate)] {
        if let Some(cv) = cv.filter(|cv| *cv > metric.cv_limit) {
            reasons.push(format!(
                "the {arm} CV is {} (limit {})",
                pct_plain(cv),
                pct_plain(metric.cv_limit)
            ));
        }
    }
    if c.mde > c.margin {
        let (mde, margin) = match c.scale {
            Scale::Log => (pct_plain(c.mde.exp_m1()), pct_plain(c.margin.exp_m1())),
            Scale::Arithmetic => (format!("{:.4}", c.mde), format!("{:.4}", c.margin)),
        };
        reasons.push(format!(
            "the minimum detectable effect at {} vs {} trials is {mde}, above the threshold \
             {margin}",
            c.n_baseline, c.n_candidate
        ));
    }
    if reasons.is_empty() {
        return None;
    }
    let action = match c.trials_for_margin {
        Some(n) => format!(
            "reduce the noise (longer trials, pinned clocks) or {}",
            rerun_action(n)
        ),
        None => "reduce the noise (longer trials, pinned clocks) and re-run".to_string(),
    };
    Some(Flag::new(
        FlagId::Underpowered,
        FlagLevel::ReBaseline,
        format!("{} at {}: {}", metric.name, point.label, reasons.join("; ")),
        action,
    ))
}

fn arm_center(arm: &ArmEvidence, scale: Scale) -> Option<f64> {
    match scale {
        Scale::Log => geometric_mean(&arm.trial_values).ok(),
        Scale::Arithmetic => mean(&arm.trial_values),
    }
}

/// **implausible**: `|ratio − 1|` above `settings.implausible_change` (50%), or an arm's
/// value outside the prediction interval of its earlier runs. Look.
pub fn implausible(
    point: &PointComparison,
    metric: &MetricSettings,
    settings: &RuleSettings,
) -> Option<Flag> {
    let scale = match metric.analysis {
        Analysis::Log { .. } => Scale::Log,
        Analysis::Arithmetic { .. } => Scale::Arithmetic,
    };
    let mut reasons = Vec::new();
    let base = arm_center(&point.baseline, scale);
    let cand = arm_center(&point.candidate, scale);
    if let (Some(b), Some(c)) = (base, cand)
        && b != 0.0
    {
        let change = c / b - 1.0;
        if change.abs() > settings.implausible_change {
            reasons.push(format!(
                "candidate/baseline = {:.3} ({}), beyond ±{}",
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
    Some(Flag::new(
        FlagId::Implausible,
        FlagLevel::Look,
        format!("{} at {}: {}", metric.name, point.label, reasons.join("; ")),
        "check that the variant was really in effect and the workload identical (server log, \
         argv), and confirm with both arms re-measured in one session before believing it",
    ))
}

/// **drift**: an arm's trial values trend with run order (Spearman p < `drift_p`), a trial
/// trends within itself (p < `drift_p` and |ρ| ≥ `within_trial_min_rho`), or the first trial
/// is an outlier (robust z > `outlier_z`: warm-up too short). Re-baseline.
pub fn drift(
    point: &PointComparison,
    metric: &MetricSettings,
    settings: &RuleSettings,
    trials_per_arm: u64,
) -> Vec<Flag> {
    let mut flags = Vec::new();
    for (name, arm) in [
        ("baseline", &point.baseline),
        ("candidate", &point.candidate),
    ] {
        let mut reasons = Vec::new();
        if let Ok(c) = trend(&arm.trial_values)
            && c.p < settings.drift_p
        {
            reasons.push(format!(
                "the values trend with run order across {} trials (Spearman ρ = {:.2}, \
                 p {})",
                c.n,
                c.rho,
                p_clause(c.p)
            ));
        }
        for t in &arm.trials {
            if let Some(c) = t.within_trial_trend
                && c.p < settings.drift_p
                && c.rho.abs() >= settings.within_trial_min_rho
            {
                reasons.push(format!(
                    "trial {} trends with request order (Spearman ρ = {:.2}, p {}, {} requests)",
                    t.trial,
                    c.rho,
                    p_clause(c.p),
                    c.n
                ));
            }
        }
        let cutoff = outlier_cutoff(arm.trial_values.len(), settings.outlier_z);
        if arm.trial_values.len() >= 4
            && let Ok(z) = robust_z(&arm.trial_values)
            && z[0] > cutoff
        {
            reasons.push(format!(
                "the first trial ({:.4}) is an outlier (robust z = {:.1} > {cutoff:.1}): warm-up too short",
                arm.trial_values[0], z[0]
            ));
        }
        if !reasons.is_empty() {
            flags.push(Flag::new(
                FlagId::Drift,
                FlagLevel::ReBaseline,
                format!(
                    "{} at {}, {name}: {}",
                    metric.name,
                    point.label,
                    reasons.join("; ")
                ),
                format!(
                    "lengthen the warm-up and check for thermal, cache or background effects; \
                     then {}",
                    rerun_action(trials_per_arm)
                ),
            ));
        }
    }
    flags
}

/// **outlier-trial**: a trial (other than the first, which `drift` covers) with robust
/// z = 0.6745·|x − median|/MAD above `outlier_z`. Flagged, never dropped. Re-baseline.
pub fn outlier_trials(
    point: &PointComparison,
    metric: &MetricSettings,
    settings: &RuleSettings,
) -> Vec<Flag> {
    let mut flags = Vec::new();
    for (name, arm) in [
        ("baseline", &point.baseline),
        ("candidate", &point.candidate),
    ] {
        let Ok(z) = robust_z(&arm.trial_values) else {
            continue;
        };
        let cutoff = outlier_cutoff(arm.trial_values.len(), settings.outlier_z);
        for (i, zi) in z.iter().enumerate().skip(1) {
            if *zi > cutoff {
                flags.push(Flag::new(
                    FlagId::OutlierTrial,
                    FlagLevel::ReBaseline,
                    format!(
                        "{} at {}, {name} trial {i}: {:.4} has robust z = {zi:.1} (> {cutoff:.1}, \
                         the cutoff for {} trials) against the other trials (median {:.4})",
                        metric.name,
                        point.label,
                        arm.trial_values[i],
                        arm.trial_values.len(),
                        crate::percentile::median(&arm.trial_values).unwrap_or(f64::NAN)
                    ),
                    "inspect that trial (server log, errors, host load); it stays in the \
                     analysis — re-run rather than drop it",
                ));
            }
        }
    }
    flags
}

fn trial_problems(t: &TrialCheck, settings: &RuleSettings) -> Vec<String> {
    let mut out = Vec::new();
    if t.errors > 0 {
        out.push(format!("{} failed request(s)", t.errors));
    }
    if let (Some(peak), Some(max)) = (t.peak_concurrency, t.max_concurrency)
        && peak > max
    {
        out.push(format!("peak concurrency {peak} above the limit {max}"));
    }
    if let (Some(got), Some(want)) = (t.achieved_rate, t.target_rate)
        && want > 0.0
        && got / want < settings.min_rate_fraction
    {
        out.push(format!(
            "achieved rate {got:.3}/s is {} of the target {want:.3}/s (below {})",
            pct_plain(got / want),
            pct_plain(settings.min_rate_fraction)
        ));
    }
    if let Some(r) = t.output_token_ratio {
        let (lo, hi) = settings.output_token_range;
        if !(lo..=hi).contains(&r) {
            out.push(format!(
                "output tokens are {} of requested (allowed {}–{})",
                pct_plain(r),
                pct_plain(lo),
                pct_plain(hi)
            ));
        }
    }
    if let Some(q) = t.reported_quantile
        && let Some(need) = min_requests_for_quantile(q, settings.reportable_confidence)
        && t.requests < need
    {
        out.push(format!(
            "{} requests cannot support the reported p{} ({need} needed)",
            t.requests,
            q * 100.0
        ));
    }
    out
}

/// **invalid-trial**: errors, peak concurrency above the limit, achieved rate below 98% of
/// target, output tokens outside 90–110% of requested, or fewer requests than the reported
/// percentile needs. One flag per invalid trial. Re-baseline.
pub fn invalid_trials(
    point: &PointComparison,
    metric: &MetricSettings,
    settings: &RuleSettings,
) -> Vec<Flag> {
    let mut flags = Vec::new();
    for (name, arm) in [
        ("baseline", &point.baseline),
        ("candidate", &point.candidate),
    ] {
        for t in &arm.trials {
            let problems = trial_problems(t, settings);
            if !problems.is_empty() {
                flags.push(Flag::new(
                    FlagId::InvalidTrial,
                    FlagLevel::ReBaseline,
                    format!(
                        "{} at {}, {name} trial {}: {}",
                        metric.name,
                        point.label,
                        t.trial,
                        problems.join("; ")
                    ),
                    "fix the cause (errors, limiter, load generator, ignore_eos / max tokens, \
                     request count) and re-run the trial",
                ));
            }
        }
    }
    flags
}

/// **multiplicity**: among `tests` (every metric × level of a comparison), some result is
/// significant at α before Holm's correction but not after. Says how many false alarms m·α
/// tests would give by chance. Look.
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
    let lost: Vec<String> = tests
        .iter()
        .zip(&adjusted)
        .filter(|(t, adj)| t.p < alpha && **adj >= alpha)
        .map(|(t, adj)| format!("{} (p = {} → {})", t.label, fmt_p(t.p), fmt_p(*adj)))
        .collect();
    Ok(Some(Flag::new(
        FlagId::Multiplicity,
        FlagLevel::Look,
        format!(
            "{} tests at α = {alpha}: {expected:.2} false alarm(s) expected by chance; {before} \
             significant before Holm's correction, {after} after; no longer significant: {}",
            tests.len(),
            lost.join(", ")
        ),
        "read the Holm-adjusted results as the finding; confirm the others with a dedicated \
         re-run of those metrics",
    )))
}
