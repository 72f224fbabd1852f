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
mod error;
mod evidence;
pub mod fingerprint;
pub mod gate;
pub mod render;
pub mod report;
pub mod rerun;
mod sequential;
pub mod series;
pub mod text;
pub mod words;

use servebench_spec::metrics::{self, Direction as SpecDirection};
use servebench_spec::{ServerRestart, SpecFile, TrialOrder, Variant};
use servebench_stats::Direction;
use servebench_stats::flags::rules::{load_not_sustained, multiplicity};
use servebench_stats::flags::{
    ComparisonContext, FingerprintDifference, Flag, RuleSettings, Threat,
};
use servebench_stats::sequential::Look;

pub use error::CompareError;
pub use gate::evaluate as evaluate_gates;
pub use render::render;
pub use report::*;

use analyze::{MetricSpec, PointInput, analyze_metric};
use evidence::{arm_point, match_points, trial_counts};
pub use sequential::Sequential;
pub use series::{BaselineSeries, SeriesStep};
use servebench_result::{RunResult, RunStatus, cell_stop_reason};

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
    let mut patch = v.server.args.clone();
    patch.extend(v.server.env.iter().map(|(k, val)| format!("{k}={val}")));
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
    (lr.result.status != RunStatus::Complete || recorded < planned).then(|| {
        format!(
            "{} is not complete (status {}): {recorded} of {planned} planned trial(s) of \
             `{variant}` recorded",
            lr.file,
            serde_name(&lr.result.status)
        )
    })
}

