//! The rules that judge single trials of a cell — drift within an arm, outlier trials and
//! invalid trials (docs/statistics-method.md, "Validity flags"). Each recomputes the cell's
//! verdict without what it found and fires only when the verdict differs.

use crate::flags::evidence::{
    ArmEvidence, MetricSettings, PointComparison, RuleSettings, TrialCheck,
};
use crate::flags::{Flag, FlagId, FlagLevel, p_clause, pct, pct_plain, rerun_action};
use crate::order_stat::min_requests_for_quantile;
use crate::robust::{dixon_cutoff, dixon_q, robust_z};
use crate::spearman::trend;
use crate::verdict::{Direction, Scale, Verdict};

use super::rules::{otherwise_words, scale_of, threat, threat_level, worse_by};

/// The trials of an arm that stand out as outliers, with the test's words: for 3–10 trials
/// the most extreme one when Dixon's Q exceeds its 95% cutoff for n (two trials equally far
/// from the rest are a spread, not an outlier); for more trials, every one whose robust z
/// exceeds `outlier_z`.
fn outliers(values: &[f64], settings: &RuleSettings) -> Vec<(usize, String)> {
    let n = values.len();
    if let Some(cutoff) = dixon_cutoff(n) {
        return match dixon_q(values) {
            Some((i, q)) if q > cutoff => vec![(
                i,
                format!("Dixon's Q = {q:.2} > {cutoff:.3}, the 95% cutoff for {n} trials"),
            )],
            _ => Vec::new(),
        };
    }
    let Ok(z) = robust_z(values) else {
        return Vec::new();
    };
    z.iter()
        .enumerate()
        .filter(|(_, zi)| **zi > settings.outlier_z)
        .map(|(i, zi)| (i, format!("robust z = {zi:.1} > {}", settings.outlier_z)))
        .collect()
}

/// A practical floor on the analysis scale: `share` × the margin (`ln(1 + θ)` on the log
/// scale, `M` on the arithmetic scale).
fn floor(point: &PointComparison, share: f64) -> Option<f64> {
    point.comparison.as_ref().map(|c| c.margin * share)
}

/// The same values with the one at `skip` replaced by the median of the others: the
/// counterfactual of "that trial was ordinary". Replacing keeps the trial count, so the
/// verdict cannot change merely because one trial fewer widens the t interval (with 5
/// trials, dropping one moves the 97.5% t quantile from 2.78 to 3.18).
fn ordinary(values: &[f64], skip: usize) -> Vec<f64> {
    let others: Vec<f64> = values
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != skip)
        .map(|(_, v)| *v)
        .collect();
    let median = crate::percentile::median(&others).unwrap_or(values[skip]);
    let mut out = values.to_vec();
    out[skip] = median;
    out
}

/// Least-squares slope of `values` (on the analysis scale) against their position.
fn slope(values: &[f64], scale: Scale) -> Option<f64> {
    let ys: Vec<f64> = match scale {
        Scale::Log if values.iter().all(|v| *v > 0.0) => values.iter().map(|v| v.ln()).collect(),
        Scale::Log => return None,
        Scale::Arithmetic => values.to_vec(),
    };
    let n = ys.len() as f64;
    if ys.len() < 3 {
        return None;
    }
    let mx = (n - 1.0) / 2.0;
    let my = ys.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        let dx = i as f64 - mx;
        sxy += dx * (y - my);
        sxx += dx * dx;
    }
    Some(sxy / sxx)
}

/// The values with a linear trend removed, brought back to the first trial's state: on the
/// log scale `xᵢ·exp(−b·i)`, on the arithmetic scale `xᵢ − b·i`.
fn detrended(values: &[f64], b: f64, scale: Scale) -> Vec<f64> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| match scale {
            Scale::Log => v * (-b * i as f64).exp(),
            Scale::Arithmetic => v - b * i as f64,
        })
        .collect()
}

