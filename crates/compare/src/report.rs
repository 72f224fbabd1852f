//! The report of `servebench compare`: one serde struct tree, printed as text by
//! [`super::render()`] and as JSON by `--json`. Three outputs are kept apart: the **verdict**
//! of each metric at each point (`PointReport::verdict`), the **validity flags** with the
//! verdicts each threatens (`MetricReport::flags`, `Comparison::flags`), and the **advice**
//! for the undecided cells (`MetricReport::advice`). The JSON shape is documented in
//! `docs/compare.md` ("The JSON report"); [`REPORT_FORMAT`] changes on any incompatible
//! change.

use serde::{Deserialize, Serialize};
use servebench_stats::advice::Settle;
use servebench_stats::flags::{FingerprintDifference, Flag, FlagId, Side};
use servebench_stats::gate::Answer;
use servebench_stats::verdict::Verdict;

use servebench_result::StopReason;
use servebench_stats::{Direction, Estimate, verdict::Scale};

/// Value of [`CompareReport::format`]. Version 2: likely-improved / likely-regressed replace
/// significant-but-small, advice replaces `power` and the per-point trial counts, flags say
/// which verdicts they threaten, `underpowered` is gone and `load-not-sustained` is new.
pub const REPORT_FORMAT: &str = "servebench-compare/2";

/// Everything `servebench compare` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    /// [`REPORT_FORMAT`].
    pub format: String,
    /// Significance level α of every test; intervals are at `1 − α`.
    pub alpha: f64,
    /// One baseline-vs-candidate comparison per candidate variant.
    pub comparisons: Vec<Comparison>,
    /// The `--fail-on` gates and whether they tripped (absent when none was asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateOutcome>,
    /// Across two runs of the same spec: the change of the levels common to every variant
    /// and point both runs measured, and what moved apart from it (`crate::levels`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<crate::levels::LevelsReport>,
}

/// Within one run, or across two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Both arms are variants of one run.
    WithinRun,
    /// The arms come from two result files (two runs or sessions).
    AcrossRuns,
}

/// Where one arm's measurements come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmSource {
    /// The result file as given.
    pub file: String,
    /// Its run id.
    pub run_id: String,
    /// `measured` or `imported`.
    pub origin: String,
    /// Run status as last written (`complete`, `interrupted`, …).
    pub status: String,
    /// The variant.
    pub variant: String,
    /// The variant's own patch (`servebench_spec::Variant::patch_words`): its server args,
    /// `KEY=value` of its env, and `request_body {json}` where it sets one.
    pub patch: Vec<String>,
    /// servebench version that measured.
    pub tool_version: String,
}

/// One baseline-vs-candidate comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Within one run or across runs.
    pub mode: Mode,
    /// The baseline arm.
    pub baseline: ArmSource,
    /// The candidate arm.
    pub candidate: ArmSource,
    /// Both arms come from one run.
    pub same_run: bool,
    /// Their blocks were interleaved or randomised and the server restarted between blocks.
    pub interleaved: bool,
    /// Fingerprint fields that differ (empty when comparable).
    pub fingerprint_differences: Vec<FingerprintDifference>,
    /// Sentences about the comparison: imported provenance, incomplete runs, points only one
    /// side has, settings taken from which file.
    pub notes: Vec<String>,
    /// The findings in words: each sound crossover (a sign change across the sweep carried
    /// by decided, unflagged cells of one interleaved run).
    pub findings: Vec<String>,
    /// One entry per compared metric, in the order asked for.
    pub metrics: Vec<MetricReport>,
    /// Flags about the whole comparison, or about a point whatever the metric
    /// (load-not-sustained, multiplicity).
    pub flags: Vec<Flag>,
    /// Across runs, when the baseline run's series was read: its confirmed steps after the
    /// baseline run (also in the `stale-baseline` evidence). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_series: Option<crate::series::BaselineSeries>,
    /// What the server reported at each start of either arm whose verify failed (the
    /// variant's change may not have been in effect): said once, its failed trials not
    /// flagged one by one, no advice. Absent when every verify passed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verify_failed: Vec<String>,
    /// Output equivalence (`spec.equivalence`, docs/equivalence.md): the candidate's probe
    /// outputs against the baseline's own repeatability. Absent when neither arm was probed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equivalence: Option<crate::equivalence::EquivalenceReport>,
    /// Kernel evidence (`evidence.kernels`, docs/kernels.md): each arm's time per output
    /// token by category, its top kernels, the change. Absent unless both arms have some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels: Option<crate::kernels::KernelsReport>,
}

