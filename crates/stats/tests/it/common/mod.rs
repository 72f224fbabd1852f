//! Shared builders for the flag tests.
#![allow(dead_code)] // each test binary uses a subset

use servebench_stats::flags::{
    Analysis, ArmEvidence, ComparisonContext, Flag, FlagId, FlagLevel, MetricSettings,
    PointComparison, RuleSettings, SweepAssessment, Threatens, assess_sweep,
};
use servebench_stats::verdict::{Direction, Verdict};

/// Deterministic trial-to-trial noise: ~0.4% CV, no trend, no outlier.
pub(crate) const NOISE_A: [f64; 5] = [1.004, 0.997, 1.001, 0.995, 1.003];
pub(crate) const NOISE_B: [f64; 5] = [0.996, 1.002, 1.005, 0.998, 0.999];

pub(crate) fn arm(center: f64, noise: &[f64]) -> ArmEvidence {
    ArmEvidence::from_values(noise.iter().map(|f| center * f).collect())
}

pub(crate) fn throughput() -> MetricSettings {
    MetricSettings {
        name: "output_throughput".into(),
        direction: Direction::HigherIsBetter,
        analysis: Analysis::Log { threshold: 0.02 },
    }
}

pub(crate) fn point(
    label: &str,
    level: f64,
    base: ArmEvidence,
    cand: ArmEvidence,
) -> PointComparison {
    PointComparison::new(label, level, base, cand, &throughput(), 0.05)
}

/// The seed's numbers (tok/s): c=1 10.36 vs 10.07, c=10 38.46 vs 64.29, c=256 718 vs 515,
/// c=1024 1603 vs 796, with 5 trials per arm and ~0.4% CV.
pub(crate) fn seed_points() -> Vec<PointComparison> {
    [
        ("c=1", 1.0, 10.36, 10.07),
        ("c=10", 10.0, 38.46, 64.29),
        ("c=256", 256.0, 718.0, 515.0),
        ("c=1024", 1024.0, 1603.0, 796.0),
    ]
    .iter()
    .map(|&(label, level, b, c)| point(label, level, arm(b, &NOISE_A), arm(c, &NOISE_B)))
    .collect()
}

pub(crate) fn assess(points: &[PointComparison], ctx: &ComparisonContext) -> SweepAssessment {
    assess_sweep(&throughput(), points, ctx, &RuleSettings::default())
}

pub(crate) fn ids(a: &SweepAssessment) -> Vec<(FlagId, FlagLevel)> {
    a.flags.iter().map(|f| (f.id, f.level)).collect()
}

pub(crate) fn find(a: &SweepAssessment, id: FlagId) -> &Flag {
    a.flags
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("expected {id:?} in {:#?}", a.flags))
}

/// The verdict a flag threatens (it threatens one cell) and what it would be otherwise.
pub(crate) fn threat_of(f: &Flag) -> (Option<Verdict>, Option<Verdict>) {
    match &f.threatens {
        Threatens::Cells(cells) => {
            assert_eq!(cells.len(), 1, "{f:#?}");
            (cells[0].verdict, cells[0].otherwise)
        }
        Threatens::Comparison => panic!("expected a cell threat: {f:#?}"),
    }
}
