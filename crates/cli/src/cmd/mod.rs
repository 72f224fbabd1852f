//! One module per subcommand.

pub(crate) mod compare;
pub(crate) mod design;
pub(crate) mod export;
pub(crate) mod from;
pub(crate) mod history;
pub(crate) mod import;
pub(crate) mod kernels;
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

/// The file that names a folder's newest run: `results/<spec name>/latest`, written by
/// `run` after every run (one line: the result file's name).
pub(crate) const LATEST: &str = "latest";

/// The result file `path` means: itself; for a `latest` file, the result file it names (in
/// its folder); for a folder, the result file its `latest` names.
pub(crate) fn resolve_result(path: &Path) -> Result<std::path::PathBuf> {
    let latest = if path.is_dir() {
        path.join(LATEST)
    } else if path.file_name().is_some_and(|n| n == LATEST) {
        path.to_path_buf()
    } else {
        return Ok(path.to_path_buf());
    };
    let text = std::fs::read_to_string(&latest).with_context(|| {
        format!(
            "reading {} (the newest run of a results folder; `servebench run` writes it)",
            latest.display()
        )
    })?;
    let name = text.lines().next().unwrap_or("").trim();
    if name.is_empty() || name.contains('/') || name.contains('\\') {
        anyhow::bail!(
            "{}: expected one line naming a result file of its folder, e.g. \
             `20261130T153438Z-3469.json`; found `{name}`",
            latest.display()
        );
    }
    Ok(latest.with_file_name(name))
}

/// Record `result_path` as its folder's newest run (`<folder>/latest`), atomically.
pub(crate) fn write_latest(result_path: &Path) -> Result<()> {
    let (Some(dir), Some(name)) = (result_path.parent(), result_path.file_name()) else {
        return Ok(());
    };
    let tmp = dir.join(format!(".{LATEST}.tmp"));
    std::fs::write(&tmp, format!("{}\n", name.to_string_lossy()))
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join(LATEST))
        .with_context(|| format!("writing {}", dir.join(LATEST).display()))?;
    Ok(())
}

/// Read a result file for comparison (`compare`, `report`, `rerun`); `latest` and a results
/// folder mean the newest run ([`resolve_result`]).
pub(crate) fn load_result(path: &Path) -> Result<servebench_compare::LoadedResult> {
    let resolved = resolve_result(path)?;
    let result = servebench_result::load_result(&resolved)
        .with_context(|| format!("reading {}", resolved.display()))?;
    Ok(servebench_compare::LoadedResult {
        file: resolved.display().to_string(),
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
    /// The correction for many tests, overriding the spec's `compare.multiplicity`: `holm`
    /// (Holm's step-down decides every verdict) or `none` (each cell at its own α).
    #[arg(long, value_enum, value_name = "HOW")]
    pub multiplicity: Option<MultiplicityArg>,
}

/// `--multiplicity` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MultiplicityArg {
    /// Holm's step-down over every metric × point.
    Holm,
    /// Each cell at its own α.
    None,
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
            multiplicity: self.multiplicity.map(|m| match m {
                MultiplicityArg::Holm => servebench_spec::types::Multiplicity::Holm,
                MultiplicityArg::None => servebench_spec::types::Multiplicity::None,
            }),
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