/// Arm names and evidence, baseline first.
fn arms(point: &PointComparison) -> [(&'static str, &ArmEvidence); 2] {
    [
        ("baseline", &point.baseline),
        ("candidate", &point.candidate),
    ]
}

/// The verdict with one arm's values replaced.
fn verdict_replacing(
    point: &PointComparison,
    direction: Direction,
    arm: usize,
    values: &[f64],
) -> Option<Verdict> {
    if arm == 0 {
        point.verdict_with(direction, values, &point.candidate.trial_values)
    } else {
        point.verdict_with(direction, &point.baseline.trial_values, values)
    }
}

/// How a value is written in a flag: 4 significant figures.
fn val(v: f64) -> String {
    format!("{v:.4}")
}

/// How far `x` lies from `reference`, in words: `−40.5%` (log scale: `x/reference − 1`) or
/// `−0.0123` (arithmetic: the difference).
fn deviation_words(x: f64, reference: f64, scale: Scale) -> String {
    match scale {
        Scale::Log => pct(x / reference - 1.0),
        Scale::Arithmetic => format!("{:+.4}", x - reference),
    }
}

/// The change a distance on the analysis scale stands for, in words (`8.1%`, `0.0123`).
fn size_words(distance: f64, scale: Scale) -> String {
    match scale {
        Scale::Log => pct_plain(distance.exp_m1()),
        Scale::Arithmetic => format!("{distance:.4}"),
    }
}

/// **drift**, across trials: an arm's trial values trend with run order (exact Spearman
/// p < `drift_p`) by more than the practical floor over the run (least-squares slope × the
/// trials' span), and removing that trend (every drifting arm brought back to its first
/// trial's state) changes the verdict; or the first trial is worse than the median of the
/// rest by more than the floor, is an outlier among the arm's trials (robust z above the
/// cutoff for n, as `outlier_trials` reads it: a first trial merely the slowest of five by
/// a little is chance, not a cold start) and the verdict without it differs. Within a trial: a request-order trend (p < `within_trial_p`,
/// |ρ| ≥ `within_trial_min_rho`) where the evidence carries one. Re-baseline.
pub fn drift(
    point: &PointComparison,
    metric: &MetricSettings,
    settings: &RuleSettings,
    trials_per_arm: u64,
) -> Vec<Flag> {
    let mut flags = Vec::new();
    let scale = scale_of(point.analysis);
    let action = format!(
        "lengthen the warm-up and check for thermal, cache or background effects; then {}",
        rerun_action(trials_per_arm)
    );
    let Some(verdict) = point.verdict() else {
        return flags;
    };
    let (Some(trend_floor), Some(trial_floor)) = (
        floor(point, settings.practical_floor),
        floor(point, settings.outlier_floor),
    ) else {
        return flags;
    };

    // Across trials: each arm's trend, then one verdict with every drifting arm detrended.
    let mut drifting: Vec<(usize, String, f64)> = Vec::new();
    for (i, (name, arm)) in arms(point).into_iter().enumerate() {
        let Ok(c) = trend(&arm.trial_values) else {
            continue;
        };
        let Some(b) = slope(&arm.trial_values, scale) else {
            continue;
        };
        let size = b.abs() * (arm.trial_values.len() - 1) as f64;
        if c.p < settings.drift_p && size > trend_floor {
            drifting.push((
                i,
                format!(
                    "the {name} trend with run order across {} trials (Spearman ρ = {:.2}, \
                     p {}) moves it by {} over the run",
                    c.n,
                    c.rho,
                    p_clause(c.p),
                    size_words(size, scale)
                ),
                b,
            ));
        }
    }
    if !drifting.is_empty() {
        let mut base = point.baseline.trial_values.clone();
        let mut cand = point.candidate.trial_values.clone();
        for (arm, _, b) in &drifting {
            if *arm == 0 {
                base = detrended(&base, *b, scale);
            } else {
                cand = detrended(&cand, *b, scale);
            }
        }
        let otherwise = point.verdict_with(metric.direction, &base, &cand);
        if let Some(level) = threat_level(verdict, otherwise) {
            let reasons: Vec<&str> = drifting.iter().map(|(_, r, _)| r.as_str()).collect();
            flags.push(
                Flag::new(
                    FlagId::Drift,
                    level,
                    format!(
                        "{} at {}: {}; verdict {} ({})",
                        metric.name,
                        point.label,
                        reasons.join("; "),
                        verdict.as_str(),
                        otherwise_words("with the trend removed", otherwise)
                    ),
                    action.clone(),
                )
                .threatening(vec![threat(metric, point, otherwise)]),
            );
        }
    }

    // The first trial against the rest.
    for (i, (name, arm)) in arms(point).into_iter().enumerate() {
        let values = &arm.trial_values;
        if values.len() < 4 {
            continue;
        }
        let rest = &values[1..];
        let Some(med) = crate::percentile::median(rest) else {
            continue;
        };
        let worse = worse_by(values[0], med, scale, metric.direction);
        let Some((_, test)) = outliers(values, settings)
            .into_iter()
            .find(|(i, _)| *i == 0)
        else {
            continue;
        };
        if worse <= trial_floor {
            continue;
        }
        let otherwise = verdict_replacing(point, metric.direction, i, &ordinary(values, 0));
        let Some(level) = threat_level(verdict, otherwise) else {
            continue;
        };
        flags.push(
            Flag::new(
                FlagId::Drift,
                level,
                format!(
                    "{} at {}, {name}: the first trial ({}) is {} against the median of the \
                     rest ({}), an outlier worse by more than 1.5 θ ({test}; warm-up too \
                     short, or a cold first start); verdict {} ({})",
                    metric.name,
                    point.label,
                    val(values[0]),
                    deviation_words(values[0], med, scale),
                    val(med),
                    verdict.as_str(),
                    otherwise_words("with that trial at the median of the others", otherwise)
                ),
                action.clone(),
            )
            .threatening(vec![threat(metric, point, otherwise)]),
        );
    }

    // Within trials (when the evidence carries request-order trends).
    for (name, arm) in arms(point) {
        for t in &arm.trials {
            if let Some(c) = t.within_trial_trend
                && c.p < settings.within_trial_p
                && c.rho.abs() >= settings.within_trial_min_rho
            {
                flags.push(
                    Flag::new(
                        FlagId::Drift,
                        FlagLevel::ReBaseline,
                        format!(
                            "{} at {}, {name}: trial {} trends with request order (Spearman \
                             ρ = {:.2}, p {}, {} requests)",
                            metric.name,
                            point.label,
                            t.trial,
                            c.rho,
                            p_clause(c.p),
                            c.n
                        ),
                        action.clone(),
                    )
                    .threatening(vec![threat(metric, point, None)]),
                );
            }
        }
    }
    flags
}

/// **outlier-trial**: a trial (other than the first, which `drift` covers) that stands out
/// (Dixon's Q above its 95% cutoff for 3–10 trials, robust z above `outlier_z` for more),
/// **and** lies farther from the arm's median than the practical floor (1.5 θ: with four
/// nearly equal trials a 1% deviation is no outlier), **and** the cell's verdict with that
/// trial at the median of the others differs. Flagged, never dropped; re-baseline or look
/// by what is at stake (`threat_level`).
pub fn outlier_trials(
    point: &PointComparison,
    metric: &MetricSettings,
    settings: &RuleSettings,
) -> Vec<Flag> {
    let mut flags = Vec::new();
    let scale = scale_of(point.analysis);
    let (Some(verdict), Some(floor)) = (point.verdict(), floor(point, settings.outlier_floor))
    else {
        return flags;
    };
    for (arm_index, (name, arm)) in arms(point).into_iter().enumerate() {
        let values = &arm.trial_values;
        let Some(med) = crate::percentile::median(values) else {
            continue;
        };
        for (i, test) in outliers(values, settings) {
            if i == 0 {
                continue;
            }
            let distance = worse_by(values[i], med, scale, metric.direction).abs();
            if distance <= floor {
                continue;
            }
            let otherwise =
                verdict_replacing(point, metric.direction, arm_index, &ordinary(values, i));
            let Some(level) = threat_level(verdict, otherwise) else {
                continue;
            };
            flags.push(
                Flag::new(
                    FlagId::OutlierTrial,
                    level,
                    format!(
                        "{} at {}, {name} trial {i}: {} is {} against the arm's median {} \
                         ({test}); verdict {} ({})",
                        metric.name,
                        point.label,
                        val(values[i]),
                        deviation_words(values[i], med, scale),
                        val(med),
                        verdict.as_str(),
                        otherwise_words("with that trial at the median of the others", otherwise)
                    ),
                    "inspect that trial (server log, errors, host load); it stays in the \
                     analysis — re-run rather than drop it",
                )
                .threatening(vec![threat(metric, point, otherwise)]),
            );
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
/// percentile needs. One flag per invalid trial: re-baseline when the verdict without the
/// arm's invalid trials differs (or cannot be computed), or when the peak concurrency broke
/// the limit (a load-generator bug taints every number); otherwise look (the trial is
/// invalid, but the answer does not depend on it).
pub fn invalid_trials(
    point: &PointComparison,
    metric: &MetricSettings,
    settings: &RuleSettings,
) -> Vec<Flag> {
    let mut flags = Vec::new();
    for (arm_index, (name, arm)) in arms(point).into_iter().enumerate() {
        let invalid: Vec<(&TrialCheck, Vec<String>)> = arm
            .trials
            .iter()
            .map(|t| (t, trial_problems(t, settings)))
            .filter(|(_, p)| !p.is_empty())
            .collect();
        if invalid.is_empty() {
            continue;
        }
        let skip: Vec<usize> = invalid.iter().filter_map(|(t, _)| t.value_index).collect();
        let kept: Vec<f64> = arm
            .trial_values
            .iter()
            .enumerate()
            .filter(|(i, _)| !skip.contains(i))
            .map(|(_, v)| *v)
            .collect();
        let verdict = point.verdict();
        let otherwise = verdict_replacing(point, metric.direction, arm_index, &kept);
        let changes = verdict.is_none() || otherwise != verdict;
        for (t, problems) in invalid {
            let broke_limit = matches!(
                (t.peak_concurrency, t.max_concurrency),
                (Some(peak), Some(max)) if peak > max
            );
            let level = if changes || broke_limit {
                FlagLevel::ReBaseline
            } else {
                FlagLevel::Look
            };
            let consequence = match (verdict, changes) {
                (Some(v), true) => format!(
                    "; verdict {} ({})",
                    v.as_str(),
                    otherwise_words("without the arm's invalid trials", otherwise)
                ),
                (Some(v), false) => format!(
                    "; the verdict ({}) is the same without the arm's invalid trials",
                    v.as_str()
                ),
                (None, _) => String::new(),
            };
            flags.push(
                Flag::new(
                    FlagId::InvalidTrial,
                    level,
                    format!(
                        "{} at {}, {name} trial {}: {}{consequence}",
                        metric.name,
                        point.label,
                        t.trial,
                        problems.join("; ")
                    ),
                    "fix the cause (errors, limiter, load generator, ignore_eos / max tokens, \
                     request count) and re-run the trial",
                )
                .threatening(vec![threat(metric, point, otherwise)]),
            );
        }
    }
    flags
}
