//! `servebench compare RESULT` (every variant of one run against its baseline) and
//! `servebench compare BASELINE_RESULT CANDIDATE_RESULT` (across runs).

use std::path::PathBuf;

use anyhow::{Context, Result};
use servebench_compare::{
    FailOn, GateSpec, compare_across, compare_within, evaluate_gates, render,
};

use crate::exit::Exit;

/// Arguments of `compare`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "With one RESULT, every variant of that run is compared with its baseline \
                  variant. With two, the baseline variant of the first file is compared with \
                  the variant of the same name in the second (or the second's baseline \
                  variant when it has none); --baseline-variant / --candidate-variant pick \
                  others. Across runs the fingerprints are compared field by field and \
                  stale-baseline is always raised.\n\nExit codes: 0 success; 1 a --fail-on \
                  gate tripped, or nothing could be compared (no sweep point or metric in \
                  both); 2 usage or I/O error (unreadable file, unknown variant or \
                  metric)."
)]
pub(crate) struct Args {
    /// A result file (`results/<spec>/<run id>.json`): the run to compare within, or the
    /// baseline's run when a second file is given.
    result: PathBuf,
    /// A second result file: the candidate's run.
    candidate_result: Option<PathBuf>,
    /// Which variants and metrics, and the thresholds.
    #[command(flatten)]
    selection: super::Selection,
    /// Print the report as JSON (format `servebench-compare/2`, see docs/compare.md).
    #[arg(long)]
    json: bool,
    /// The gate: which conditions, at which metrics and points, with which margin.
    #[command(flatten)]
    gate: GateArgs,
    /// Across runs: result files or folders holding the baseline run's series (default: the
    /// folder of the first result file). A confirmed step of the baseline variant after the
    /// baseline run is added to the stale-baseline flag's evidence (docs/history.md).
    #[arg(long = "history", value_name = "PATH")]
    history: Vec<PathBuf>,
    /// Across runs: do not read the baseline run's series.
    #[arg(long, conflicts_with = "history")]
    no_history: bool,
}

/// The gate's options, shared by `compare` and `run` (docs/compare.md, "Gates").
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct GateArgs {
    /// Exit 1 when a gated cell is not shown no worse than −θ (`not-shown-non-inferior`:
    /// an undecided cell fails), is not shown better than +θ (`not-shown-superior`), is
    /// regressed beyond θ (`regressed`), regressed or likely regressed
    /// (`likely-regressed`), inconclusive (`inconclusive`), or a re-baseline flag threatens
    /// a gated cell (`suspicious`); or when the candidate's probe outputs changed
    /// (`output-changed`) or its accuracy on the reference answers dropped
    /// (`accuracy-dropped`, docs/equivalence.md); repeatable or a comma list; `none` turns the spec's
    /// `compare.gate.fail_on` off. Replaces the spec's conditions.
    #[arg(long, value_name = "WHAT", value_delimiter = ',', value_parser = parse_fail_on)]
    pub fail_on: Vec<Option<FailOn>>,
    /// The gated metrics (default: the spec's `compare.gate.metrics`, else every compared
    /// metric); repeatable or a comma list.
    #[arg(long = "gate-metric", value_name = "NAME", value_delimiter = ',')]
    pub gate_metrics: Vec<String>,
    /// The gated points, by their keys (`c=32`, `c=32 in=512`; default: the spec's
    /// `compare.gate.points`, else every point); repeatable.
    #[arg(long = "gate-point", value_name = "KEYS")]
    pub gate_points: Vec<String>,
    /// θ of the non-inferiority and superiority gates (e.g. 0.05), overriding the spec's
    /// `compare.gate.margin` and each metric's threshold.
    #[arg(long = "gate-margin", value_name = "FRACTION")]
    pub gate_margin: Option<f64>,
    /// Pass what the gate could not judge instead of failing on it: a gated cell without a
    /// verdict, a comparison with no gated cell (no sweep point in common), an output gate
    /// with no probe recorded (docs/ci.md, "What a gate cannot judge").
    #[arg(long)]
    pub allow_unjudged: bool,
}

