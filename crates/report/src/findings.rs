//! The comparison's flags as the report shows them: grouped by (comparison, metric, rule),
//! numbered for footnotes, with the sweep points — and, where the evidence names one, the
//! arm — each group concerns, so that plots can ring exactly those points.
//!
//! The flags themselves are `servebench compare`'s ([`servebench_compare`]); nothing is
//! re-derived here. A flag's points are read from its evidence, which names them the same
//! way every rule does (`… at c=16: …`, `… at c=16, candidate …`, `…; c=16: leave-one-out
//! …`), and from the point rows' flag ids, so every flag id a row lists is marked.

use servebench_stats::flags::{Flag, FlagId, FlagLevel, Threatens};

use servebench_compare::{CompareReport, Comparison};

use super::model::{FlagGroup, FlagMarks, Report, Role};

/// The points (and arms) a flag's evidence names, among `labels`.
pub fn points_of(flag: &Flag, labels: &[String]) -> Vec<(String, Option<Role>)> {
    let e = &flag.evidence;
    let mut out = Vec::new();
    for label in labels {
        let mut hit = None;
        for pat in [format!(" at {label}:"), format!("; {label}:")] {
            if e.contains(&pat) {
                hit = Some(None);
            }
        }
        let comma = format!(" at {label}, ");
        if let Some(i) = e.find(&comma) {
            let rest = &e[i + comma.len()..];
            hit = Some(if rest.starts_with("baseline") {
                Some(Role::Baseline)
            } else if rest.starts_with("candidate") {
                Some(Role::Candidate)
            } else {
                None
            });
        }
        if let Some(arm) = hit {
            out.push((label.clone(), arm));
        }
    }
    out
}

fn metric_groups(ci: usize, c: &Comparison, level: FlagLevel, out: &mut Vec<FlagGroup>) {
    for m in &c.metrics {
        let labels: Vec<String> = m.points.iter().map(|p| p.label.clone()).collect();
        let mut ids: Vec<FlagId> = m
            .flags
            .iter()
            .filter(|f| f.level == level)
            .map(|f| f.id)
            .collect();
        ids.sort();
        ids.dedup();
        for id in ids {
            let flags: Vec<Flag> = m.flags.iter().filter(|f| f.id == id).cloned().collect();
            let mut points: Vec<(String, Option<Role>)> = Vec::new();
            for f in &flags {
                for p in points_of(f, &labels) {
                    if !points.contains(&p) {
                        points.push(p);
                    }
                }
            }
            // A row that lists this id but whose point no evidence names: mark it too.
            for row in m.points.iter().filter(|p| p.flags.contains(&id)) {
                if !points.iter().any(|(l, _)| *l == row.label) {
                    points.push((row.label.clone(), None));
                }
            }
            out.push(FlagGroup {
                number: 0,
                comparison: ci,
                metric: Some(m.metric.clone()),
                id,
                level,
                flags,
                points,
                rows: Vec::new(),
            });
        }
    }
}

/// The (metric, point) rows a comparison-level flag threatens (load-not-sustained: every
/// metric at its point; multiplicity: the tests that lose significance).
fn rows_of(flag: &Flag, c: &Comparison) -> Vec<(String, String)> {
    let Threatens::Cells(cells) = &flag.threatens else {
        return Vec::new();
    };
    cells
        .iter()
        .filter(|t| {
            c.metrics
                .iter()
                .any(|m| m.metric == t.metric && m.points.iter().any(|p| p.label == t.point))
        })
        .map(|t| (t.metric.clone(), t.point.clone()))
        .collect()
}

/// Every flag of `compare`, grouped: re-baseline before look, then comparison, metric (in
/// the order compared) and rule; flags about a whole comparison last. Numbered from 1.
pub fn groups(compare: &CompareReport) -> Vec<FlagGroup> {
    let mut out = Vec::new();
    for level in [FlagLevel::ReBaseline, FlagLevel::Look] {
        for (ci, c) in compare.comparisons.iter().enumerate() {
            metric_groups(ci, c, level, &mut out);
        }
    }
    for (ci, c) in compare.comparisons.iter().enumerate() {
        for f in &c.flags {
            out.push(FlagGroup {
                number: 0,
                comparison: ci,
                metric: None,
                id: f.id,
                level: f.level,
                flags: vec![f.clone()],
                points: Vec::new(),
                rows: rows_of(f, c),
            });
        }
    }
    for (i, g) in out.iter_mut().enumerate() {
        g.number = i + 1;
    }
    out
}

