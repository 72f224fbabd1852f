//! One module per subcommand.

pub(crate) mod compare;
pub(crate) mod export;
pub(crate) mod from;
pub(crate) mod history;
pub(crate) mod import;
pub(crate) mod plan;
pub(crate) mod probe;
pub(crate) mod report;
pub(crate) mod rerun;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod sim;
pub(crate) mod submit;
pub(crate) mod validate;

use std::path::Path;

use anyhow::{Context, Result};
use servebench_spec::overrides::{self, Override, OverrideError};
use servebench_spec::{LoadError, Spec};

/// Load a spec; `Ok(None)` after printing its problems when it is invalid.
pub(crate) fn load_spec(path: &Path) -> Result<Option<Spec>> {
    match servebench_spec::load(path) {
        Ok(spec) => Ok(Some(spec)),
        Err(LoadError::Invalid(errors)) => {
            eprintln!("{errors}");
            Ok(None)
        }
        Err(e @ LoadError::Io { .. }) => Err(e.into()),
    }
}

/// `--set KEY=VALUE` and its short forms, shared by `run`, `plan` and `validate`: what `run`
/// would measure is what `plan` shows and `validate` checks.
#[derive(Debug, Default, clap::Args)]
pub(crate) struct SpecOverrides {
    /// Override a spec field by its dotted path below `spec:`, KEY=VALUE, the value read
    /// as YAML (repeatable, applied in order): `workload.requests=200`,
    /// `sweep.max_concurrency=[64,256]`, `target.base_url=http://host:8000`. The resolved
    /// spec is validated like the file.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Short for `--set workload.requests=N`.
    #[arg(long, value_name = "N")]
    pub requests: Option<u32>,
    /// Short for `--set sweep.max_concurrency=[N,…]` (comma-separated levels).
    #[arg(long, short = 'c', value_name = "N,…", value_delimiter = ',')]
    pub concurrency: Vec<u32>,
    /// Short for `--set trials.count=N`.
    #[arg(long, value_name = "N")]
    pub trials: Option<u32>,
}

impl SpecOverrides {
    /// `--set` and the short forms, in that order (a short form wins over a `--set` of the
    /// same key).
    pub(crate) fn list(&self) -> Result<Vec<Override>> {
        let mut out = self
            .set
            .iter()
            .map(|s| Override::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        let short = |key: &str, value: String| Override {
            key: key.to_owned(),
            value,
        };
        if let Some(n) = self.requests {
            out.push(short("workload.requests", n.to_string()));
        }
        if !self.concurrency.is_empty() {
            let levels: Vec<String> = self.concurrency.iter().map(u32::to_string).collect();
            out.push(short(
                "sweep.max_concurrency",
                format!("[{}]", levels.join(", ")),
            ));
        }
        if let Some(n) = self.trials {
            out.push(short("trials.count", n.to_string()));
        }
        Ok(out)
    }
}

/// `spec` with `overrides` applied and checked like the file; `Ok(None)` after printing the
/// problems when the result is invalid.
pub(crate) fn apply_overrides(
    spec: Spec,
    overrides: &[Override],
    file: &str,
) -> Result<Option<Spec>> {
    match overrides::apply(&spec, overrides, file) {
        Ok(s) => Ok(Some(s)),
        Err(OverrideError::Invalid(errors)) => {
            eprintln!("{errors}");
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// Print a spec's warnings to stderr.
pub(crate) fn print_warnings(spec: &Spec, file: &str) {
    for w in &spec.warnings {
        eprintln!("{}", w.render(file));
    }
}

/// Read a result file for comparison (`compare`, `report`, `rerun`).
pub(crate) fn load_result(path: &Path) -> Result<servebench_compare::LoadedResult> {
    let result = servebench_result::load_result(path)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(servebench_compare::LoadedResult {
        file: path.display().to_string(),
        result,
    })
}

/// Variant, metric and threshold choices shared by `compare` and `report`.
#[derive(Debug, clap::Args)]
pub(crate) struct Selection {
    /// The baseline variant (default: the `baseline: true` variant of the first file).
    #[arg(long, value_name = "NAME")]
    pub baseline_variant: Option<String>,
    /// The candidate variant (default: every other variant within a run; across runs the
    /// baseline's name, else the second file's baseline variant).
    #[arg(long, value_name = "NAME")]
    pub candidate_variant: Option<String>,
    /// Metrics and thresholds.
    #[command(flatten)]
    pub measures: Measures,
}

/// Metric and threshold choices (`rerun` takes these alone: it checks every variant).
#[derive(Debug, clap::Args)]
pub(crate) struct Measures {
    /// Metrics to compare, overriding the spec's `compare.metrics` (repeatable or a comma
    /// list).
    #[arg(long = "metric", value_name = "NAME", value_delimiter = ',')]
    pub metrics: Vec<String>,
    /// Practical threshold θ for every metric (e.g. 0.02), overriding the spec's.
    #[arg(long, value_name = "FRACTION")]
    pub threshold: Option<f64>,
    /// Significance level α, overriding the spec's `compare.alpha`.
    #[arg(long, value_name = "ALPHA")]
    pub alpha: Option<f64>,
}

impl Measures {
    /// As the comparison's options, variants left to their defaults.
    pub(crate) fn options(&self) -> servebench_compare::CompareOptions {
        servebench_compare::CompareOptions {
            metrics: (!self.metrics.is_empty()).then(|| self.metrics.clone()),
            threshold: self.threshold,
            alpha: self.alpha,
            baseline_variant: None,
            candidate_variant: None,
            rules: None,
            baseline_series: None,
        }
    }
}

impl Selection {
    /// As the comparison's options.
    pub(crate) fn options(&self) -> servebench_compare::CompareOptions {
        servebench_compare::CompareOptions {
            baseline_variant: self.baseline_variant.clone(),
            candidate_variant: self.candidate_variant.clone(),
            ..self.measures.options()
        }
    }
}