/// How one metric compares over the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricReport {
    /// Catalogue name.
    pub metric: String,
    /// Unit of the means.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// `log` (geometric means, `effect` is the ratio candidate/baseline) or `arithmetic`
    /// (means, `effect` is the difference candidate − baseline).
    pub scale: Scale,
    /// Practical threshold θ (log: relative, e.g. 0.02; arithmetic: see `margin` per point).
    pub threshold: f64,
    /// One row per sweep point, in sweep order.
    pub points: Vec<PointReport>,
    /// Every flag the rules raised for this metric, re-baseline first.
    pub flags: Vec<Flag>,
    /// Sweeps whose decided verdicts change sign (sound: a finding; else why not).
    pub crossovers: Vec<CrossoverReport>,
    /// Trials per arm that would settle the undecided cells.
    pub advice: Vec<CellAdvice>,
}

/// The verdict of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    /// Significant and beyond θ, the good way.
    Improved,
    /// Significant and beyond θ, the bad way.
    Regressed,
    /// The whole CI is inside ±θ.
    Equivalent,
    /// Significant the good way, but the CI reaches inside ±θ: the size is unsure.
    LikelyImproved,
    /// Significant the bad way, but the CI reaches inside ±θ.
    LikelyRegressed,
    /// Anything else: more trials would settle it (see the metric's advice).
    Inconclusive,
    /// No comparison could be computed (see `error`).
    NotComputed,
}

impl VerdictKind {
    /// The kebab-case name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictKind::Improved => "improved",
            VerdictKind::Regressed => "regressed",
            VerdictKind::Equivalent => "equivalent",
            VerdictKind::LikelyImproved => "likely-improved",
            VerdictKind::LikelyRegressed => "likely-regressed",
            VerdictKind::Inconclusive => "inconclusive",
            VerdictKind::NotComputed => "not-computed",
        }
    }

    /// The stats verdict (`None` for not-computed).
    pub fn verdict(self) -> Option<Verdict> {
        match self {
            VerdictKind::Improved => Some(Verdict::Improved),
            VerdictKind::Regressed => Some(Verdict::Regressed),
            VerdictKind::Equivalent => Some(Verdict::Equivalent),
            VerdictKind::LikelyImproved => Some(Verdict::LikelyImproved),
            VerdictKind::LikelyRegressed => Some(Verdict::LikelyRegressed),
            VerdictKind::Inconclusive => Some(Verdict::Inconclusive),
            VerdictKind::NotComputed => None,
        }
    }

    /// The row verdict of a stats verdict (`None`: not computed).
    pub fn of(v: Option<Verdict>) -> Self {
        match v {
            Some(Verdict::Improved) => VerdictKind::Improved,
            Some(Verdict::Regressed) => VerdictKind::Regressed,
            Some(Verdict::Equivalent) => VerdictKind::Equivalent,
            Some(Verdict::LikelyImproved) => VerdictKind::LikelyImproved,
            Some(Verdict::LikelyRegressed) => VerdictKind::LikelyRegressed,
            Some(Verdict::Inconclusive) => VerdictKind::Inconclusive,
            None => VerdictKind::NotComputed,
        }
    }

    /// Improved, regressed or equivalent.
    pub fn is_decided(self) -> bool {
        self.verdict().is_some_and(Verdict::is_decided)
    }
}

