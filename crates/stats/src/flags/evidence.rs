//! Evidence the flag rules read: plain structs a caller (`servebench compare`) fills from
//! result files. Nothing here knows metric names or file formats.

use serde::{Deserialize, Serialize};

use crate::error::StatsError;
use crate::sequential::{Look, at_look};
use crate::spearman::Correlation;
use crate::verdict::{
    ArmComparison, Direction, Margin, Verdict, compare_arms, compare_arms_arithmetic,
};

/// Facts about how the two arms were measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonContext {
    /// Both arms come from the same run/session.
    pub same_run: bool,
    /// Their blocks were interleaved (or randomised) within that run, not blocked.
    pub interleaved: bool,
    /// Fingerprint fields that differ between the arms (empty when comparable). The variant's
    /// own server-argv change must not be listed.
    pub fingerprint_differences: Vec<FingerprintDifference>,
    /// Run id of the baseline's measurements, for messages.
    #[serde(default)]
    pub baseline_run: Option<String>,
    /// Run id of the candidate's measurements, for messages.
    #[serde(default)]
    pub candidate_run: Option<String>,
}

impl ComparisonContext {
    /// One interleaved run with matching fingerprints.
    pub fn interleaved_run() -> Self {
        ComparisonContext {
            same_run: true,
            interleaved: true,
            fingerprint_differences: Vec::new(),
            baseline_run: None,
            candidate_run: None,
        }
    }
}

/// One fingerprint field that differs between baseline and candidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FingerprintDifference {
    /// Dotted field path, e.g. `workload.seed`, `host.accelerators`, `servebench_version`.
    pub field: String,
    /// The baseline's value, as text.
    pub baseline: String,
    /// The candidate's value, as text.
    pub candidate: String,
}

/// How a metric is analysed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "scale")]
pub enum Analysis {
    /// Positive metric: geometric means, ratio, threshold θ (e.g. 0.02).
    Log {
        /// Practical threshold θ as a fraction.
        threshold: f64,
    },
    /// Metric that can be 0: arithmetic means, difference, margin.
    Arithmetic {
        /// Practical margin.
        margin: Margin,
    },
}

/// What stats is told about one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSettings {
    /// Display name, used only in flag sentences (stats does not interpret it).
    pub name: String,
    /// Which way is better.
    pub direction: Direction,
    /// Log or arithmetic analysis, with its threshold.
    pub analysis: Analysis,
}

/// Per-trial validity evidence (docs/statistics-method.md, `invalid-trial` and within-trial `drift`).
/// `None` fields are not checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TrialCheck {
    /// Position of the trial in run order within its arm (0-based), for messages.
    pub trial: usize,
    /// Index of this trial's value in `ArmEvidence::trial_values` (`None`: it gave none).
    #[serde(default)]
    pub value_index: Option<usize>,
    /// Failed requests.
    pub errors: u64,
    /// Peak in-flight requests observed.
    pub peak_concurrency: Option<u64>,
    /// The concurrency limit in force.
    pub max_concurrency: Option<u64>,
    /// Achieved request rate (open loop only), requests/s.
    pub achieved_rate: Option<f64>,
    /// Target request rate (open loop only), requests/s.
    pub target_rate: Option<f64>,
    /// Output tokens received / output tokens requested, over the trial.
    pub output_token_ratio: Option<f64>,
    /// Requests measured in the trial.
    pub requests: u64,
    /// Highest quantile reported for this trial (0.99 for a p99), if any.
    pub reported_quantile: Option<f64>,
    /// Spearman ρ of the metric against request order within the trial.
    pub within_trial_trend: Option<Correlation>,
    /// Closed-loop trials only: the share of the trial (first send to last end) during which
    /// the client held the in-flight count at ≥ 90% of the concurrency limit while requests
    /// were still waiting to be sent (`load-not-sustained`). `None`: not a closed-loop point,
    /// or not recorded (imported results, older result files).
    #[serde(default)]
    pub limit_held_fraction: Option<f64>,
}

/// Everything known about one arm at one sweep point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ArmEvidence {
    /// Per-trial values of the metric, in run order.
    pub trial_values: Vec<f64>,
    /// Values of the metric (per-run summaries) from earlier runs with the same fingerprint;
    /// empty when unknown. Used by `implausible`.
    pub history: Vec<f64>,
    /// Validity evidence per trial (may be empty).
    pub trials: Vec<TrialCheck>,
    /// Every server start of this arm passed its verify rules (at least one rule each): the
    /// variant was shown to be in effect. `false` when not known (no rules, an endpoint
    /// servebench did not start, an imported result). Used by `implausible`.
    #[serde(default)]
    pub verified: bool,
}

