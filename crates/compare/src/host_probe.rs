//! The host probe's figures of a run (servebench_runner's `hostprobe`: the probe run when the
//! run began and before each server start), compared between two runs: in the fingerprint,
//! where a figure that moved by more than the probe's own measured repeatability is a
//! difference (docs/statistics-measured.md, "Host probe"), and beside a re-run's level
//! shift. A run without the probe (older results, imported ones) is never different by it.

use servebench_result::{HostProbe, RunResult};
use servebench_stats::percentile::median;

/// One figure of the probe: its field, its unit, and the smallest relative change that
/// counts as a difference. Two runs differ in a figure when the medians of their probes are
/// farther apart than both this floor and three standard errors of the difference, read
/// from the spread of each run's own probes (a loaded host's probes spread wide, and its
/// noise does not split series: docs/statistics-measured.md, "Host probe").
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    /// Field name under `host_probe.`.
    pub field: &'static str,
    /// Unit.
    pub unit: &'static str,
    /// The smallest relative change that is a difference.
    pub tolerance: f64,
    read: fn(&HostProbe) -> f64,
}

/// The figures compared.
pub const FIGURES: [Figure; 3] = [
    Figure {
        field: "single_thread",
        unit: "M rounds/s",
        tolerance: 0.08,
        read: |p| p.single_thread,
    },
    Figure {
        field: "all_core",
        unit: "M rounds/s",
        tolerance: 0.05,
        read: |p| p.all_core,
    },
    Figure {
        field: "memory_gbps",
        unit: "GB/s",
        tolerance: 0.40,
        read: |p| p.memory_gbps,
    },
];

/// A run's probe figures: the median of each over every probe it recorded (when it began
/// and before each server start), with the probes' version, scope and count.
#[derive(Debug, Clone, PartialEq)]
pub struct RunProbe {
    /// The probe's version.
    pub version: u32,
    /// `server-host` or `client-host`.
    pub scope: String,
    /// Probes summarised.
    pub count: usize,
    /// Median of each of [`FIGURES`], in order.
    pub values: [f64; 3],
    /// Standard error of the log of each median (`1.2533 · SD(ln x) / √n`), from three
    /// probes or more.
    pub log_se: [Option<f64>; 3],
    /// Median CPU frequency where readable, MHz.
    pub cpu_mhz: Option<f64>,
    /// Whether a trial of the run had a contended host (`trials[].host_load` above the
    /// host-contended thresholds): its probes read the load as much as the machine.
    pub contended: bool,
}

/// Whether any trial of `r` ran on a contended host.
fn contended(r: &RunResult) -> bool {
    let th = servebench_stats::flags::host::HostThresholds::default();
    r.trials
        .iter()
        .filter_map(|t| t.host_load.as_ref())
        .any(|l| l.steal_share >= th.steal_share || l.other_cpus >= th.other_cpus)
}

/// The probes of `r` summarised; `None` without any.
pub fn run_probe(r: &RunResult) -> Option<RunProbe> {
    let probes: Vec<&HostProbe> = r
        .host_probe
        .iter()
        .chain(r.servers.iter().filter_map(|s| s.host_probe.as_ref()))
        .collect();
    let first = probes.first()?;
    let same: Vec<&HostProbe> = probes
        .iter()
        .copied()
        .filter(|p| p.version == first.version && p.scope == first.scope)
        .collect();
    let med = |xs: Vec<f64>| median(&xs).unwrap_or(f64::NAN);
    let mhz: Vec<f64> = same.iter().filter_map(|p| p.cpu_mhz).collect();
    let log_se = |xs: Vec<f64>| -> Option<f64> {
        let logs: Vec<f64> = xs.iter().filter(|x| **x > 0.0).map(|x| x.ln()).collect();
        let n = logs.len();
        (n >= 3).then(|| {
            let mean = logs.iter().sum::<f64>() / n as f64;
            let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            1.2533 * var.sqrt() / (n as f64).sqrt()
        })
    };
    Some(RunProbe {
        version: first.version,
        scope: first.scope.clone(),
        count: same.len(),
        values: FIGURES.map(|f| med(same.iter().map(|p| (f.read)(p)).collect())),
        log_se: FIGURES.map(|f| log_se(same.iter().map(|p| (f.read)(p)).collect())),
        cpu_mhz: (!mhz.is_empty()).then(|| med(mhz)),
        contended: contended(r),
    })
}

