//! The re-run against the published run. Each variant of the published run is compared
//! with the same variant of the new run by `compare_across` (published = baseline arm, new =
//! candidate arm: the ratio is new/published, the fingerprints are compared field by field,
//! `stale-baseline` is always raised); each value is then judged by
//! `servebench_stats::reproduce::value_outcome`. The published A/B claims (every variant
//! against the baseline variant, within the published run) are judged by
//! `reproduce::claim_outcome` against the same comparison within the new run.

use serde::{Deserialize, Serialize};
use servebench_stats::Estimate;
use servebench_stats::advice::Settle;
use servebench_stats::flags::{FingerprintDifference, Flag, FlagId, FlagLevel};
use servebench_stats::reproduce::{Claim, Reproduction, claim_outcome, value_outcome};
use servebench_stats::verdict::Scale;

use crate::render::distinct_flags;
use crate::words::advice_sentence;
use crate::{
    CompareError, CompareOptions, LoadedResult, MetricReport, PointReport, VerdictKind,
    compare_across, compare_within,
};

/// Format tag of the JSON report; changes on any incompatible change. Version 2: advice
/// (`ValueRow::settle`, `RerunReport::advice`) replaces `trials_per_arm`, verdicts say
/// likely-improved / likely-regressed, flags say which verdicts they threaten, and
/// stale-baseline is no longer listed (a re-run is another session by design).
pub const RERUN_FORMAT: &str = "servebench-rerun/2";

/// One published value checked against the re-run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueRow {
    /// Variant.
    pub variant: String,
    /// Short point label (`c=16`).
    pub point: String,
    /// Metric name.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Log (ratio) or arithmetic (difference).
    pub scale: Scale,
    /// θ.
    pub threshold: f64,
    /// Published mean (geometric on the log scale) with its interval, when computable.
    pub published: Option<Estimate>,
    /// Trials with a value in the published run.
    pub published_trials: usize,
    /// New mean with its interval.
    pub new: Option<Estimate>,
    /// Trials with a value in the re-run.
    pub new_trials: usize,
    /// new/published (log) or new − published (arithmetic), with its CI at 1 − α.
    pub change: Option<Estimate>,
    /// The outcome.
    pub outcome: Reproduction,
    /// For an inconclusive outcome with an interval: trials per arm that would settle it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Settle>,
    /// Why there is no interval, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_no_interval: Option<String>,
    /// Flags of this point (ids; evidence in the report's `flags`).
    pub flags: Vec<FlagId>,
    /// The change relative to the metric's common change (`levels`), with the interval of
    /// the cell's departure from it, when the levels were computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative: Option<Estimate>,
    /// The value rule on `relative`: the value judged with the common change taken out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_outcome: Option<Reproduction>,
}

/// One published A/B claim checked against the re-run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimRow {
    /// Candidate variant.
    pub candidate: String,
    /// Baseline variant.
    pub baseline: String,
    /// Short point label.
    pub point: String,
    /// Metric.
    pub metric: String,
    /// Published verdict and ratio.
    pub published_verdict: VerdictKind,
    /// Published candidate/baseline ratio (or difference).
    pub published_effect: Option<Estimate>,
    /// New verdict.
    pub new_verdict: VerdictKind,
    /// New ratio (or difference).
    pub new_effect: Option<Estimate>,
    /// The outcome.
    pub outcome: Reproduction,
}

/// Counts of outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Values reproduced.
    pub reproduced: usize,
    /// Values not reproduced.
    pub not_reproduced: usize,
    /// Values inconclusive.
    pub inconclusive: usize,
    /// Claims reproduced.
    pub claims_reproduced: usize,
    /// Claims not reproduced.
    pub claims_not_reproduced: usize,
    /// Claims inconclusive.
    pub claims_inconclusive: usize,
}

