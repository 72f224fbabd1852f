//! servebench-compare: `servebench compare` — is the candidate really different from the
//! baseline, by how much, how sure are we, and can the measurement be trusted? — and
//! `servebench rerun` — does a published result reproduce?
//!
//! It reads result files (servebench-result) and judges them with servebench-stats; it
//! measures nothing. It must not depend on servebench-runner or servebench-report (the
//! report depends on it), nor on tokio, reqwest, tokenizers or plotters.
//!
//! * [`compare_within`] — every variant of one run against its baseline (the normal,
//!   interleaved case).
//! * [`compare_across`] — one variant of a first result file (the baseline) against one of a
//!   second: by default the first file's baseline variant against the variant of the same
//!   name in the second (or the second's baseline when it has no such variant). The
//!   fingerprints are compared field by field ([`fingerprint`]) and `stale-baseline` is
//!   always raised: between-session variance is missing from the standard error. Given the
//!   baseline run's own series ([`CompareOptions::baseline_series`], from
//!   servebench-history), the flag's evidence names each confirmed step of the baseline
//!   variant after the baseline run ([`series`]).
//!
//! * [`Sequential`]: the group-sequential design of `trials.until_decided`. Its
//!   [`Sequential::look`] is what the `servebench` binary hands the runner as its
//!   `Sequencer`; `compare` reads each cell at the look it stopped at.
//! * [`capacity`]: a capacity search's result (`spec.search`): each variant's capacity under
//!   the SLOs with its repeated interval, the ratios to the baseline with verdicts, and
//!   [`capacity::search_look`], the look the binary hands the runner as its `SearchJudge`.
//! * [`rerun`]: re-run the spec stored in a published result and judge, per variant, point
//!   and metric, whether each value reproduces.
//! * [`text`] and [`words`]: numbers, percentages, aligned columns and findings in words,
//!   shared with the report.
//!
//! The statistics are the stats crate's (docs/statistics-method.md): per-trial values are the samples,
//! positive metrics are compared as ratios of geometric means on the log scale and metrics
//! that can be 0 as differences of means; flags come from `assess_sweep` and the
//! multiplicity rule. This crate reads result files into that evidence (`evidence`),
//! assembles the [`CompareReport`] ([`report`]), renders it ([`render()`]) and evaluates the
//! `--fail-on` gates ([`gate`]).

mod analyze;
pub mod capacity;
mod comparison;
mod correction;
pub mod equivalence;
mod error;
mod evidence;
pub mod fingerprint;
pub mod gate;
pub mod headline;
mod host_load;
pub mod host_probe;
pub mod kernels;
pub mod levels;
pub mod render;
pub mod report;
pub mod rerun;
mod sequential;
pub mod series;
pub mod served;
mod telemetry;
pub mod text;
mod verify;
pub mod words;

use servebench_spec::metrics::{self, Direction as SpecDirection};
use servebench_spec::{SpecFile, Variant};
use servebench_stats::Direction;
use servebench_stats::flags::RuleSettings;

pub use error::CompareError;
pub use gate::{GateSpec, evaluate as evaluate_gates};
pub use render::render;
pub use report::*;

use analyze::MetricSpec;
use comparison::comparison;
use evidence::trial_counts;
pub use sequential::Sequential;
pub use series::{BaselineSeries, SeriesStep};
use servebench_result::{RunResult, RunStatus};

/// A result file and the path it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedResult {
    /// The path as given (used in messages).
    pub file: String,
    /// Its contents.
    pub result: RunResult,
}

