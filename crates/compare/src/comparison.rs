//! One comparison of a candidate variant with its baseline: every compared metric at every
//! matched point with its verdict, the flags of the sweep and of each point (load not
//! sustained among them), and the advice — what [`crate::compare_within`] and
//! [`crate::compare_across`] assemble into a report.

use servebench_result::{RunResult, cell_stop_reason};
use servebench_spec::metrics;
use servebench_spec::{ServerRestart, TrialOrder, Variant};
use servebench_stats::flags::NamedP;
use servebench_stats::flags::rules::load_not_sustained;
use servebench_stats::flags::{
    ComparisonContext, FingerprintDifference, Flag, RuleSettings, Threat,
};
use servebench_stats::sequential::Look;

use crate::analyze::{MetricSpec, PointInput, analyze_metric};
use crate::correction::Holm;
use crate::evidence::{self, arm_point, match_points};
use crate::{
    CompareError, CompareOptions, Comparison, LoadedResult, MetricReport, Mode, Sequential,
    SequentialCell, fingerprint, metric_specs, series, source, status_note, words,
};

/// Build one comparison of `base_v` in `base` with `cand_v` in `cand`.
pub(crate) fn comparison(
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
    notes.extend(opening_notes(base, base_v, cand, cand_v, same_run));
    let (pairs, differences) = matched_points(base, cand, same_run, &mut notes);
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
    let stops = sequential_stops(seq.as_ref(), cand, cand_v, &pairs, &mut notes);
    notes.extend(nested_notes(&base.result, &cand.result));
    let arms = Arms {
        base,
        base_v,
        cand,
        cand_v,
    };
    let inputs = metric_inputs(&specs, &pairs, &stops, &arms);
    let correction = opts
        .multiplicity
        .unwrap_or(base.result.spec.spec.compare.multiplicity);
    let holm = Holm::of(&inputs, alpha, correction, seq.is_some(), &mut notes);
    let (mut metric_reports, all_p) = analyze_all(&inputs, &context, &rules, &holm, &pairs, &stops);
    let flags = comparison_flags(&arms, &pairs, &metric_reports, &rules, &holm, &all_p, &seq);
    let baseline_series = if same_run {
        None
    } else {
        opts.baseline_series.clone()
    };
    if let Some(series) = &baseline_series {
        notes.extend(series_flags(
            series,
            &mut metric_reports,
            &pairs,
            &base_v.name,
        ));
    }
    let findings = words::findings(&metric_reports);
    let equivalence = crate::equivalence::equivalence(
        &base.result,
        &base_v.name,
        &cand.result,
        &cand_v.name,
        alpha,
    );
    let kernels = crate::kernels::kernels(&base.result, &base_v.name, &cand.result, &cand_v.name);
    let verify_failed =
        crate::verify::failures_of_both(&base.result, &base_v.name, &cand.result, &cand_v.name);
    let mut c = Comparison {
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
        equivalence,
        kernels,
        verify_failed: Vec::new(),
    };
    crate::verify::fold(&mut c, verify_failed);
    Ok(c)
}

/// The two arms compared: each run and its variant.
struct Arms<'a> {
    base: &'a LoadedResult,
    base_v: &'a Variant,
    cand: &'a LoadedResult,
    cand_v: &'a Variant,
}

/// The points both arms measured, and the fingerprint's differences between two runs (a
/// `sweep` difference when no point matches); their notes go to `notes`.
fn matched_points(
    base: &LoadedResult,
    cand: &LoadedResult,
    same_run: bool,
    notes: &mut Vec<String>,
) -> (Vec<evidence::PointPair>, Vec<FingerprintDifference>) {
    let (mut differences, fp_notes) = if same_run {
        (Vec::new(), Vec::new())
    } else {
        fingerprint::compare(&base.result, &cand.result)
    };
    notes.extend(fp_notes);
    let (pairs, point_notes) = match_points(&base.result, &cand.result);
    notes.extend(point_notes);
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
    (pairs, differences)
}