impl GateArgs {
    /// The spec's gate with these options in its place; an error names a bad margin.
    pub(crate) fn resolve(&self, spec: &servebench_spec::SpecFile) -> Result<GateSpec> {
        if let Some(m) = self.gate_margin
            && !(m.is_finite() && m > 0.0 && m < 1.0)
        {
            anyhow::bail!(
                "--gate-margin {m}: the margin is a fraction in (0, 1), e.g. 0.05 for a 5% loss"
            );
        }
        let off = self.fail_on.iter().any(Option::is_none);
        let asked: Vec<FailOn> = self.fail_on.iter().flatten().copied().collect();
        if off && !asked.is_empty() {
            let names: Vec<&str> = asked.iter().map(|f| f.as_str()).collect();
            anyhow::bail!(
                "--fail-on holds `none` beside {}: `none` turns the gate off and the others \
                 turn it on; give `--fail-on none` alone, or the conditions without `none`",
                names.join(", ")
            );
        }
        let mut gate = GateSpec::of_spec(spec).overridden(
            &asked,
            &self.gate_metrics,
            &self.gate_points,
            self.gate_margin,
        );
        if off {
            gate.fail_on.clear();
        }
        gate.allow_unjudged = self.allow_unjudged;
        Ok(gate)
    }
}

fn parse_fail_on(s: &str) -> Result<Option<FailOn>, String> {
    if s.trim() == "none" {
        return Ok(None);
    }
    FailOn::parse(s).map(Some).ok_or_else(|| {
        let names: Vec<&str> = FailOn::ALL.iter().map(|f| f.as_str()).collect();
        format!(
            "`{}` is not a gate: use {}, or `none`",
            s.trim(),
            names.join(", ")
        )
    })
}

/// Check the gated metrics and points against the report: a name that matches nothing is a
/// usage error, not a gate that silently passes.
pub(crate) fn check_gate(
    gate: &GateSpec,
    report: &servebench_compare::CompareReport,
) -> Result<()> {
    let compared: Vec<&str> = report
        .comparisons
        .iter()
        .flat_map(|c| c.metrics.iter().map(|m| m.metric.as_str()))
        .collect();
    let labels: Vec<&str> = report
        .comparisons
        .iter()
        .flat_map(|c| c.metrics.iter().flat_map(|m| m.points.iter()))
        .map(|p| p.point_label.as_str())
        .collect();
    check_gate_names(gate, &compared, &labels)
}

/// [`check_gate`] on names: the gated metrics among `compared`, each gated point pattern
/// matching one of `labels`. `run` calls it on the spec before its first trial, so that a
/// misspelt `--gate-metric` does not cost the run.
pub(crate) fn check_gate_names(gate: &GateSpec, compared: &[&str], labels: &[&str]) -> Result<()> {
    if let Some(ms) = &gate.metrics {
        for m in ms {
            if !compared.contains(&m.as_str()) {
                anyhow::bail!(
                    "--gate-metric {m}: not a compared metric (compared: {}); add it with \
                     --metric or `compare.metrics`",
                    compared.join(", ")
                );
            }
        }
    }
    for pattern in &gate.points {
        let one = GateSpec {
            points: vec![pattern.clone()],
            ..GateSpec::default()
        };
        if !labels.iter().any(|l| one.gates_point(l)) {
            let mut all = labels.to_vec();
            all.sort_unstable();
            all.dedup();
            anyhow::bail!(
                "--gate-point `{pattern}` matches no compared point (the points: {}); write \
                 its keys as the labels do, e.g. `c=32`",
                all.join("; ")
            );
        }
    }
    Ok(())
}