/// Choices that override the baseline file's `spec.compare` settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompareOptions {
    /// Metrics to compare (default: `spec.compare.metrics`).
    pub metrics: Option<Vec<String>>,
    /// θ for every metric (default: `spec.compare.thresholds[metric]`, else `threshold`).
    pub threshold: Option<f64>,
    /// Significance level (default: `spec.compare.alpha`).
    pub alpha: Option<f64>,
    /// The baseline variant (default: the baseline file's `baseline: true` variant).
    pub baseline_variant: Option<String>,
    /// The candidate variant (default: within a run every other variant; across runs the
    /// same name as the baseline in the second file, else its baseline variant).
    pub candidate_variant: Option<String>,
    /// The flag rules' thresholds (default: `RuleSettings::default()`, the documented ones;
    /// α always comes from the settings above). `examples/calibrate_rules.rs` sweeps them.
    pub rules: Option<RuleSettings>,
    /// Across runs: the baseline run's own series (from servebench-history), whose
    /// confirmed steps after the baseline run go into the `stale-baseline` evidence.
    pub baseline_series: Option<BaselineSeries>,
    /// The correction for many tests (default: `spec.compare.multiplicity`, `holm`).
    pub multiplicity: Option<servebench_spec::types::Multiplicity>,
}

fn variants(r: &RunResult) -> &[Variant] {
    &r.spec.spec.variants
}

fn find_variant<'a>(lr: &'a LoadedResult, name: &str) -> Result<&'a Variant, CompareError> {
    variants(&lr.result)
        .iter()
        .find(|v| v.name == name)
        .ok_or_else(|| CompareError::UnknownVariant {
            name: name.to_owned(),
            file: lr.file.clone(),
            available: variants(&lr.result)
                .iter()
                .map(|v| v.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

fn baseline_of<'a>(lr: &'a LoadedResult, asked: Option<&str>) -> Result<&'a Variant, CompareError> {
    match asked {
        Some(n) => find_variant(lr, n),
        None => variants(&lr.result)
            .iter()
            .find(|v| v.baseline)
            .ok_or_else(|| CompareError::NoBaseline {
                file: lr.file.clone(),
            }),
    }
}

fn source(lr: &LoadedResult, v: &Variant) -> ArmSource {
    let patch = v.patch_words();
    ArmSource {
        file: lr.file.clone(),
        run_id: lr.result.run_id.clone(),
        origin: serde_name(&lr.result.origin),
        status: serde_name(&lr.result.status),
        variant: v.name.clone(),
        patch,
        tool_version: lr.result.tool.version.clone(),
    }
}

/// The serde name of a unit enum value (`complete`, `imported`).
fn serde_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "unknown".into(),
    }
}

/// Metrics and thresholds to use, checked against the catalogue.
pub(crate) fn metric_specs(
    spec: &SpecFile,
    opts: &CompareOptions,
) -> Result<(Vec<MetricSpec>, f64, Vec<String>), CompareError> {
    let settings = &spec.spec.compare;
    let alpha = opts.alpha.unwrap_or(settings.alpha);
    if !(alpha > 0.0 && alpha <= 0.5) {
        return Err(CompareError::InvalidSetting {
            name: "alpha".into(),
            value: alpha,
            why: "must be in (0, 0.5]",
        });
    }
    let names = opts
        .metrics
        .clone()
        .unwrap_or_else(|| settings.metrics.clone());
    let mut specs = Vec::new();
    let mut notes = Vec::new();
    for name in names {
        let m = metrics::metric(&name).ok_or(CompareError::UnknownMetric { name: name.clone() })?;
        let threshold = opts
            .threshold
            .or_else(|| settings.thresholds.get(&name).copied())
            .unwrap_or(settings.threshold);
        if !(threshold > 0.0 && threshold < 1.0) {
            return Err(CompareError::InvalidSetting {
                name: format!("threshold of {name}"),
                value: threshold,
                why: "must be in (0, 1)",
            });
        }
        let direction = match m.direction {
            SpecDirection::HigherIsBetter => Direction::HigherIsBetter,
            SpecDirection::LowerIsBetter => Direction::LowerIsBetter,
            SpecDirection::Neutral => {
                notes.push(format!(
                    "{name} is descriptive (no better direction): not compared"
                ));
                continue;
            }
        };
        specs.push(MetricSpec {
            name: m.name.clone(),
            unit: m.unit.to_owned(),
            direction,
            can_be_zero: m.can_be_zero,
            threshold,
        });
    }
    Ok((specs, alpha, notes))
}