/// Per matched point, the look a sequential run's cell stopped at (none for a fixed-size
/// run); the sequential reading's note goes to `notes`.
fn sequential_stops(
    seq: Option<&Sequential>,
    cand: &LoadedResult,
    cand_v: &Variant,
    pairs: &[evidence::PointPair],
    notes: &mut Vec<String>,
) -> Vec<Option<(SequentialCell, Look)>> {
    if seq.is_some() {
        notes.push(
            "sequential run (trials.until_decided): each cell is read at the look it stopped \
             at, on the trials measured up to it, with its repeated confidence interval \
             (group-sequential boundary; docs/statistics-method.md): the intervals are wider \
             than a fixed-size run's, and keep the error rates at α across the looks"
                .into(),
        );
    }
    pairs
        .iter()
        .map(|pair| {
            let s = seq?;
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
        .collect()
}

/// Each compared metric's inputs: both arms' evidence at every matched point, cut at the
/// cell's sequential stop where there is one.
fn metric_inputs<'s>(
    specs: &'s [MetricSpec],
    pairs: &[evidence::PointPair],
    stops: &[Option<(SequentialCell, Look)>],
    arms: &Arms<'_>,
) -> Vec<(&'s MetricSpec, Vec<PointInput>)> {
    specs
        .iter()
        .filter_map(|spec| {
            let m = metrics::metric(&spec.name)?;
            let inputs = pairs
                .iter()
                .zip(stops)
                .map(|(pair, stop)| {
                    let up_to = stop.as_ref().map(|(s, _)| s.after_trial);
                    let arm = |r: &RunResult, v: &Variant, point| {
                        arm_point(r, &v.name, point, pair.output_tokens, &m, up_to)
                    };
                    PointInput {
                        pair: pair.clone(),
                        base: arm(&arms.base.result, arms.base_v, pair.base_point),
                        cand: arm(&arms.cand.result, arms.cand_v, pair.cand_point),
                        look: stop.as_ref().map(|(_, look)| *look),
                    }
                })
                .collect();
            Some((spec, inputs))
        })
        .collect()
}

/// Every metric analysed at every point, each row with its sequential look and Holm-adjusted
/// p; with every cell's test for the uncorrected multiplicity flag.
fn analyze_all(
    inputs: &[(&MetricSpec, Vec<PointInput>)],
    context: &ComparisonContext,
    rules: &RuleSettings,
    holm: &Holm,
    pairs: &[evidence::PointPair],
    stops: &[Option<(SequentialCell, Look)>],
) -> (Vec<MetricReport>, Vec<NamedP>) {
    let mut reports = Vec::new();
    let mut all_p = Vec::new();
    for (spec, inputs) in inputs {
        let (mut report, p) = analyze_metric(spec, inputs, context, rules, holm.levels.as_ref());
        for row in &mut report.points {
            row.sequential = pairs
                .iter()
                .zip(stops)
                .find(|(pair, _)| pair.label == row.label)
                .and_then(|(_, s)| s.as_ref().map(|(cell, _)| cell.clone()));
            row.p_holm = holm
                .adjusted
                .as_ref()
                .and_then(|a| a.get(&(report.metric.clone(), row.label.clone())))
                .copied();
        }
        reports.push(report);
        all_p.extend(p);
    }
    (reports, all_p)
}

/// The comparison's flags beyond each metric's own: load not sustained per point, telemetry,
/// host load, and many tests.
fn comparison_flags(
    arms: &Arms<'_>,
    pairs: &[evidence::PointPair],
    reports: &[MetricReport],
    rules: &RuleSettings,
    holm: &Holm,
    all_p: &[NamedP],
    seq: &Option<Sequential>,
) -> Vec<Flag> {
    let base = (&arms.base.result, arms.base_v.name.as_str());
    let cand = (&arms.cand.result, arms.cand_v.name.as_str());
    let mut flags: Vec<Flag> = pairs
        .iter()
        .filter_map(|pair| load_flag(arms, pair, reports, rules))
        .collect();
    flags.extend(crate::telemetry::flags(base, cand, pairs, reports));
    flags.extend(crate::host_load::flags(base, cand, pairs, reports));
    flags.extend(holm.flag(reports, all_p, seq.is_some(), rules.alpha));
    flags
}

/// The notes a comparison opens with: what the design leaves out of the standard error, whose
/// compare settings are used, and each run's status.
fn opening_notes(
    base: &LoadedResult,
    base_v: &Variant,
    cand: &LoadedResult,
    cand_v: &Variant,
    same_run: bool,
) -> Vec<String> {
    let mut notes = Vec::new();
    let trials = &base.result.spec.spec.trials;
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
    notes.extend(status_note(base, &base_v.name));
    if !same_run {
        notes.extend(status_note(cand, &cand_v.name));
    }
    notes.extend(takes_over_note(&base.result));
    if !same_run {
        notes.extend(takes_over_note(&cand.result));
    }
    notes
}

/// Fields servebench owns that the run's `request_body` set instead
/// (`workload.request_body_takes_over`): what it measured was sent with the user's values.
fn takes_over_note(r: &RunResult) -> Option<String> {
    let fields = &r.spec.spec.workload.request_body_takes_over;
    (!fields.is_empty()).then(|| {
        format!(
            "run {}: request_body set fields servebench otherwise owns ({}, \
             workload.request_body_takes_over): its requests carried the spec's values for them",
            r.run_id,
            fields.join(", ")
        )
    })
}

/// Cite the baseline run's confirmed steps in the metrics' stale-baseline flags; a note when
/// its series has none at the compared metrics and points.
fn series_flags(
    series: &series::BaselineSeries,
    metric_reports: &mut [MetricReport],
    pairs: &[evidence::PointPair],
    baseline: &str,
) -> Option<String> {
    let points: Vec<String> = pairs.iter().map(|p| p.point_label.clone()).collect();
    let names: Vec<String> = metric_reports.iter().map(|m| m.metric.clone()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let flags_of_metrics = metric_reports.iter_mut().flat_map(|m| m.flags.iter_mut());
    (!series::extend_flags(flags_of_metrics, series, &names, &points)).then(|| {
        format!(
            "the baseline run's series ({} runs in {}) has no confirmed step of `{}` after \
             the baseline run and before the candidate's at the compared metrics and points",
            series.runs, series.source, baseline
        )
    })
}

/// **load-not-sustained** at one point, from both arms' trial checks (whatever the metric:
/// the first metric's evidence carries them), threatening every metric's verdict there.
fn load_flag(
    arms: &Arms<'_>,
    pair: &evidence::PointPair,
    metrics: &[MetricReport],
    rules: &RuleSettings,
) -> Option<Flag> {
    let any = metrics::metric("output_throughput")?;
    let b = arm_point(
        &arms.base.result,
        &arms.base_v.name,
        pair.base_point,
        None,
        &any,
        None,
    );
    let c = arm_point(
        &arms.cand.result,
        &arms.cand_v.name,
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

/// What a nested design means for the reading, and where each run's wall time went
/// (`result::costs`): starting, warming, measuring, cooling.
fn nested_notes(base: &RunResult, cand: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    let k = base.spec.spec.trials.per_start;
    if k > 1 {
        out.push(format!(
            "{k} trials of every cell per server start (trials.per_start): the start is the \
             unit of analysis — each start's trials are read as their geometric mean (the mean \
             for metrics that can be 0), and n counts starts"
        ));
    }
    let runs: Vec<&RunResult> = if base.run_id == cand.run_id {
        vec![base]
    } else {
        vec![base, cand]
    };
    for r in runs {
        if r.servers.is_empty() {
            continue;
        }
        let split = servebench_result::costs::wall_split(r);
        if split.total_s > 0.0 {
            out.push(format!("run {}: {}", r.run_id, split.line()));
        }
    }
    out
}