/// One metric at one sweep point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointReport {
    /// Short label: the sweep keys that vary (`c=16`, `c=16 in=512`).
    pub label: String,
    /// The point's full label in the baseline's result file.
    pub point_label: String,
    /// Concurrency limit (`null`: unlimited).
    pub max_concurrency: Option<u32>,
    /// Trials with a value in the baseline arm.
    pub n_baseline: usize,
    /// Trials with a value in the candidate arm.
    pub n_candidate: usize,
    /// Failed trials (status `failed`) of the baseline arm at this point.
    pub failed_trials_baseline: usize,
    /// Failed trials of the candidate arm.
    pub failed_trials_candidate: usize,
    /// Baseline (geometric) mean with its CI; `null` below 3 trials or without values.
    pub baseline: Option<Estimate>,
    /// Candidate (geometric) mean with its CI.
    pub candidate: Option<Estimate>,
    /// Ratio candidate/baseline (log scale) or difference candidate − baseline (arithmetic)
    /// with its CI.
    pub effect: Option<Estimate>,
    /// Margin on the analysis scale: `ln(1 + θ)` (log) or the absolute margin (arithmetic).
    pub margin: Option<f64>,
    /// Welch p-value, at the cell's own α.
    pub p: Option<f64>,
    /// Holm-adjusted p-value, when the correction decided the verdicts
    /// (`compare.multiplicity: holm`): the verdict is significant exactly when it is < α.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_holm: Option<f64>,
    /// The verdict.
    pub verdict: VerdictKind,
    /// Coefficient of variation of the baseline's trial values.
    pub cv_baseline: Option<f64>,
    /// Coefficient of variation of the candidate's trial values.
    pub cv_candidate: Option<f64>,
    /// Smallest change detectable at these counts (power 0.8), as a relative change (log) or
    /// in the metric's unit (arithmetic).
    pub mde: Option<f64>,
    /// For a cell of a sequential run: the look it stopped at (its interval is that look's
    /// repeated confidence interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<SequentialCell>,
    /// Ids of the flags that threaten this cell's verdict (the full flags are in
    /// `MetricReport::flags` and `Comparison::flags`; flags about the whole comparison, such
    /// as stale-baseline, are not repeated here).
    pub flags: Vec<FlagId>,
    /// Why there is no comparison, when there is none.
    pub error: Option<String>,
}

impl PointReport {
    /// The p a table prints for this cell: the Holm-adjusted p when the correction decided
    /// the verdicts, else the cell's own. The one rule for every table (compare's text, the
    /// report's Markdown and HTML), so the same cell never shows two p values.
    pub fn table_p(&self) -> Option<f64> {
        self.p_holm.or(self.p)
    }
}

impl MetricReport {
    /// The header of a table's p column: `p (Holm)` when any cell's p is Holm-adjusted.
    pub fn p_header(&self) -> &'static str {
        if self.points.iter().any(|p| p.p_holm.is_some()) {
            "p (Holm)"
        } else {
            "p"
        }
    }
}

/// Where a sequential cell stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialCell {
    /// Its look number (1: after the first stage).
    pub look: usize,
    /// The repetition index of its last trials (the trials up to it are the cell's data).
    pub after_trial: u32,
    /// Information fraction of that look.
    pub fraction: f64,
    /// The look's z boundary.
    pub z_boundary: f64,
    /// Its nominal two-sided level.
    pub nominal_alpha: f64,
    /// Why it stopped (`null`: it never did — the run was cut short).
    pub stopped: Option<StopReason>,
}

/// A run of adjacent significant levels on one side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Region {
    /// First level's label.
    pub from: String,
    /// Last level's label.
    pub to: String,
    /// Better or worse.
    pub side: Side,
}

/// A sweep whose delta changes sign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossoverReport {
    /// The fixed keys of this sweep when the spec sweeps several keys (`in=512`), else empty.
    pub group: String,
    /// `true`: a crossover (a finding: one interleaved run, decided cells on both sides, none
    /// of them threatened by a re-baseline flag); `false`: a sign change that cannot be
    /// trusted yet (see `why_not`).
    pub sound: bool,
    /// In words: "the candidate is faster at c ≤ 4 and slower at c ≥ 16 (output_throughput,
    /// higher is better)".
    pub description: String,
    /// The regions alone: "faster at c ≤ 4 and slower at c ≥ 16" (the comparison's findings
    /// name the metrics that share it together).
    pub phrase: String,
    /// The regions, in sweep order.
    pub regions: Vec<Region>,
    /// Why a sign change is not reported as a crossover.
    pub why_not: Option<String>,
}

/// Advice for one undecided cell (likely improved, likely regressed, inconclusive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellAdvice {
    /// Short point label.
    pub point: String,
    /// Its verdict.
    pub verdict: VerdictKind,
    /// The change as measured (ratio − 1 on the log scale, difference on the arithmetic).
    pub change: Option<f64>,
    /// Trials per arm that would likely settle it, or "at the threshold".
    pub settle: Settle,
}

