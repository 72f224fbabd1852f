//! The host-contended flag of a comparison (servebench_stats::flags::host): every trial's
//! host load, read from the result (`trials[].host_load`), and the verdicts of the points
//! where a trial was contended as its threats. Results without host loads raise nothing.

use servebench_result::RunResult;
use servebench_stats::flags::host::{
    HostLoadCheck, HostThresholds, contended_points, host_contended,
};
use servebench_stats::flags::{Flag, Threat};

use crate::evidence::PointPair;
use crate::report::MetricReport;

fn checks(r: &RunResult, variant: &str, point: usize, label: &str) -> Vec<HostLoadCheck> {
    r.trials
        .iter()
        .filter(|t| t.variant == variant && t.point == point)
        .filter_map(|t| {
            let l = t.host_load.as_ref()?;
            Some(HostLoadCheck {
                variant: variant.to_owned(),
                trial: t.trial,
                point: label.to_owned(),
                steal_share: l.steal_share,
                other_cpus: l.other_cpus,
                cpus: l.cpus,
            })
        })
        .collect()
}

/// The flag for the comparison of `base_v` in `base` with `cand_v` in `cand`, if any trial
/// of either arm at a matched point was contended.
pub(crate) fn flags(
    (base, base_v): (&RunResult, &str),
    (cand, cand_v): (&RunResult, &str),
    pairs: &[PointPair],
    metrics: &[MetricReport],
) -> Option<Flag> {
    let th = HostThresholds::default();
    let mut all = Vec::new();
    for p in pairs {
        all.extend(checks(base, base_v, p.base_point, &p.label));
        all.extend(checks(cand, cand_v, p.cand_point, &p.label));
    }
    let flag = host_contended(&all, &th)?;
    let threats: Vec<Threat> = contended_points(&all, &th)
        .iter()
        .flat_map(|label| {
            metrics.iter().filter_map(move |m| {
                let row = m.points.iter().find(|p| &p.label == label)?;
                Some(Threat {
                    metric: m.metric.clone(),
                    point: label.clone(),
                    verdict: row.verdict.verdict(),
                    otherwise: None,
                })
            })
        })
        .collect();
    Some(flag.threatening(threats))
}