fn status_note(lr: &LoadedResult, variant: &str) -> Option<String> {
    let (recorded, planned) = trial_counts(&lr.result, variant);
    // A sequential run plans its first stage and may add rounds up to `max` a cell: "10 of
    // 6 planned" would read as a miscount.
    let counted = match &lr.result.spec.spec.trials.until_decided {
        Some(u) if recorded > planned => format!(
            "{recorded} of at most {} trial(s) (first stage {planned}, sequential rounds after)",
            lr.result.points.len() * u.max as usize
        ),
        _ => format!("{recorded} of {planned} planned trial(s)"),
    };
    (lr.result.status != RunStatus::Complete || recorded < planned).then(|| {
        format!(
            "{} is not complete (status {}): {counted} of `{variant}` recorded",
            lr.file,
            serde_name(&lr.result.status)
        )
    })
}

fn report(alpha: f64, comparisons: Vec<Comparison>) -> CompareReport {
    CompareReport {
        format: REPORT_FORMAT.to_owned(),
        alpha,
        comparisons,
        gate: None,
        levels: None,
    }
}

/// Every variant of one run against its baseline (or `opts.candidate_variant` only).
pub fn compare_within(
    lr: &LoadedResult,
    opts: &CompareOptions,
) -> Result<CompareReport, CompareError> {
    let base_v = baseline_of(lr, opts.baseline_variant.as_deref())?;
    let candidates: Vec<&Variant> = match &opts.candidate_variant {
        Some(n) => {
            let v = find_variant(lr, n)?;
            if v.name == base_v.name {
                return Err(CompareError::SameArm {
                    name: v.name.clone(),
                });
            }
            vec![v]
        }
        None => variants(&lr.result)
            .iter()
            .filter(|v| v.name != base_v.name)
            .collect(),
    };
    if candidates.is_empty() {
        return Err(CompareError::NothingToCompare {
            file: lr.file.clone(),
            baseline: base_v.name.clone(),
        });
    }
    let (_, alpha, _) = metric_specs(&lr.result.spec, opts)?;
    let comparisons = candidates
        .into_iter()
        .map(|c| comparison(lr, base_v, lr, c, opts))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(report(alpha, comparisons))
}

/// The baseline variant of `base` against one variant of `cand` (module docs).
pub fn compare_across(
    base: &LoadedResult,
    cand: &LoadedResult,
    opts: &CompareOptions,
) -> Result<CompareReport, CompareError> {
    let base_v = baseline_of(base, opts.baseline_variant.as_deref())?;
    let mut fallback_note = None;
    let cand_v = match &opts.candidate_variant {
        Some(n) => find_variant(cand, n)?,
        None => match variants(&cand.result)
            .iter()
            .find(|v| v.name == base_v.name)
        {
            Some(v) => v,
            None => {
                let v = baseline_of(cand, None)?;
                fallback_note = Some(format!(
                    "{} has no variant `{}`: its baseline variant `{}` is the candidate",
                    cand.file, base_v.name, v.name
                ));
                v
            }
        },
    };
    if base.result.run_id == cand.result.run_id && base_v.name == cand_v.name {
        return Err(CompareError::SameArm {
            name: base_v.name.clone(),
        });
    }
    let (_, alpha, _) = metric_specs(&base.result.spec, opts)?;
    let mut c = comparison(base, base_v, cand, cand_v, opts)?;
    c.notes.extend(fallback_note);
    let mut r = report(alpha, vec![c]);
    // Two runs of one spec: their levels apart from the effects (every variant both have).
    if base.result.run_id != cand.result.run_id && base.result.spec_hash == cand.result.spec_hash {
        let (specs, _, _) = metric_specs(&base.result.spec, opts)?;
        let specs: Vec<_> = specs
            .iter()
            .filter_map(analyze::MetricSpec::level_metric)
            .collect();
        r.levels = Some(levels::between(&base.result, &cand.result, &specs, alpha));
    }
    Ok(r)
}