/// The whole re-run report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RerunReport {
    /// [`RERUN_FORMAT`].
    pub format: String,
    /// The published result file.
    pub published_file: String,
    /// Its run id.
    pub published_run: String,
    /// The new result file.
    pub new_file: String,
    /// Its run id.
    pub new_run: String,
    /// The spec hash both share.
    pub spec_hash: String,
    /// Significance level; intervals are at 1 − α.
    pub alpha: f64,
    /// One row per variant × point × metric.
    pub values: Vec<ValueRow>,
    /// One row per published A/B claim (variant × point × metric with a verdict).
    pub claims: Vec<ClaimRow>,
    /// Fields that differ between the published and the new run (host, accelerators,
    /// versions…).
    pub fingerprint_differences: Vec<FingerprintDifference>,
    /// Every flag raised, with its evidence, the verdicts it threatens and its action
    /// (deduplicated; stale-baseline left out: see [`RERUN_FORMAT`]).
    pub flags: Vec<Flag>,
    /// Advice for the inconclusive values, one sentence per variant and metric.
    pub advice: Vec<String>,
    /// Notes from the comparison.
    pub notes: Vec<String>,
    /// Levels apart from effects: per metric the change common to every arm and point, what
    /// moved apart from it, and the host probe's change beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<crate::levels::LevelsReport>,
    /// Each `${env.NAME}` whose recorded value differs between the published run and the
    /// re-run (`provenance.env`), in words; said before the tables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment: Vec<String>,
    /// Whether the outputs reproduced, when both runs carry equivalence probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<super::outputs::OutputsReproduction>,
    /// Counts.
    pub summary: Summary,
}

/// The value rule on the comparison's own verdict (no second reading of its interval), and
/// the advice compare gave for the cell when it is undecided.
fn outcome_of(p: &PointReport, m: &MetricReport) -> (Reproduction, Option<Settle>, Option<String>) {
    if p.effect.is_none() {
        return (Reproduction::Inconclusive, None, p.error.clone());
    }
    let outcome = value_outcome(p.verdict.verdict());
    let settle = m
        .advice
        .iter()
        .find(|a| a.point == p.label)
        .map(|a| a.settle)
        .filter(|_| outcome == Reproduction::Inconclusive);
    (outcome, settle, None)
}

fn claim_of(kind: VerdictKind) -> Option<Claim> {
    Claim::from_verdict(kind.verdict()?)
}

/// Claims: every published within-run comparison that made one, against the new run's.
fn claims(
    published: &LoadedResult,
    new: &LoadedResult,
    opts: &CompareOptions,
) -> Result<Vec<ClaimRow>, CompareError> {
    if published.result.spec.spec.variants.len() < 2 {
        return Ok(Vec::new());
    }
    let within = |lr: &LoadedResult| {
        compare_within(
            lr,
            &CompareOptions {
                baseline_variant: None,
                candidate_variant: None,
                ..opts.clone()
            },
        )
    };
    let (old, fresh) = (within(published)?, within(new)?);
    let mut rows = Vec::new();
    for oc in &old.comparisons {
        let Some(nc) = fresh
            .comparisons
            .iter()
            .find(|c| c.candidate.variant == oc.candidate.variant)
        else {
            continue;
        };
        for om in &oc.metrics {
            let Some(nm) = nc.metrics.iter().find(|m| m.metric == om.metric) else {
                continue;
            };
            for op in &om.points {
                let Some(claim) = claim_of(op.verdict) else {
                    continue;
                };
                let np = nm.points.iter().find(|p| p.point_label == op.point_label);
                let new_claim = np.and_then(|p| claim_of(p.verdict));
                rows.push(ClaimRow {
                    candidate: oc.candidate.variant.clone(),
                    baseline: oc.baseline.variant.clone(),
                    point: op.label.clone(),
                    metric: om.metric.clone(),
                    published_verdict: op.verdict,
                    published_effect: op.effect,
                    new_verdict: np.map_or(VerdictKind::NotComputed, |p| p.verdict),
                    new_effect: np.and_then(|p| p.effect),
                    outcome: claim_outcome(claim, new_claim),
                });
            }
        }
    }
    Ok(rows)
}