/// The arm index of a comparison side (`run_id`, `variant`).
fn arm_index(report: &Report, run_id: &str, variant: &str) -> Option<usize> {
    report
        .arms
        .iter()
        .position(|a| a.variant == variant && report.result(a).run_id == run_id)
}

/// Rings for the sweep plots: each group's points, on the arm its evidence names, else on
/// the comparison's candidate.
pub fn marks(report: &Report) -> FlagMarks {
    let mut marks = FlagMarks::default();
    let Some(compare) = &report.compare else {
        return marks;
    };
    for g in &report.flags {
        let (Some(c), Some(metric)) = (compare.comparisons.get(g.comparison), &g.metric) else {
            continue;
        };
        let base = arm_index(report, &c.baseline.run_id, &c.baseline.variant);
        let cand = arm_index(report, &c.candidate.run_id, &c.candidate.variant);
        let rows = c
            .metrics
            .iter()
            .find(|m| &m.metric == metric)
            .map(|m| m.points.as_slice())
            .unwrap_or_default();
        for (label, role) in &g.points {
            let arm = match role {
                Some(Role::Baseline) => base,
                _ => cand,
            };
            let full = rows
                .iter()
                .find(|p| &p.label == label)
                .map_or(label.as_str(), |p| p.point_label.as_str());
            if let Some(arm) = arm {
                marks.add(arm, metric, full, g.number);
            }
        }
    }
    marks
}

/// Footnote numbers of the groups that concern `label` of `metric` in comparison `ci`.
pub fn numbers_at(report: &Report, ci: usize, metric: &str, label: &str) -> Vec<usize> {
    report
        .flags
        .iter()
        .filter(|g| {
            g.comparison == ci
                && (g.metric.as_deref() == Some(metric) && g.points.iter().any(|(l, _)| l == label)
                    || g.rows.iter().any(|(m, l)| m == metric && l == label))
        })
        .map(|g| g.number)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(evidence: &str) -> Flag {
        Flag::new(
            FlagId::OutlierTrial,
            FlagLevel::ReBaseline,
            evidence,
            String::new(),
        )
    }

    fn labels() -> Vec<String> {
        ["c=1", "c=4", "c=16", "c=32"].map(String::from).to_vec()
    }

    #[test]
    fn points_and_arms_are_read_from_the_evidence() {
        let f = flag("ttft_p50 at c=16, baseline trial 2: 42.6 has robust z = 18.6 (> 3.5)");
        assert_eq!(
            points_of(&f, &labels()),
            vec![("c=16".to_owned(), Some(Role::Baseline))]
        );
        let f = flag("output_throughput at c=32, candidate: the values trend with run order");
        assert_eq!(
            points_of(&f, &labels()),
            vec![("c=32".to_owned(), Some(Role::Candidate))]
        );
        let f = flag("output_throughput at c=4: the minimum detectable effect is 2.3%");
        assert_eq!(points_of(&f, &labels()), vec![("c=4".to_owned(), None)]);
    }

    #[test]
    fn a_sweep_flag_names_its_residual_points_not_its_description() {
        let f = flag(
            "output_throughput across the sweep: Cochran's Q = 1342.8; c=1: leave-one-out \
             residual 28.6 SE; c=4: leave-one-out residual 22.7 SE; the candidate is better \
             from c=1 to c=4, and worse from c=16 to c=32",
        );
        let got: Vec<String> = points_of(&f, &labels()).into_iter().map(|p| p.0).collect();
        assert_eq!(got, ["c=1", "c=4"]);
    }

    #[test]
    fn a_label_is_not_matched_inside_a_longer_one() {
        let f = flag("e2e_mean at c=16: the minimum detectable effect is 2.5%");
        let got: Vec<String> = points_of(&f, &labels()).into_iter().map(|p| p.0).collect();
        assert_eq!(got, ["c=16"], "c=1 must not match c=16");
    }
}