/// A `--fail-on` condition (docs/compare.md, "Gates"). The names are the spec's
/// `compare.gate.fail_on` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailOn {
    /// Some gated cell's interval is not wholly above −θ: the candidate is not *shown* to be
    /// no worse than θ (an undecided cell fails: the burden of proof is on the candidate).
    NotShownNonInferior,
    /// Some gated cell's verdict is not `improved`: the candidate is not shown to be better
    /// by more than θ.
    NotShownSuperior,
    /// Some gated cell is `regressed` (decided: beyond −θ).
    Regressed,
    /// Some gated cell is `regressed` or `likely-regressed` (significantly worse, by an
    /// amount that may be inside θ).
    LikelyRegressed,
    /// Some gated cell is `inconclusive`, or could not be compared.
    Inconclusive,
    /// Some re-baseline flag threatens a gated cell or the whole comparison.
    Suspicious,
    /// The candidate's outputs changed beyond the baseline's own variation (the
    /// equivalence verdict `changed`, docs/equivalence.md).
    OutputChanged,
    /// The candidate's task accuracy on the reference answers is significantly lower
    /// (`equivalence.accuracy.verdict` `lower`, docs/equivalence.md).
    AccuracyDropped,
}

impl FailOn {
    /// Every condition, in the order the help lists them.
    pub const ALL: [FailOn; 8] = [
        FailOn::NotShownNonInferior,
        FailOn::NotShownSuperior,
        FailOn::Regressed,
        FailOn::LikelyRegressed,
        FailOn::Inconclusive,
        FailOn::Suspicious,
        FailOn::OutputChanged,
        FailOn::AccuracyDropped,
    ];

    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::NotShownNonInferior => "not-shown-non-inferior",
            FailOn::NotShownSuperior => "not-shown-superior",
            FailOn::Regressed => "regressed",
            FailOn::LikelyRegressed => "likely-regressed",
            FailOn::Inconclusive => "inconclusive",
            FailOn::Suspicious => "suspicious",
            FailOn::OutputChanged => "output-changed",
            FailOn::AccuracyDropped => "accuracy-dropped",
        }
    }

    /// The condition named `name` (as `as_str` writes it).
    pub fn parse(name: &str) -> Option<FailOn> {
        FailOn::ALL.into_iter().find(|f| f.as_str() == name.trim())
    }

    /// The spec's condition of the same name.
    pub fn of(c: servebench_spec::types::GateCondition) -> FailOn {
        use servebench_spec::types::GateCondition as G;
        match c {
            G::NotShownNonInferior => FailOn::NotShownNonInferior,
            G::NotShownSuperior => FailOn::NotShownSuperior,
            G::Regressed => FailOn::Regressed,
            G::LikelyRegressed => FailOn::LikelyRegressed,
            G::Inconclusive => FailOn::Inconclusive,
            G::Suspicious => FailOn::Suspicious,
            G::OutputChanged => FailOn::OutputChanged,
            G::AccuracyDropped => FailOn::AccuracyDropped,
        }
    }
}

/// One gated cell as the gate read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatedCell {
    /// The candidate variant.
    pub candidate: String,
    /// The metric.
    pub metric: String,
    /// Short point label (`c=32`).
    pub point: String,
    /// The cell's verdict, as the table shows it.
    pub verdict: VerdictKind,
    /// The change with its interval, as the table shows it (ratio or difference).
    pub effect: Option<Estimate>,
    /// The gate's θ at this cell (the gate's `margin`, else the metric's threshold).
    pub margin: f64,
    /// Non-inferiority: shown, shown-not (wholly below −θ), not-shown; `null` when no
    /// interval could be computed.
    pub non_inferior: Option<Answer>,
    /// Superiority: shown (the verdict is improved), shown-not, not-shown.
    pub superior: Option<Answer>,
    /// The conditions this cell trips.
    pub trips: Vec<FailOn>,
}

/// The gates asked for and what tripped them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateOutcome {
    /// The conditions asked for.
    pub fail_on: Vec<FailOn>,
    /// Whether any tripped (exit code 1).
    pub tripped: bool,
    /// One sentence per reason.
    pub reasons: Vec<String>,
    /// The gated metrics (empty in files from before gates had a scope: every metric).
    #[serde(default)]
    pub metrics: Vec<String>,
    /// The gated points, as given (`c=32`); empty: every point.
    #[serde(default)]
    pub points: Vec<String>,
    /// The gate's own margin θ, when it sets one (else each metric's threshold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// Every gated cell with its answers (cell gates only).
    #[serde(default)]
    pub cells: Vec<GatedCell>,
}