/// Judge `new` (the re-run) against `published`. `opts` picks metrics, θ and α (default:
/// the published spec's `compare` settings); its variant choices are ignored.
pub fn assess(
    published: &LoadedResult,
    new: &LoadedResult,
    opts: &CompareOptions,
) -> Result<RerunReport, CompareError> {
    let mut values = Vec::new();
    let mut advice = Vec::new();
    let mut raised: Vec<Flag> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut differences: Vec<FingerprintDifference> = Vec::new();
    let mut alpha = opts
        .alpha
        .unwrap_or(published.result.spec.spec.compare.alpha);
    for v in &published.result.spec.spec.variants {
        let o = CompareOptions {
            baseline_variant: Some(v.name.clone()),
            candidate_variant: Some(v.name.clone()),
            ..opts.clone()
        };
        let report = compare_across(published, new, &o)?;
        alpha = report.alpha;
        for c in &report.comparisons {
            for d in &c.fingerprint_differences {
                if !differences.contains(d) {
                    differences.push(d.clone());
                }
            }
            for n in &c.notes {
                if !notes.contains(n) {
                    notes.push(n.clone());
                }
            }
            raised.extend(c.flags.iter().cloned());
            for m in &c.metrics {
                raised.extend(m.flags.iter().cloned());
                let inconclusive: Vec<&str> = m
                    .points
                    .iter()
                    .filter(|p| outcome_of(p, m).0 == Reproduction::Inconclusive)
                    .map(|p| p.label.as_str())
                    .collect();
                let mut undecided = m.clone();
                undecided
                    .advice
                    .retain(|a| inconclusive.contains(&a.point.as_str()));
                if let Some(a) = advice_sentence(&undecided) {
                    advice.push(format!("{} {}: {a}", v.name, m.metric));
                }
                for p in &m.points {
                    let (outcome, settle, why) = outcome_of(p, m);
                    values.push(ValueRow {
                        variant: v.name.clone(),
                        point: p.label.clone(),
                        metric: m.metric.clone(),
                        unit: m.unit.clone(),
                        scale: m.scale,
                        threshold: m.threshold,
                        published: p.baseline,
                        published_trials: p.n_baseline,
                        new: p.candidate,
                        new_trials: p.n_candidate,
                        change: p.effect,
                        outcome,
                        settle,
                        why_no_interval: why,
                        flags: p.flags.clone(),
                        relative: None,
                        relative_outcome: None,
                    });
                }
            }
        }
    }
    // A re-run is another session by design: stale-baseline is its premise, not a threat.
    let flags: Vec<Flag> = distinct_flags(&raised)
        .into_iter()
        .filter(|f| f.id != FlagId::StaleBaseline)
        .cloned()
        .collect();
    let claims = claims(published, new, opts)?;
    let (specs, _, _) = crate::metric_specs(&published.result.spec, opts)?;
    let specs: Vec<_> = specs.iter().filter_map(|s| s.level_metric()).collect();
    let levels = crate::levels::between(&published.result, &new.result, &specs, alpha);
    for r in &mut values {
        let cell = levels
            .metrics
            .iter()
            .filter(|m| m.metric == r.metric)
            .flat_map(|m| &m.cells)
            .find(|c| c.variant == r.variant && c.point == r.point);
        if let Some(c) = cell {
            r.relative = Some(c.relative);
            r.relative_outcome = Some(c.outcome);
        }
    }
    let mut summary = Summary::default();
    for r in &values {
        match r.outcome {
            Reproduction::Reproduced => summary.reproduced += 1,
            Reproduction::NotReproduced => summary.not_reproduced += 1,
            Reproduction::Inconclusive => summary.inconclusive += 1,
        }
    }
    for c in &claims {
        match c.outcome {
            Reproduction::Reproduced => summary.claims_reproduced += 1,
            Reproduction::NotReproduced => summary.claims_not_reproduced += 1,
            Reproduction::Inconclusive => summary.claims_inconclusive += 1,
        }
    }
    let flags = host_only_look(flags, &differences, &summary, claims.len());
    Ok(RerunReport {
        format: RERUN_FORMAT.to_owned(),
        published_file: published.file.clone(),
        published_run: published.result.run_id.clone(),
        new_file: new.file.clone(),
        new_run: new.result.run_id.clone(),
        spec_hash: published.result.spec_hash.clone(),
        alpha,
        values,
        claims,
        fingerprint_differences: differences,
        flags,
        advice,
        notes,
        levels: Some(levels),
        environment: super::env::differences(&published.result, &new.result),
        outputs: super::outputs::outputs(published, new, alpha),
        summary,
    })
}

