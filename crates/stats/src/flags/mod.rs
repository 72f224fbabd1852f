//! Flags: pure rules over plain evidence that say when a comparison cannot be trusted yet
//! (**re-baseline**) or deserves a human look (**look**), plus the *crossover* finding.
//!
//! Method: STATISTICS.md, "Two levels of flag" and "Suspicious deltas": each flag of its table
//! is one function in [`rules`] or [`sweep`] that reads evidence structs ([`evidence`]) and
//! returns zero or more [`Flag`]s, each carrying the numbers it fired on in a sentence and the
//! action to take. [`assess_sweep`] runs all per-metric rules over a sweep and decides between
//! `sweep-inconsistent` and a [`Crossover`]; [`rules::multiplicity`] runs once over every test
//! of a comparison.
//! Reference: STATISTICS.md; asv ("not comparable"), hyperfine (warm-up and outlier warnings),
//! MLPerf LoadGen (validity rules), Chromium Pinpoint.

pub mod evidence;
pub mod rules;
pub mod sweep;

use serde::{Deserialize, Serialize};

pub use evidence::{
    Analysis, ArmEvidence, ComparisonContext, FingerprintDifference, MetricSettings, NamedP,
    PointComparison, RuleSettings, TrialCheck,
};
pub use sweep::{Crossover, CrossoverRegion, Side, SweepAssessment, assess_sweep};

/// Which rule fired (kebab-case in JSON, as in STATISTICS.md's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlagId {
    /// Fingerprints differ (workload, argv beyond the variant's change, model, hardware, version).
    NotComparable,
    /// Arms measured in different runs/sessions or not interleaved.
    StaleBaseline,
    /// Fewer than 3 trials (no CI), or fewer than 5 (warning).
    TooFewTrials,
    /// CV above the metric's limit, or minimum detectable effect above θ.
    Underpowered,
    /// |ratio − 1| > 50%, or outside the prediction interval of earlier runs.
    Implausible,
    /// One level's delta disagrees with the rest of the sweep.
    SweepInconsistent,
    /// Trend with run order (across or within trials), or a first-trial outlier.
    Drift,
    /// A trial with robust z > 3.5.
    OutlierTrial,
    /// A trial that broke a validity rule.
    InvalidTrial,
    /// Many tests: Holm correction and expected false alarms.
    Multiplicity,
}

impl FlagId {
    /// The id as written in STATISTICS.md (`"stale-baseline"`).
    pub fn as_str(self) -> &'static str {
        match self {
            FlagId::NotComparable => "not-comparable",
            FlagId::StaleBaseline => "stale-baseline",
            FlagId::TooFewTrials => "too-few-trials",
            FlagId::Underpowered => "underpowered",
            FlagId::Implausible => "implausible",
            FlagId::SweepInconsistent => "sweep-inconsistent",
            FlagId::Drift => "drift",
            FlagId::OutlierTrial => "outlier-trial",
            FlagId::InvalidTrial => "invalid-trial",
            FlagId::Multiplicity => "multiplicity",
        }
    }
}

/// How serious a flag is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlagLevel {
    /// The measurement cannot be trusted yet: re-run.
    ReBaseline,
    /// Sound numbers, a pattern worth a human look.
    Look,
}

impl FlagLevel {
    /// As written in reports: `re-baseline`, `look`.
    pub fn as_str(self) -> &'static str {
        match self {
            FlagLevel::ReBaseline => "re-baseline",
            FlagLevel::Look => "look",
        }
    }
}

/// One fired rule: which, how serious, the evidence with its numbers, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flag {
    /// Rule id.
    pub id: FlagId,
    /// Re-baseline or look.
    pub level: FlagLevel,
    /// A human sentence with the numbers the rule fired on.
    pub evidence: String,
    /// What to do about it.
    pub action: String,
}

impl Flag {
    pub(crate) fn new(
        id: FlagId,
        level: FlagLevel,
        evidence: impl Into<String>,
        action: impl Into<String>,
    ) -> Self {
        Flag {
            id,
            level,
            evidence: evidence.into(),
            action: action.into(),
        }
    }
}

/// The standard re-baseline action: re-run both arms interleaved in one session.
pub(crate) fn rerun_action(trials_per_arm: u64) -> String {
    format!(
        "re-run baseline and candidate interleaved in one session with {trials_per_arm} trials \
         per arm"
    )
}

/// `0.0213` → `"+2.1%"`.
pub(crate) fn pct(fraction: f64) -> String {
    format!("{:+.1}%", fraction * 100.0)
}

/// `0.05` → `"5%"`, `0.025` → `"2.5%"` (no sign).
pub(crate) fn pct_plain(fraction: f64) -> String {
    let v = fraction * 100.0;
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}%")
    } else {
        format!("{v:.1}%")
    }
}

/// A p-value in messages: 3 decimals, scientific below 0.001, "< 1e-15" below the precision
/// of the distribution functions.
pub(crate) fn fmt_p(p: f64) -> String {
    if p < 1e-15 {
        "< 1e-15".to_string()
    } else if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// `"= 0.003"` or `"< 1e-15"`, to follow "p " in a sentence.
pub(crate) fn p_clause(p: f64) -> String {
    let text = fmt_p(p);
    if text.starts_with('<') {
        text
    } else {
        format!("= {text}")
    }
}