/// Build one comparison of `base_v` in `base` with `cand_v` in `cand`.
fn comparison(
    base: &LoadedResult,
    base_v: &Variant,
    cand: &LoadedResult,
    cand_v: &Variant,
    opts: &CompareOptions,
) -> Result<Comparison, CompareError> {
    let (specs, alpha, mut notes) = metric_specs(&base.result.spec, opts)?;
    let same_run = base.result.run_id == cand.result.run_id;
    let trials = &base.result.spec.spec.trials;
    let interleaved = same_run
        && trials.order != TrialOrder::Blocked
        && trials.server_restart != ServerRestart::Once;
    let (differences, fp_notes) = if same_run {
        (Vec::new(), Vec::new())
    } else {
        fingerprint::compare(&base.result, &cand.result)
    };
    if same_run && trials.server_restart == ServerRestart::Once {
        notes.push(
            "server_restart: once — each variant ran in one server start, so the variance \
             between starts is not in the standard error"
                .into(),
        );
    }
    if !same_run && base.result.spec.spec.compare != cand.result.spec.spec.compare {
        notes.push(format!(
            "the two files' compare settings differ: those of {} (the baseline's) are used",
            base.file
        ));
    }
    notes.extend(fp_notes);
    notes.extend(status_note(base, &base_v.name));
    if !same_run {
        notes.extend(status_note(cand, &cand_v.name));
    }
    let (pairs, point_notes) = match_points(&base.result, &cand.result);
    notes.extend(point_notes);
    let mut differences = differences;
    if pairs.is_empty() {
        let labels = |r: &RunResult| {
            let l: Vec<&str> = r.points.iter().map(|p| p.label.as_str()).collect();
            l.join("; ")
        };
        differences.push(FingerprintDifference {
            field: "sweep".into(),
            baseline: labels(&base.result),
            candidate: labels(&cand.result),
        });
    }
    let context = ComparisonContext {
        same_run,
        interleaved,
        fingerprint_differences: differences.clone(),
        baseline_run: Some(base.result.run_id.clone()),
        candidate_run: Some(cand.result.run_id.clone()),
    };
    let rules = RuleSettings {
        alpha,
        ..opts.rules.unwrap_or_default()
    };
    // A sequential run's cells are read at the look each stopped at, on its trials so far.
    let seq = if same_run && base_v.baseline {
        Sequential::of(&base.result)?
    } else {
        None
    };
    let stops: Vec<Option<(SequentialCell, Look)>> = pairs
        .iter()
        .map(|pair| {
            let s = seq.as_ref()?;
            let (t, look) = s.stop_of(&cand.result, &cand_v.name, pair.cand_point)?;
            let cell = SequentialCell {
                look: look.index,
                after_trial: t,
                fraction: look.fraction,
                z_boundary: look.z_boundary,
                nominal_alpha: look.nominal_alpha,
                stopped: cell_stop_reason(&cand.result.looks, &cand_v.name, pair.cand_point),
            };
            Some((cell, look))
        })
        .collect();
    if seq.is_some() {
        notes.push(
            "sequential run (trials.until_decided): each cell is read at the look it stopped \
             at, on the trials measured up to it, with its repeated confidence interval \
             (group-sequential boundary; docs/statistics-method.md): the intervals are wider \
             than a fixed-size run's, and keep the error rates at α across the looks"
                .into(),
        );
    }
    let mut metric_reports = Vec::new();
    let mut all_p = Vec::new();
    let mut flags = Vec::new();
    for spec in &specs {
        let Some(m) = metrics::metric(&spec.name) else {
            continue;
        };
        let inputs: Vec<PointInput> = pairs
            .iter()
            .zip(&stops)
            .map(|(pair, stop)| {
                let up_to = stop.as_ref().map(|(s, _)| s.after_trial);
                PointInput {
                    pair: pair.clone(),
                    base: arm_point(
                        &base.result,
                        &base_v.name,
                        pair.base_point,
                        pair.output_tokens,
                        &m,
                        up_to,
                    ),
                    cand: arm_point(
                        &cand.result,
                        &cand_v.name,
                        pair.cand_point,
                        pair.output_tokens,
                        &m,
                        up_to,
                    ),
                    look: stop.as_ref().map(|(_, look)| *look),
                }
            })
            .collect();
        let (mut report, p) = analyze_metric(spec, &inputs, &context, &rules);
        for row in &mut report.points {
            row.sequential = pairs
                .iter()
                .zip(&stops)
                .find(|(pair, _)| pair.label == row.label)
                .and_then(|(_, s)| s.as_ref().map(|(cell, _)| cell.clone()));
        }
        metric_reports.push(report);
        all_p.extend(p);
    }
    for pair in &pairs {
        flags.extend(load_flag(
            base,
            base_v,
            cand,
            cand_v,
            pair,
            &metric_reports,
            &rules,
        ));
    }
    flags.extend(multiplicity(&all_p, alpha).ok().flatten());
    let baseline_series = if same_run {
        None
    } else {
        opts.baseline_series.clone()
    };
    if let Some(series) = &baseline_series {
        let points: Vec<String> = pairs.iter().map(|p| p.point_label.clone()).collect();
        let mut any = false;
        for m in &mut metric_reports {
            any |= series::extend_flag(&mut m.flags, series, &m.metric, &points);
        }
        if !any {
            notes.push(format!(
                "the baseline run's series ({} runs in {}) has no confirmed step of `{}` after \
                 the baseline run at the compared metrics and points",
                series.runs, series.source, base_v.name
            ));
        }
    }
    let findings = words::findings(&metric_reports);
    Ok(Comparison {
        mode: if same_run {
            Mode::WithinRun
        } else {
            Mode::AcrossRuns
        },
        baseline: source(base, base_v),
        candidate: source(cand, cand_v),
        same_run,
        interleaved,
        fingerprint_differences: differences,
        notes,
        findings,
        metrics: metric_reports,
        flags,
        baseline_series,
    })
}

/// **load-not-sustained** at one point, from both arms' trial checks (whatever the metric:
/// the first metric's evidence carries them), threatening every metric's verdict there.
fn load_flag(
    base: &LoadedResult,
    base_v: &Variant,
    cand: &LoadedResult,
    cand_v: &Variant,
    pair: &evidence::PointPair,
    metrics: &[MetricReport],
    rules: &RuleSettings,
) -> Option<Flag> {
    let any = metrics::metric("output_throughput")?;
    let b = arm_point(
        &base.result,
        &base_v.name,
        pair.base_point,
        None,
        &any,
        None,
    );
    let c = arm_point(
        &cand.result,
        &cand_v.name,
        pair.cand_point,
        None,
        &any,
        None,
    );
    let flag = load_not_sustained(&pair.label, &b.evidence.trials, &c.evidence.trials, rules)?;
    let threats = metrics
        .iter()
        .filter_map(|m| {
            let row = m.points.iter().find(|p| p.label == pair.label)?;
            Some(Threat {
                metric: m.metric.clone(),
                point: pair.label.clone(),
                verdict: row.verdict.verdict(),
                otherwise: None,
            })
        })
        .collect();
    Some(flag.threatening(threats))
}

fn report(alpha: f64, comparisons: Vec<Comparison>) -> CompareReport {
    CompareReport {
        format: REPORT_FORMAT.to_owned(),
        alpha,
        comparisons,
        gate: None,
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
    Ok(report(alpha, vec![c]))
}