/// Whether a fingerprint field is about the machine alone (`host.*`, and each node's
/// `nodes[i].host.*`): the name, OS, kernel, CPU, cores and memory of the host — not the
/// accelerators, the software or the workload.
fn is_host_field(field: &str) -> bool {
    field.starts_with("host.")
        || field
            .strip_prefix("nodes[")
            .and_then(|r| r.split_once("].host."))
            .is_some()
}

/// A re-run on another host, whose fingerprint differs from the published one in host
/// fields only, and whose every published claim (and value) reproduced: the difference is
/// worth a look, not a re-baseline — the claims did not depend on the machine. Any claim or
/// value not reproduced, or undecided, keeps not-comparable at re-baseline: then the host
/// may be the reason.
fn host_only_look(
    flags: Vec<Flag>,
    differences: &[FingerprintDifference],
    summary: &Summary,
    claims: usize,
) -> Vec<Flag> {
    let host_only = !differences.is_empty() && differences.iter().all(|d| is_host_field(&d.field));
    let reproduced = summary.not_reproduced == 0
        && summary.claims_not_reproduced == 0
        && summary.claims_inconclusive == 0
        && (claims > 0 || summary.reproduced > 0);
    if !(host_only && reproduced) {
        return flags;
    }
    let fields: Vec<&str> = differences.iter().map(|d| d.field.as_str()).collect();
    flags
        .into_iter()
        .map(|f| {
            if f.id != FlagId::NotComparable {
                return f;
            }
            let what = if claims > 0 {
                format!("every published claim ({claims}) reproduced")
            } else {
                format!(
                    "every value with a verdict ({}) reproduced",
                    summary.reproduced
                )
            };
            Flag::new(
                FlagId::NotComparable,
                FlagLevel::Look,
                format!(
                    "re-run on another host: the fingerprints differ only in host fields ({}), \
                     and {what} — the published result holds on this machine too",
                    fields.join(", ")
                ),
                "nothing to re-run; note the host in the published result's description if it \
                 matters to readers",
            )
        })
        .collect()
}

impl RerunReport {
    /// Whether any published value or claim was contradicted.
    pub fn any_not_reproduced(&self) -> bool {
        self.summary.not_reproduced > 0 || self.summary.claims_not_reproduced > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(field: &str) -> FingerprintDifference {
        FingerprintDifference {
            field: field.into(),
            baseline: "a".into(),
            candidate: "b".into(),
        }
    }

    fn not_comparable() -> Vec<Flag> {
        vec![Flag::new(
            FlagId::NotComparable,
            FlagLevel::ReBaseline,
            "the fingerprints differ",
            "make everything identical",
        )]
    }

    /// The issue-29 case: a re-run on another host always carried `[re-baseline]
    /// not-comparable`, even when every claim reproduced.
    #[test]
    fn another_host_whose_claims_reproduce_is_a_look() {
        let host = [
            diff("host.name"),
            diff("host.cpu"),
            diff("nodes[1].host.kernel"),
        ];
        let all = Summary {
            reproduced: 4,
            claims_reproduced: 2,
            ..Summary::default()
        };
        let f = host_only_look(not_comparable(), &host, &all, 2);
        assert_eq!(f[0].level, FlagLevel::Look, "{}", f[0].evidence);
        assert!(
            f[0].evidence
                .contains("host.name, host.cpu, nodes[1].host.kernel")
                && f[0]
                    .evidence
                    .contains("every published claim (2) reproduced"),
            "{}",
            f[0].evidence
        );
        // A claim not reproduced: the host may be why.
        let one_off = Summary {
            claims_not_reproduced: 1,
            ..all
        };
        let f = host_only_look(not_comparable(), &host, &one_off, 2);
        assert_eq!(f[0].level, FlagLevel::ReBaseline);
        // Another GPU driver is not a host field.
        let mut gpu = host.to_vec();
        gpu.push(diff("accelerators[0].driver_version"));
        let f = host_only_look(not_comparable(), &gpu, &all, 2);
        assert_eq!(f[0].level, FlagLevel::ReBaseline);
    }
}