impl ArmEvidence {
    /// Evidence holding only trial values.
    pub fn from_values(trial_values: Vec<f64>) -> Self {
        ArmEvidence {
            trial_values,
            ..ArmEvidence::default()
        }
    }
}

/// One sweep point of one metric: both arms' evidence and, when there are enough trials, their
/// comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointComparison {
    /// How the point is named in messages (`"c=10"`).
    pub label: String,
    /// The sweep level (10.0), used to order the sweep.
    pub level: f64,
    /// How the metric was analysed at this point (the margin can differ between points of
    /// an arithmetic metric: relative where the baseline's mean is not 0, else absolute).
    pub analysis: Analysis,
    /// Significance level of the comparison.
    pub alpha: f64,
    /// For a cell of a sequential run: the look it stopped at. Its comparison, and every
    /// verdict a flag recomputes, then uses the repeated confidence interval of that look
    /// (`crate::sequential::at_look`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub look: Option<Look>,
    /// The level the test of "no difference" is read at when it is not `alpha`: a
    /// multiplicity correction's level for this cell (Holm's, `crate::holm::holm_levels`).
    /// The comparison, and every verdict a flag recomputes, then read significance at it;
    /// the intervals stay at `1 − alpha`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_alpha: Option<f64>,
    /// `compare_arms` / `compare_arms_arithmetic` of the trial values; `None` when it could
    /// not be computed (see `comparison_error`).
    pub comparison: Option<ArmComparison>,
    /// Why `comparison` is `None`.
    pub comparison_error: Option<String>,
    /// Baseline evidence.
    pub baseline: ArmEvidence,
    /// Candidate evidence.
    pub candidate: ArmEvidence,
}

impl PointComparison {
    /// Compare the arms' trial values by the metric's [`Analysis`] at `alpha` and keep the
    /// evidence. A comparison that cannot be computed (too few trials, …) is recorded in
    /// `comparison_error`, not returned as an error: the rules still need to see the point.
    pub fn new(
        label: impl Into<String>,
        level: f64,
        baseline: ArmEvidence,
        candidate: ArmEvidence,
        metric: &MetricSettings,
        alpha: f64,
    ) -> Self {
        Self::at(label, level, baseline, candidate, metric, alpha, None)
    }

    /// [`PointComparison::new`] for a cell of a sequential run, read at `look` (`None`: a
    /// fixed-sample cell).
    pub fn at(
        label: impl Into<String>,
        level: f64,
        baseline: ArmEvidence,
        candidate: ArmEvidence,
        metric: &MetricSettings,
        alpha: f64,
        look: Option<Look>,
    ) -> Self {
        let result = compare_values(
            metric.analysis,
            metric.direction,
            alpha,
            look.as_ref(),
            None,
            &baseline.trial_values,
            &candidate.trial_values,
        );
        let (comparison, comparison_error) = match result {
            Ok(c) => (Some(c), None),
            Err(e) => (None, Some(e.to_string())),
        };
        PointComparison {
            label: label.into(),
            level,
            analysis: metric.analysis,
            alpha,
            look,
            test_alpha: None,
            comparison,
            comparison_error,
            baseline,
            candidate,
        }
    }

    /// The same point with its test of "no difference" read at `test_alpha` (module docs of
    /// the field). A sequential cell (read at a look) is left as it is: its significance is
    /// its repeated interval's.
    pub fn tested_at(mut self, test_alpha: f64) -> Self {
        if self.look.is_some() {
            return self;
        }
        self.test_alpha = Some(test_alpha);
        self.comparison = self.comparison.map(|c| c.tested_at(test_alpha));
        self
    }

    /// The verdict this point would get with other trial values (one trial left out, a
    /// trend removed): the same analysis, direction and α. `None` when no comparison can be
    /// computed from them (fewer than 3 trials in an arm, …).
    pub fn verdict_with(
        &self,
        direction: Direction,
        baseline: &[f64],
        candidate: &[f64],
    ) -> Option<Verdict> {
        compare_values(
            self.analysis,
            direction,
            self.alpha,
            self.look.as_ref(),
            self.test_alpha,
            baseline,
            candidate,
        )
        .ok()
        .map(|c| c.verdict)
    }

    /// This point's verdict, when it has a comparison.
    pub fn verdict(&self) -> Option<Verdict> {
        self.comparison.as_ref().map(|c| c.verdict)
    }
}

