//! One comparison of a candidate variant with its baseline: every compared metric at every
//! matched point with its verdict, the flags of the sweep and of each point (load not
//! sustained among them), and the advice — what [`crate::compare_within`] and
//! [`crate::compare_across`] assemble into a report.

use servebench_result::{RunResult, cell_stop_reason};
use servebench_spec::metrics;
use servebench_spec::types::Multiplicity;
use servebench_spec::{ServerRestart, TrialOrder, Variant};
use servebench_stats::flags::NamedP;
use servebench_stats::flags::rules::{load_not_sustained, multiplicity, multiplicity_applied};
use servebench_stats::flags::{
    ComparisonContext, FingerprintDifference, Flag, RuleSettings, Threat,
};
use servebench_stats::holm::{holm_adjust, holm_levels};
use servebench_stats::sequential::Look;
use servebench_stats::verdict::Verdict;

use crate::analyze::{CellLevels, MetricSpec, PointInput, analyze_metric, cell_tests};
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
    let (differences, fp_notes) = if same_run {
        (Vec::new(), Vec::new())
    } else {
        fingerprint::compare(&base.result, &cand.result)
    };
    notes.extend(opening_notes(base, base_v, cand, cand_v, same_run));
    notes.extend(fp_notes);
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
    notes.extend(nested_notes(&base.result, &cand.result));
    let inputs_by_metric: Vec<(&MetricSpec, Vec<PointInput>)> = specs
        .iter()
        .filter_map(|spec| {
            let m = metrics::metric(&spec.name)?;
            let inputs = pairs
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
            Some((spec, inputs))
        })
        .collect();
    // Many tests: with Holm's correction (the default) every cell's test is read at its
    // Holm level, so the verdicts shown are the corrected ones (docs/compare.md). A
    // sequential run's cells are read on their repeated intervals at their own looks: the
    // design keeps each cell's error rates at α, and no correction is applied on top.
    let correction = opts
        .multiplicity
        .unwrap_or(base.result.spec.spec.compare.multiplicity);
    let own: Vec<NamedP> = inputs_by_metric
        .iter()
        .flat_map(|(spec, inputs)| cell_tests(spec, inputs, alpha))
        .collect();
    let corrected = correction == Multiplicity::Holm && seq.is_none() && own.len() >= 2;
    let (levels, adjusted) = if corrected {
        let ps: Vec<f64> = own.iter().map(|t| t.p).collect();
        let keyed = |v: Vec<f64>| -> CellLevels {
            own.iter()
                .zip(v)
                .map(|(t, x)| ((t.metric.clone(), t.point.clone()), x))
                .collect()
        };
        match (holm_levels(&ps, alpha), holm_adjust(&ps)) {
            (Ok(l), Ok(a)) => (Some(keyed(l)), Some(keyed(a))),
            _ => (None, None),
        }
    } else {
        (None, None)
    };
    if let (true, Some(_)) = (corrected, &levels) {
        notes.push(format!(
            "verdicts corrected for {} tests (Holm's step-down over every metric × point, \
             compare.multiplicity: holm): a cell is significant when its Holm-adjusted p, the \
             table's p, is below α = {alpha}",
            own.len()
        ));
    }
    if seq.is_some() && correction == Multiplicity::Holm && own.len() >= 2 {
        notes.push(
            "no correction for many tests: each cell of a sequential run is read on its own \
             repeated interval, whose design keeps that cell's error rates at α"
                .into(),
        );
    }
    let mut metric_reports = Vec::new();
    let mut all_p = Vec::new();
    let mut flags = Vec::new();
    for (spec, inputs) in &inputs_by_metric {
        let (mut report, p) = analyze_metric(spec, inputs, &context, &rules, levels.as_ref());
        for row in &mut report.points {
            row.sequential = pairs
                .iter()
                .zip(&stops)
                .find(|(pair, _)| pair.label == row.label)
                .and_then(|(_, s)| s.as_ref().map(|(cell, _)| cell.clone()));
            row.p_holm = adjusted
                .as_ref()
                .and_then(|a| a.get(&(report.metric.clone(), row.label.clone())))
                .copied();
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
    flags.extend(crate::telemetry::flags(
        (&base.result, &base_v.name),
        (&cand.result, &cand_v.name),
        &pairs,
        &metric_reports,
    ));
    flags.extend(crate::host_load::flags(
        (&base.result, &base_v.name),
        (&cand.result, &cand_v.name),
        &pairs,
        &metric_reports,
    ));
    if corrected {
        let shown: Vec<Verdict> = own
            .iter()
            .map(|t| {
                metric_reports
                    .iter()
                    .find(|m| m.metric == t.metric)
                    .and_then(|m| m.points.iter().find(|p| p.label == t.point))
                    .and_then(|p| p.verdict.verdict())
                    .unwrap_or(t.verdict)
            })
            .collect();
        flags.extend(multiplicity_applied(&own, &shown, alpha).ok().flatten());
    } else if seq.is_none() {
        flags.extend(multiplicity(&all_p, alpha).ok().flatten());
    }
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
    notes
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