/// One figure compared between two runs.
#[derive(Debug, Clone)]
pub struct FigureChange {
    /// The figure.
    pub figure: Figure,
    /// Published (baseline) value.
    pub before: f64,
    /// New (candidate) value.
    pub after: f64,
    /// The relative change beyond which they differ: the figure's floor, or three standard
    /// errors of the difference of the two runs' log medians where larger.
    pub tolerance: f64,
    /// Whether a trial of either run ran on a contended host: its probes then read the
    /// share of the CPU the probe got as much as the machine, and two back-to-back runs on
    /// one loaded shared VM moved by up to 20× (docs/statistics-measured.md, "Host probe on
    /// a loaded shared VM"), so a change is a note of its size, not a difference.
    pub contended: bool,
}

impl FigureChange {
    /// after / before − 1.
    pub fn change(&self) -> f64 {
        self.after / self.before - 1.0
    }

    /// Beyond the tolerance (on the log scale, so 10% slower and 10% faster are alike),
    /// on hosts neither of which was contended.
    pub fn differs(&self) -> bool {
        self.beyond() && !self.contended
    }

    /// Beyond the tolerance on a contended host: a note of its size.
    pub fn within_load(&self) -> bool {
        self.beyond() && self.contended
    }

    fn beyond(&self) -> bool {
        (self.after / self.before).ln().abs() > self.tolerance.ln_1p()
    }
}

/// The floor of `f`, or three standard errors of the difference of two log medians where
/// both runs' spreads are known and that is larger.
fn tolerance(f: &Figure, a: Option<f64>, b: Option<f64>) -> f64 {
    match (a, b) {
        (Some(a), Some(b)) => f.tolerance.max((3.0 * a.hypot(b)).exp() - 1.0),
        _ => f.tolerance,
    }
}

/// The figures of two runs side by side, when both recorded the probe (same version and
/// scope); otherwise why not.
pub fn changes(base: &RunResult, cand: &RunResult) -> Result<Vec<FigureChange>, String> {
    match (run_probe(base), run_probe(cand)) {
        (Some(a), Some(b)) if a.version == b.version && a.scope == b.scope => Ok(FIGURES
            .iter()
            .enumerate()
            .filter(|(i, _)| a.values[*i] > 0.0 && b.values[*i] > 0.0)
            .map(|(i, f)| FigureChange {
                figure: *f,
                before: a.values[i],
                after: b.values[i],
                tolerance: tolerance(f, a.log_se[i], b.log_se[i]),
                contended: a.contended || b.contended,
            })
            .collect()),
        (Some(a), Some(b)) => Err(format!(
            "the host probes differ in kind (version {} {} against version {} {}): not compared",
            a.version, a.scope, b.version, b.scope
        )),
        (None, None) => Err("neither run recorded the host probe".into()),
        (None, Some(_)) => Err("the first run has no host probe (made by a servebench older than the probe): the hosts' speeds are not compared".into()),
        (Some(_), None) => Err("the second run has no host probe: the hosts' speeds are not compared".into()),
    }
}

/// `single-thread −18.2% (1234 → 1010 M rounds/s)` for each figure.
pub fn describe(changes: &[FigureChange]) -> String {
    changes
        .iter()
        .map(|c| {
            format!(
                "{} {:+.1}% ({} → {} {})",
                c.figure.field.replace('_', "-"),
                c.change() * 100.0,
                crate::text::num(c.before),
                crate::text::num(c.after),
                c.figure.unit
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