/// `compare_arms` or `compare_arms_arithmetic` by the analysis, read at `look` when given,
/// else with its test at `test_alpha` when given.
fn compare_values(
    analysis: Analysis,
    direction: Direction,
    alpha: f64,
    look: Option<&Look>,
    test_alpha: Option<f64>,
    baseline: &[f64],
    candidate: &[f64],
) -> Result<ArmComparison, StatsError> {
    let fixed = match analysis {
        Analysis::Log { threshold } => {
            compare_arms(baseline, candidate, direction, threshold, alpha)
        }
        Analysis::Arithmetic { margin } => {
            compare_arms_arithmetic(baseline, candidate, direction, margin, alpha)
        }
    }?;
    match (look, test_alpha) {
        (Some(look), _) => at_look(&fixed, look),
        (None, Some(level)) => Ok(fixed.tested_at(level)),
        (None, None) => Ok(fixed),
    }
}

/// A labelled p-value, for the multiplicity rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedP {
    /// The metric tested.
    pub metric: String,
    /// The point (`"c=10"`).
    pub point: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// Its p-value.
    pub p: f64,
}

impl NamedP {
    /// `"output_throughput c=10"`, for messages.
    pub fn label(&self) -> String {
        format!("{} {}", self.metric, self.point)
    }
}

/// Thresholds of the rules; `Default` gives docs/statistics-method.md's values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RuleSettings {
    /// Significance level α of the tests and intervals (0.05).
    pub alpha: f64,
    /// Fewer trials per arm than this: no CI, re-baseline (3).
    pub min_trials: usize,
    /// Trials per arm the re-run actions recommend at the least (5).
    pub rerun_trials: usize,
    /// `|ratio − 1|` above this is implausible (0.5).
    pub implausible_change: f64,
    /// Level of the prediction interval of earlier runs (0.99).
    pub prediction_level: f64,
    /// Cochran's Q p-value below which a sweep is heterogeneous (0.01).
    pub sweep_q_p: f64,
    /// Leave-one-out residual, in SEs, above which a level disagrees (3).
    pub sweep_residual_se: f64,
    /// Spearman p-value (exact for n ≤ 9) below which a trend across trials can be drift
    /// (0.01: with 5 trials not even a perfect order reaches it — p = 2/120 — so a trend needs
    /// 6 trials or more; at 0.05 chance orders of 5 trials fired on clean A/A runs:
    /// docs/statistics-measured.md).
    pub drift_p: f64,
    /// Spearman p-value below which a trend within a trial can be drift (0.01).
    pub within_trial_p: f64,
    /// Smallest |ρ| of a within-trial trend that counts as drift (0.3): with thousands of
    /// requests a negligible trend is already significant.
    pub within_trial_min_rho: f64,
    /// Robust z above which a trial of an arm of more than 10 trials is an outlier (3.5,
    /// Iglewicz & Hoaglin's cutoff); 3–10 trials use Dixon's Q at its 95% cutoff instead
    /// (`robust::dixon_cutoff`).
    pub outlier_z: f64,
    /// A trend must move the metric over the run by more than this share of the threshold
    /// before drift can fire (0.5: θ/2 on the log scale, M/2 on the arithmetic scale).
    pub practical_floor: f64,
    /// One trial (an outlier, or a slow first trial) must lie farther than this share of
    /// the threshold from its arm's median before outlier-trial or drift can fire (1.5,
    /// calibrated on clean A/A runs: docs/statistics-measured.md).
    pub outlier_floor: f64,
    /// The share of a closed-loop point's trials during which the limit was held, below
    /// which the point is `load-not-sustained` (0.5): re-baseline when the interval of the
    /// mean share lies below it, look when the interval holds it.
    pub min_limit_held: f64,
    /// The least half-width of that interval (0.1): a grey zone around `min_limit_held`, so
    /// that two runs of a point at the edge (shares 0.498 and 0.502) get the same answer.
    #[serde(default = "default_limit_held_grey")]
    pub limit_held_grey: f64,
    /// Achieved/target rate below this is invalid (0.98, open loop).
    pub min_rate_fraction: f64,
    /// Output/requested tokens outside `[lo, hi]` is invalid (0.9, 1.1; MLPerf).
    pub output_token_range: (f64, f64),
    /// Confidence for "enough requests for the reported quantile" (0.99).
    pub reportable_confidence: f64,
}

fn default_limit_held_grey() -> f64 {
    0.1
}

impl Default for RuleSettings {
    fn default() -> Self {
        RuleSettings {
            alpha: 0.05,
            min_trials: 3,
            rerun_trials: 5,
            implausible_change: 0.5,
            prediction_level: 0.99,
            sweep_q_p: 0.01,
            sweep_residual_se: 3.0,
            drift_p: 0.01,
            within_trial_p: 0.01,
            within_trial_min_rho: 0.3,
            outlier_z: 3.5,
            practical_floor: 0.5,
            outlier_floor: 1.5,
            min_limit_held: 0.5,
            limit_held_grey: default_limit_held_grey(),
            min_rate_fraction: 0.98,
            output_token_range: (0.9, 1.1),
            reportable_confidence: 0.99,
        }
    }
}
