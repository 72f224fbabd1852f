//! Re-analyse the runs `bench/calibrate.py` measured with other flag-rule thresholds, to see
//! what each gate costs in false alarms and buys in detection before choosing the defaults
//! (docs/statistics-measured.md quotes its output).
//!
//!     cargo run --release -p servebench-compare --example calibrate_rules -- [WORKDIR]
//!
//! WORKDIR (default /tmp/servebench-calibrate) holds `<scenario>/seed-NNNN/<run>/<spec>/*.json`
//! as the script leaves them. For every rule setting below it prints, over the runs found:
//! A/A (`aa`): runs with any re-baseline flag (and with a drift or outlier-trial flag at any
//! level); `outlier`: outlier-trial (any level) on output_throughput at c=1 among runs where
//! the slowed trial changes that verdict; `drift`/`drift8`/`cold`: runs with a drift flag (any
//! level).

use std::path::{Path, PathBuf};

use servebench_compare::{
    CompareOptions, CompareReport, LoadedResult, VerdictKind, compare_within,
};
use servebench_result::load_result;
use servebench_stats::flags::{FlagId, FlagLevel, RuleSettings, Threatens};

fn results(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(seeds) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut seeds: Vec<PathBuf> = seeds.flatten().map(|e| e.path()).collect();
    seeds.sort();
    for s in seeds {
        let run = s.join("run");
        let Ok(specs) = std::fs::read_dir(&run) else {
            continue;
        };
        for spec in specs.flatten() {
            if let Ok(files) = std::fs::read_dir(spec.path()) {
                for f in files.flatten() {
                    let p = f.path();
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    if name.ends_with(".json") && !name.contains(".compare") {
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

/// θ for every metric when `THETA` is set (e.g. `THETA=0.05`), else the spec's.
fn theta() -> Option<f64> {
    std::env::var("THETA").ok().and_then(|t| t.parse().ok())
}

fn compare(lr: &LoadedResult, rules: RuleSettings) -> CompareReport {
    compare_within(
        lr,
        &CompareOptions {
            rules: Some(rules),
            threshold: theta(),
            ..CompareOptions::default()
        },
    )
    .expect("compares")
}

fn rebaseline(r: &CompareReport) -> bool {
    r.comparisons.iter().any(|c| {
        c.metrics
            .iter()
            .flat_map(|m| &m.flags)
            .chain(&c.flags)
            .any(|f| f.level == FlagLevel::ReBaseline)
    })
}

fn has(r: &CompareReport, id: FlagId, metric: Option<&str>, point: Option<&str>) -> bool {
    r.comparisons.iter().any(|c| {
        c.metrics
            .iter()
            .filter(|m| metric.is_none_or(|n| m.metric == n))
            .flat_map(|m| &m.flags)
            .any(|f| {
                f.id == id
                    && match (&f.threatens, point) {
                        (_, None) => true,
                        (Threatens::Cells(cells), Some(p)) => cells.iter().any(|c| c.point == p),
                        (Threatens::Comparison, Some(_)) => true,
                    }
            })
    })
}

fn throughput_at(r: &CompareReport, point: usize) -> Option<VerdictKind> {
    let m = r
        .comparisons
        .first()?
        .metrics
        .iter()
        .find(|m| m.metric == "output_throughput")?;
    m.points.get(point).map(|p| p.verdict)
}

fn main() {
    let work = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "/tmp/servebench-calibrate".into()),
    );
    let load = |scenario: &str| -> Vec<LoadedResult> {
        results(&work.join(scenario))
            .into_iter()
            .filter_map(|p| {
                Some(LoadedResult {
                    file: p.display().to_string(),
                    result: load_result(&p).ok()?,
                })
            })
            .collect()
    };
    let aa = load("aa");
    let outlier = load("outlier");
    let drifts: Vec<(&str, Vec<LoadedResult>)> = ["drift", "drift8", "cold"]
        .into_iter()
        .map(|s| (s, load(s)))
        .collect();
    // The outlier runs without their slowed trial (candidate b, repetition 3, point 0).
    let flips: Vec<bool> = outlier
        .iter()
        .map(|lr| {
            let mut without = lr.clone();
            without
                .result
                .trials
                .retain(|t| !(t.variant == "b" && t.trial == 3 && t.point == 0));
            let d = RuleSettings::default();
            throughput_at(&compare(lr, d), 0) != throughput_at(&compare(&without, d), 0)
        })
        .collect();

    let d = RuleSettings::default();
    let settings: Vec<(String, RuleSettings)> = {
        let mut v = vec![("defaults".to_owned(), d)];
        for floor in [0.5, 1.0, 1.5, 2.0] {
            for drift_p in [0.05, 0.01] {
                v.push((
                    format!("trial floor {floor}·θ, drift p {drift_p}"),
                    RuleSettings {
                        outlier_floor: floor,
                        drift_p,
                        ..d
                    },
                ));
            }
        }
        v
    };
    println!(
        "runs: aa {}, outlier {} ({} where the slow trial flips the verdict), {}",
        aa.len(),
        outlier.len(),
        flips.iter().filter(|f| **f).count(),
        drifts
            .iter()
            .map(|(s, v)| format!("{s} {}", v.len()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (name, rules) in settings {
        let aa_rb = aa
            .iter()
            .filter(|lr| rebaseline(&compare(lr, rules)))
            .count();
        let aa_any = aa
            .iter()
            .filter(|lr| {
                let r = compare(lr, rules);
                r.comparisons.iter().any(|c| {
                    c.metrics
                        .iter()
                        .flat_map(|m| &m.flags)
                        .any(|f| matches!(f.id, FlagId::Drift | FlagId::OutlierTrial))
                })
            })
            .count();
        let aa_by: Vec<(FlagId, usize)> =
            [FlagId::Drift, FlagId::OutlierTrial, FlagId::InvalidTrial]
                .into_iter()
                .map(|id| {
                    (
                        id,
                        aa.iter()
                            .filter(|lr| {
                                compare(lr, rules).comparisons.iter().any(|c| {
                                    c.metrics
                                        .iter()
                                        .flat_map(|m| &m.flags)
                                        .any(|f| f.id == id && f.level == FlagLevel::ReBaseline)
                                })
                            })
                            .count(),
                    )
                })
                .collect();
        let out_hit = outlier
            .iter()
            .zip(&flips)
            .filter(|(lr, f)| {
                **f && has(
                    &compare(lr, rules),
                    FlagId::OutlierTrial,
                    Some("output_throughput"),
                    Some("c=1"),
                )
            })
            .count();
        let drift_hits: Vec<String> = drifts
            .iter()
            .map(|(s, v)| {
                let hit = v
                    .iter()
                    .filter(|lr| has(&compare(lr, rules), FlagId::Drift, None, None))
                    .count();
                format!("{s} {hit}/{}", v.len())
            })
            .collect();
        println!(
            "{name:<40} A/A re-baseline {aa_rb}/{} ({}), drift or outlier at any level {aa_any} | outlier {out_hit}/{} | {}",
            aa.len(),
            aa_by
                .iter()
                .map(|(id, n)| format!("{} {n}", id.as_str()))
                .collect::<Vec<_>>()
                .join(", "),
            flips.iter().filter(|f| **f).count(),
            drift_hits.join(", ")
        );
    }
}
