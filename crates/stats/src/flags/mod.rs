//! Validity flags: pure rules over plain evidence that say when a comparison cannot be
//! trusted yet (**re-baseline**) or deserves a human look (**look**), plus the *crossover*
//! finding.
//!
//! Method: docs/statistics-method.md, "Validity flags". A flag is one of three outputs kept
//! apart: the verdict is the answer ([`crate::verdict`]), advice says how many trials would
//! settle an undecided cell ([`crate::advice`]), and a flag is a threat to the comparison
//! itself. A flag fires only when the threat is practically large *and* could change the
//! verdict it sits on, and it says which verdicts it threatens ([`Threatens`]): a flag that
//! fires on most clean runs teaches users to ignore the tool. Each rule is one function in
//! [`rules`], [`trials`] (rules about single trials) or [`sweep`] that reads evidence structs ([`evidence`]) and returns zero or more
//! [`Flag`]s, each carrying the numbers it fired on in a sentence and the action to take.
//! [`assess_sweep`] runs all per-metric rules over a sweep and decides between
//! `sweep-inconsistent` and a [`Crossover`]; [`rules::multiplicity`] runs once over every test
//! of a comparison; [`rules::load_not_sustained`] once per sweep point; the rules of
//! [`telemetry`] once per sweep point (and per comparison for the server starts).
//! Reference: asv ("not comparable"), hyperfine (warm-up and outlier warnings), MLPerf
//! LoadGen (validity rules), Chromium Pinpoint.

pub mod evidence;
pub mod host;
pub mod multiplicity;
pub mod rules;
pub mod sweep;
pub mod telemetry;
pub mod trials;

use serde::{Deserialize, Serialize};

use crate::verdict::Verdict;

pub use evidence::{
    Analysis, ArmEvidence, ComparisonContext, FingerprintDifference, MetricSettings, NamedP,
    PointComparison, RuleSettings, TrialCheck,
};
pub use sweep::{Crossover, CrossoverRegion, Side, SweepAssessment, assess_sweep};

/// Which rule fired (kebab-case in JSON, as in docs/statistics-method.md's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlagId {
    /// Fingerprints differ (workload, argv beyond the variant's change, model, hardware, version).
    NotComparable,
    /// Arms measured in different runs/sessions or not interleaved.
    StaleBaseline,
    /// Fewer than 3 trials in an arm: no CI.
    TooFewTrials,
    /// |ratio − 1| > 50%, or outside the prediction interval of earlier runs.
    Implausible,
    /// One level's delta disagrees with the rest of the sweep.
    SweepInconsistent,
    /// Trend with run order (across or within trials), or a slow first trial, that changes
    /// the verdict.
    Drift,
    /// A trial far from the others (robust z and a practical floor) that changes the verdict.
    OutlierTrial,
    /// A trial that broke a validity rule.
    InvalidTrial,
    /// A closed-loop point whose trials held the concurrency limit for less than half the
    /// trial (one wave: ramp-up and drain, not the limit).
    LoadNotSustained,
    /// Many tests: Holm correction and expected false alarms.
    Multiplicity,
    /// A closed-loop point where the engine held requests waiting while the client held its
    /// limit (telemetry).
    ServerQueued,
    /// GPU clocks lowered by a power or thermal limit more in one arm (telemetry).
    Throttled,
    /// A server's GPUs held memory or a process before it started (telemetry).
    GpuBusyAtStart,
    /// Preemptions in one arm's trials and not the other's (telemetry).
    Preempted,
    /// The KV cache at its capacity for much of an arm's trials (telemetry).
    KvFull,
    /// Steal or other processes' CPU during trials above the calibrated threshold (host
    /// load, [`host`]).
    HostContended,
}

impl FlagId {
    /// The id as written in docs/statistics-method.md (`"stale-baseline"`).
    pub fn as_str(self) -> &'static str {
        match self {
            FlagId::NotComparable => "not-comparable",
            FlagId::StaleBaseline => "stale-baseline",
            FlagId::TooFewTrials => "too-few-trials",
            FlagId::Implausible => "implausible",
            FlagId::SweepInconsistent => "sweep-inconsistent",
            FlagId::Drift => "drift",
            FlagId::OutlierTrial => "outlier-trial",
            FlagId::InvalidTrial => "invalid-trial",
            FlagId::LoadNotSustained => "load-not-sustained",
            FlagId::Multiplicity => "multiplicity",
            FlagId::ServerQueued => "server-queued",
            FlagId::Throttled => "throttled",
            FlagId::GpuBusyAtStart => "gpu-busy-at-start",
            FlagId::Preempted => "preempted",
            FlagId::KvFull => "kv-full",
            FlagId::HostContended => "host-contended",
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

/// One verdict a flag threatens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Threat {
    /// The metric.
    pub metric: String,
    /// The point's label (`c=16`).
    pub point: String,
    /// Its verdict as computed (`None`: no comparison could be computed).
    pub verdict: Option<Verdict>,
    /// The verdict it would have without what the flag names (without that trial, with the
    /// trend removed), when the rule computed one; `None` where the rule cannot say (a
    /// stale baseline has no clean counterpart) or no comparison is left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otherwise: Option<Verdict>,
}

/// Which verdicts a flag threatens.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "scope", content = "cells")]
pub enum Threatens {
    /// Every verdict of the comparison (not-comparable, stale-baseline).
    #[default]
    Comparison,
    /// These cells' verdicts.
    Cells(Vec<Threat>),
}

/// One fired rule: which, how serious, the evidence with its numbers, the verdicts it
/// threatens, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flag {
    /// Rule id.
    pub id: FlagId,
    /// Re-baseline or look.
    pub level: FlagLevel,
    /// A human sentence with the numbers the rule fired on.
    pub evidence: String,
    /// The verdicts it threatens.
    #[serde(default)]
    pub threatens: Threatens,
    /// What to do about it.
    pub action: String,
}

impl Flag {
    /// A flag about the whole comparison.
    pub fn new(
        id: FlagId,
        level: FlagLevel,
        evidence: impl Into<String>,
        action: impl Into<String>,
    ) -> Self {
        Flag {
            id,
            level,
            evidence: evidence.into(),
            threatens: Threatens::Comparison,
            action: action.into(),
        }
    }

    /// The same flag, threatening these cells.
    pub fn threatening(mut self, cells: Vec<Threat>) -> Self {
        self.threatens = Threatens::Cells(cells);
        self
    }

    /// Whether this flag threatens the verdict of `metric` at `point`.
    pub fn threatens_cell(&self, metric: &str, point: &str) -> bool {
        match &self.threatens {
            Threatens::Comparison => true,
            Threatens::Cells(cells) => cells.iter().any(|c| c.metric == metric && c.point == point),
        }
    }
}

/// The standard re-baseline action: re-run both arms interleaved in one session, with the
/// trials per arm the spread asks for — or, where that is more than is practical
/// (`advice::PRACTICAL_TRIALS`), with sequential trials that stop when the cells are decided.
pub(crate) fn rerun_action(trials_per_arm: u64) -> String {
    if trials_per_arm >= crate::advice::PRACTICAL_TRIALS {
        "re-run baseline and candidate interleaved in one session; at this spread a fixed \
         count would need more than 100 trials per arm, so let `trials.until_decided` add \
         rounds only where the answer is not yet known"
            .to_owned()
    } else {
        format!(
            "re-run baseline and candidate interleaved in one session with {trials_per_arm} \
             trials per arm"
        )
    }
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
