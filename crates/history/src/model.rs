//! The history as one serde struct tree: what `servebench history --json` prints (format
//! [`HISTORY_FORMAT`]), what the text and the report are made from. Fields are only ever
//! added (with defaults); an incompatible change bumps the format.

use serde::{Deserialize, Serialize};
use servebench_stats::changepoint::{Rule, Status};
use servebench_stats::flags::FingerprintDifference;
use servebench_stats::verdict::Scale;
use servebench_stats::{ConfidenceInterval, Direction, Estimate};

/// Value of [`History::format`].
pub const HISTORY_FORMAT: &str = "servebench-history/1";

/// Everything `servebench history` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// [`HISTORY_FORMAT`].
    pub format: String,
    /// The instant ages are counted from (UTC RFC 3339).
    pub now: String,
    /// What was read: paths as given, or `git RANGE PATH…`.
    pub sources: Vec<String>,
    /// Files not read, each with why.
    pub skipped: Vec<Skipped>,
    /// One entry per spec name, never merged.
    pub specs: Vec<SpecHistory>,
    /// The `--fail-on` gate, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Gate>,
}

/// A file that was not read as a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// The file (`COMMIT:path` from git).
    pub file: String,
    /// Why, in words.
    pub reason: String,
}

/// The runs of one spec name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecHistory {
    /// `metadata.name`.
    pub spec_name: String,
    /// The run whose state changes are judged against ("new since"): `--since`, else the
    /// second newest run of the spec. `None` with a single run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Comparable series, oldest first.
    pub series: Vec<Series>,
}

/// Runs whose fingerprints match their predecessor's: one comparable series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// From 1, within the spec.
    pub number: usize,
    /// Why this series starts: how its first run differs from the run before it (absent for
    /// the first series).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts: Option<SeriesBreak>,
    /// The runs, oldest first; `RunRef::index` counts from 0 within the series.
    pub runs: Vec<RunInfo>,
    /// The spec's baseline variant (of the newest run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_variant: Option<String>,
    /// One entry per variant, metric and sweep point.
    pub cells: Vec<Cell>,
    /// The baseline variant's state per metric and point: the age of its latest run and
    /// whether it moved.
    pub baseline: Vec<BaselineState>,
}

/// The first run of a series and what changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesBreak {
    /// The run before it (the last of the previous series).
    pub previous_run: String,
    /// Fingerprint fields that differ (compare's rule), and `spec_hash` when the spec
    /// changed.
    pub differences: Vec<FingerprintDifference>,
}

/// One run of a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Its number among all runs of the spec, oldest first, from 1: what the text, the
    /// report and the trend plots call "run N".
    pub number: usize,
    /// Run id.
    pub run_id: String,
    /// Where it was read (`COMMIT:path` from git).
    pub file: String,
    /// Start time (UTC RFC 3339), which orders the runs.
    pub created_at: String,
    /// Canonical spec hash.
    pub spec_hash: String,
    /// Run status as last written (`complete`, `interrupted`…).
    pub status: String,
    /// Git commit of the spec's repository when it ran, if recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_sha: Option<String>,
    /// The commit that first holds the file, when read from a git range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// A run named in a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRef {
    /// Index among the series' runs, from 0.
    pub index: usize,
    /// Its number among all runs of the spec, from 1 ([`RunInfo::number`]).
    pub number: usize,
    /// Run id.
    pub run_id: String,
    /// Start time (UTC RFC 3339).
    pub created_at: String,
}

/// The series of one variant, metric and sweep point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The variant.
    pub variant: String,
    /// Catalogue name.
    pub metric: String,
    /// Unit of the values.
    pub unit: String,
    /// Which way is better (`None`: descriptive metric).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// `log`: run means are geometric and shifts are ratios; `arithmetic`: means and
    /// differences (metrics that can be 0).
    pub scale: Scale,
    /// The sweep point's full label.
    pub point: String,
    /// Its short label (the sweep keys that vary: `c=16`).
    pub label: String,
    /// Every run with a value, oldest first.
    pub runs: Vec<RunValues>,
    /// Change points, oldest first.
    pub change_points: Vec<ChangeReport>,
    /// Isolated outlier runs.
    pub outliers: Vec<OutlierReport>,
}

/// One run's trials at a cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunValues {
    /// Index among the series' runs.
    pub index: usize,
    /// The value of each ok trial, in run order.
    pub values: Vec<f64>,
    /// Mean across trials (geometric on the log scale).
    pub mean: f64,
    /// Its 95% interval (Student's t, on logs for the log scale); none below 3 trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<ConfidenceInterval>,
}

/// Whether a change is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    /// The metric got better.
    Better,
    /// The metric got worse.
    Worse,
    /// A descriptive metric moved.
    Moved,
}

/// One change point of a cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeReport {
    /// The first run at the new level.
    pub first_run_after: RunRef,
    /// The last run at the old level (outlier runs skipped).
    pub last_run_before: RunRef,
    /// Confirmed, or unconfirmed (only the newest run is off).
    pub status: Status,
    /// Which pass found it (docs/history.md).
    pub rule: Rule,
    /// After / before: a ratio of geometric means (log scale) or a difference of means, with
    /// its 95% interval (Student's pooled t over run means).
    pub shift: Estimate,
    /// p-value of the t-test between the two levels.
    pub p_value: f64,
    /// Runs at the old level (outlier runs left out).
    pub runs_before: usize,
    /// Runs at the new level.
    pub runs_after: usize,
    /// Better or worse, by the metric's direction.
    pub effect: Effect,
    /// Not confirmed as of the reference run (`SpecHistory::reference`): what
    /// `--fail-on step` reads.
    pub new: bool,
}

/// One isolated outlier run of a cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutlierReport {
    /// The run.
    pub run: RunRef,
    /// Its mean over the level of the runs around it (ratio, or difference).
    pub shift: f64,
}

/// The baseline variant at one metric and point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineState {
    /// Catalogue name.
    pub metric: String,
    /// Full point label.
    pub point: String,
    /// Short point label.
    pub label: String,
    /// The newest run of the baseline variant at its established level: the run before a
    /// new change, else the newest run.
    pub latest_run: RunRef,
    /// Days from `latest_run` to `History::now`.
    pub age_days: f64,
    /// The first run of that level.
    pub level_since: RunRef,
    /// The new change of the baseline variant since the reference run, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<ChangeReport>,
    /// The state in words ("baseline from 21 days ago; two later baseline runs are +8%
    /// [+5%, +11%]: re-baseline").
    pub message: String,
}

/// What `--fail-on step` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gate {
    /// The gates asked for (`step`).
    pub fail_on: Vec<String>,
    /// Whether any confirmed new step was found (exit 1).
    pub tripped: bool,
    /// Each confirmed new step, in words.
    pub confirmed: Vec<String>,
    /// Each unconfirmed change at the newest run, in words (said, not failed on).
    pub unconfirmed: Vec<String>,
}
