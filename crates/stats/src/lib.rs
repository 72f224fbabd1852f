//! servebench-stats: pure statistics over slices and histograms (no I/O, no async). The
//! bottom layer with servebench-spec: it depends on no other servebench crate and knows no
//! metric names or file formats.
//!
//! The method is docs/statistics-method.md. Trials are the unit of analysis: per-request samples of one
//! trial are summarised, and comparisons run on per-trial values. Every function names its
//! method and a reference in its doc comment; every formula is checked against scipy / numpy /
//! statsmodels vectors in `tests/reference/`.
//!
//! # Public API at a glance
//!
//! **Summarising one trial** (runner)
//! - [`percentile::percentile_sorted`]`(&[f64], q) -> Option<f64>` — THE percentile
//!   (Hyndman–Fan type 7 = numpy linear); [`percentile::percentiles`], [`percentile::median`].
//! - [`summary::summarize`]`(&[f64], qs) -> Result<Summary>` — count, mean, SD, min, max and
//!   quantiles, each marked `reportable` when the trial has ≥ `ln(1−0.99)/ln q` values.
//! - [`histogram::new_histogram`]`(sigfig)`, [`histogram::histogram_from_values`],
//!   [`histogram::histogram_percentile`]`(&Histogram<u64>, q) -> Option<f64>` (same type-7 rule
//!   over bucket midpoints, error ≤ [`histogram::relative_error_bound`]`(sigfig)` = 1/2048 at
//!   3 digits), [`histogram::histogram_mean`], [`histogram::merge_histograms`].
//! - [`histogram_codec::encode_histogram`] / [`histogram_codec::decode_histogram`] — base64 of
//!   the HdrHistogram V2 deflate format; serde field adapter
//!   `#[serde(with = "servebench_stats::histogram_codec::base64_v2")]`.
//! - [`order_stat::min_requests_for_quantile`]`(q, c) -> Option<u64>` (44 / 459 / 4603 for
//!   p90 / p99 / p99.9 at c = 0.99) and [`order_stat::quantile_ci_sorted`] (within-trial
//!   order-statistic interval, diagnostic).
//!
//! **Across trials**
//! - [`interval::geometric_mean_ci`]`(&[f64], level) -> Result<Estimate>` (log-scale t) and
//!   [`interval::mean_ci`] (raw t); fewer than 3 trials →
//!   [`StatsError::TooFewSamples`] ("no interval").
//! - [`bootstrap::cluster_bootstrap_percentile`]`(&[Histogram<u64>], q, &BootstrapSettings)` —
//!   resample whole trials, merge, read the percentile; B ≥ 2000, ChaCha8 seeded.
//!
//! **Comparing a baseline with a candidate** (compare)
//! - [`verdict::compare_arms`]`(baseline, candidate, Direction, threshold θ, alpha) ->
//!   Result<ArmComparison>` — Welch on logs, ratio CI, [`Verdict`] (improved, regressed,
//!   equivalent, likely improved, likely regressed, inconclusive).
//! - [`advice::settle`]`(&ArmComparison) -> Option<Settle>` — for an undecided verdict only:
//!   the trials per arm that would settle it, or "at the threshold" in words.
//! - [`verdict::compare_arms_arithmetic`]`(…, Margin, alpha)` — for metrics that can be 0.
//! - [`verdict::ArmComparison::tested_at`]`(level)` — the same comparison with its test of
//!   "no difference" read at another level (Holm's, from [`holm::holm_levels`]).
//! - [`gate::answer`]`(Question, &ci, margin, Direction) -> Answer` — non-inferiority or
//!   superiority of one cell, read on its interval (fixed or repeated);
//!   [`gate::trials_to_pass`] the trials per arm at which an A/A passes a gate of k cells.
//! - Building blocks: [`welch::welch`], [`welch::welch_log_ratio`],
//!   [`mann_whitney::mann_whitney`] (exact / normal, with `min_attainable_p`),
//!   [`mann_whitney::hodges_lehmann`], [`power::sample_size`],
//!   [`power::minimum_detectable_effect`], [`holm::holm_adjust`], [`holm::holm_levels`],
//!   [`spearman::spearman`],
//!   [`robust::robust_z`], [`cochran::cochran_q`], [`distributions::t_quantile`].
//!
//! **Across runs** ([`changepoint`]: a series of run values, one per run)
//! - [`changepoint::detect`]`(&[f64], &changepoint::Settings) -> Result<Detection>` —
//!   isolated outlier runs (prediction intervals on both sides), change points by binary
//!   segmentation with a permutation test of the maximal two-sample t, each confirmed by a
//!   t-test between its adjacent segments, and the newest runs by the persistence rule
//!   (confirmed after two runs off, unconfirmed after one).
//! - Building blocks: [`changepoint::max_t_split`], [`changepoint::permutation_p`],
//!   [`student::pooled`] (Student's pooled-variance two-sample t),
//!   [`interval::prediction_interval`].
//!
//! **Sequential trials** ([`sequential`]: repeated confidence intervals, Lan–DeMets spending)
//! - [`sequential::SequentialDesign::new`]`(SpendingFunction, alpha, max_trials_per_arm)`,
//!   then [`sequential::SequentialDesign::looks`]`(&[(n_baseline, n_candidate)]) ->
//!   Result<Vec<Look>>` — every look so far, the current one last (information fraction, z
//!   boundary, nominal level).
//! - [`sequential::compare_arms_sequential`]`(baseline, candidate, Direction, θ, &Look) ->
//!   Result<SequentialComparison>` and [`sequential::compare_arms_arithmetic_sequential`]`(…,
//!   Margin, &Look)` — the fixed-sample verdict rule read on the RCI; `stop` says the cell is
//!   done (decided, or the budget is spent).
//! - Building blocks: [`sequential::boundaries`], [`sequential::exit_probabilities`],
//!   [`sequential::repeated_ci`], [`sequential::nominal_alpha`], [`sequential::t_boundary`].
//!
//! **Output equivalence** ([`outputs`]: prompts are the units)
//! - [`outputs::divergence`]`(&[PromptStarts], alpha, margin) -> Result<Divergence>` — the
//!   share of differing outputs between a baseline's own server starts and between baseline
//!   and candidate, the permutation test of "the candidate diverges more", Newcombe's interval
//!   on the difference of the shares, the verdict (unchanged, changed, inconclusive) and the
//!   prompts that would settle an inconclusive one.
//! - [`outputs::accuracy::paired_accuracy`]`(&[(bool, bool)], alpha, margin)` — accuracy
//!   against reference answers: McNemar's exact test, Newcombe's interval on the difference.
//! - Building blocks: [`outputs::interval::wilson`], [`outputs::interval::paired_difference`],
//!   [`outputs::divergence_permutation`], [`outputs::accuracy::mcnemar_exact`],
//!   [`distributions::normal_quantile`].
//!
//! **Flags** ([`flags`])
//! - Fill one [`flags::PointComparison::new`]`(label, level, ArmEvidence, ArmEvidence,
//!   &MetricSettings, alpha)` per sweep point (trial values in run order, optional history
//!   and per-trial [`flags::TrialCheck`]s), and a [`flags::ComparisonContext`] (same run?
//!   interleaved? fingerprint differences).
//! - [`flags::assess_sweep`]`(&MetricSettings, &[PointComparison], &ComparisonContext,
//!   &RuleSettings) -> SweepAssessment { flags, crossover, heterogeneity,
//!   recommended_trials, p_values }`, once per metric.
//! - [`flags::rules::multiplicity`]`(&[NamedP], alpha)` once over all metrics × levels (pool
//!   every `SweepAssessment::p_values`).
//! - [`flags::rules::load_not_sustained`] once per closed-loop sweep point.
//! - Each [`flags::Flag`] is `{ id, level: re-baseline | look, evidence, threatens, action }`,
//!   serde-able; `threatens` names the verdicts it could change (and what they would be
//!   without the trial or trend it found).
//!
//! Errors are [`StatsError`]; library paths do not panic on data.

pub mod advice;
pub mod bootstrap;
pub mod changepoint;
pub mod cochran;
pub mod distributions;
pub mod error;
pub mod estimate;
pub mod flags;
pub mod gate;
pub mod histogram;
pub mod histogram_codec;
pub mod holm;
pub mod interval;
pub mod levels;
pub mod mann_whitney;
pub mod nested;
pub mod order_stat;
pub mod outputs;
pub mod percentile;
pub mod power;
pub mod rank;
pub mod reproduce;
pub mod robust;
pub mod sequential;
pub mod spearman;
pub mod student;
pub mod summary;
pub mod verdict;
pub mod welch;

pub use error::StatsError;
pub use estimate::{ConfidenceInterval, Estimate};
pub use flags::{
    ComparisonContext, Flag, FlagId, FlagLevel, PointComparison, SweepAssessment, assess_sweep,
};
pub use percentile::percentile_sorted;
pub use verdict::{
    ArmComparison, Direction, Margin, Verdict, compare_arms, compare_arms_arithmetic,
};

/// Re-export of the histogram type the histogram functions take.
pub use hdrhistogram::Histogram;