/// Compare, print, and apply the gates.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let opts = args.selection.options();
    let first = super::load_result(&args.result)?;
    if first.result.spec.spec.search.is_some() {
        return capacity(&first, &args);
    }
    let mut report = match &args.candidate_result {
        None => compare_within(&first, &opts)?,
        Some(p) => {
            let mut opts = opts;
            let second = super::load_result(p)?;
            if !args.no_history {
                opts.baseline_series = series_of(&first, &second.result.run_id, &args, &opts);
            }
            compare_across(&first, &second, &opts)?
        }
    };
    let gate = args.gate.resolve(&first.result.spec)?;
    if gate.is_active() {
        check_gate(&gate, &report)?;
        report.gate = Some(evaluate_gates(&report, &gate));
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).context("serialising the report")?
        );
    } else {
        print!("{}", servebench_spec::text::printable(&render(&report)));
    }
    let nothing = report
        .comparisons
        .iter()
        .any(|c| servebench_compare::headline::nothing_compared(c).is_some());
    Ok(match &report.gate {
        Some(g) if g.tripped => Exit::Failed,
        // Nothing compared is the thing checked failing (docs/compare.md, exit codes), not
        // a success with empty tables — unless a gate was asked with `--allow-unjudged`,
        // the one opt-out for what could not be judged (docs/ci.md).
        _ if nothing && !(gate.is_active() && gate.allow_unjudged) => Exit::Failed,
        _ => Exit::Ok,
    })
}

/// A capacity search's result: each variant's capacity and the ratios (docs/search.md).
fn capacity(first: &servebench_compare::LoadedResult, args: &Args) -> Result<Exit> {
    use servebench_compare::capacity::{capacity_report, render_capacity};
    if args.candidate_result.is_some() {
        anyhow::bail!(
            "{} is a capacity search: comparing capacities across two result files is not \
             supported; compare the variants of one search (`servebench compare {}`), or \
             measure both in one spec's `variants`",
            first.file,
            first.file
        );
    }
    let Some(report) = capacity_report(&first.result) else {
        anyhow::bail!("{} has no search", first.file);
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).context("serialising the report")?
        );
    } else {
        print!(
            "{}",
            servebench_spec::text::printable(&render_capacity(&report))
        );
    }
    let gate = args.gate.resolve(&first.result.spec)?;
    Ok(if capacity_tripped(&report, &gate.fail_on)? {
        Exit::Failed
    } else {
        Exit::Ok
    })
}

/// Whether the gate trips on a capacity search: `regressed` and `likely-regressed` on the
/// verdict of each capacity ratio; the other conditions ask about cells a search does not
/// have, and are refused.
pub(crate) fn capacity_tripped(
    report: &servebench_compare::capacity::CapacityReport,
    fail_on: &[FailOn],
) -> Result<bool> {
    if let Some(f) = fail_on
        .iter()
        .find(|f| !matches!(f, FailOn::Regressed | FailOn::LikelyRegressed))
    {
        anyhow::bail!(
            "--fail-on {}: a capacity search is gated on its capacity ratios alone; use \
             `regressed` or `likely-regressed`",
            f.as_str()
        );
    }
    Ok(report.comparisons.iter().any(|c| {
        fail_on.iter().any(|g| match g {
            FailOn::Regressed => c.verdict == "regressed",
            _ => matches!(c.verdict.as_str(), "regressed" | "likely-regressed"),
        })
    }))
}

/// The baseline run's series (`--history`, else the folder of the first file).
fn series_of(
    first: &servebench_compare::LoadedResult,
    candidate_run: &str,
    args: &Args,
    opts: &servebench_compare::CompareOptions,
) -> Option<servebench_compare::BaselineSeries> {
    let sources = if args.history.is_empty() {
        let dir = args.result.parent().filter(|d| !d.as_os_str().is_empty());
        vec![dir.map_or_else(|| PathBuf::from("."), PathBuf::from)]
    } else {
        args.history.clone()
    };
    let variants = &first.result.spec.spec.variants;
    let variant = opts.baseline_variant.clone().or_else(|| {
        variants
            .iter()
            .find(|v| v.baseline)
            .or(variants.first())
            .map(|v| v.name.clone())
    })?;
    super::history::baseline_series(
        &sources,
        &first.result.run_id,
        candidate_run,
        &variant,
        opts.metrics.clone(),
    )
}
