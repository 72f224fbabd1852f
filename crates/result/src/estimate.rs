//! How long a plan will take (`servebench plan`): from the workload alone where the workload
//! fixes it, and from the spec's last result when it has run before.
//!
//! From the workload: a trial by `duration` sends for that long; an open-loop trial (a
//! numeric `request_rate`) needs at least (n − 1)/rate seconds to send its n requests (its
//! warm-up at the same rate before it); cooldowns are known. How long a closed-loop trial
//! (`request_rate: inf`) takes depends on the server's speed, so the workload gives no figure
//! for it.
//!
//! From the last result (`<results dir>/<spec name>/`, the newest measured file): each
//! planned trial takes what its cell (variant and point label) took on average there, scaled
//! by its request count when that changed; a point the last run did not measure takes the
//! last run's mean seconds per request at the same variant, else over all its trials. Server
//! starts, verification, stops and cooldowns are what the last run spent between and around
//! its trials, per block.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use servebench_spec::Rate;
use servebench_spec::plan::Plan;
use servebench_spec::types::SpecFile;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::{Origin, RunResult, TrialStatus, load_result};

/// What the workload alone says about the plan's length.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadEstimate {
    /// Seconds the workload fixes: trials by `duration`, the send span of open-loop trials
    /// and their warm-ups, and the cooldowns (a lower bound: responses still arriving after
    /// the last send, server starts and closed-loop trials are not in it).
    pub known_s: f64,
    /// Planned trials whose length the workload fixes (by duration or open loop).
    pub trials_known: usize,
    /// Planned trials whose length depends on the server: closed loop (`request_rate:
    /// inf`), a replayed trace or conversations.
    pub trials_unknown: usize,
    /// Why those depend on the server, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_why: Option<&'static str>,
}

/// What the spec's last result says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultEstimate {
    /// The result file read.
    pub file: String,
    /// Whether it was measured with the same spec hash as the plan.
    pub same_spec: bool,
    /// The estimate, in seconds: `trials_s + blocks_s`.
    pub total_s: f64,
    /// The planned trials at the last run's pace.
    pub trials_s: f64,
    /// Server starts, verification, stops and cooldowns: `per_block_s` per planned block.
    pub blocks_s: f64,
    /// What the last run spent per block outside its trials.
    pub per_block_s: f64,
    /// Planned trials whose cell the last run measured.
    pub cells_matched: usize,
    /// Planned trials estimated from seconds per request (a cell the last run did not
    /// measure).
    pub cells_from_rate: usize,
}

/// Both estimates of one plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// From the workload.
    pub workload: WorkloadEstimate,
    /// From the last result, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_result: Option<ResultEstimate>,
    /// With `trials.until_decided`: the estimate if every cell ran to the budget (the rounds
    /// at the pace of the first stage), from the last result or else the workload's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_most_s: Option<f64>,
}

pub(crate) fn secs(a: &str, b: &str) -> Option<f64> {
    let a = OffsetDateTime::parse(a, &Rfc3339).ok()?;
    let b = OffsetDateTime::parse(b, &Rfc3339).ok()?;
    let d = (b - a).as_seconds_f64();
    (d.is_finite() && d >= 0.0).then_some(d)
}

/// The workload's figure for the plan.
pub fn from_workload(spec: &SpecFile, plan: &Plan) -> WorkloadEstimate {
    let w = &spec.spec.workload;
    let cooldown = spec.spec.trials.cooldown.get().as_secs_f64();
    let trials: Vec<_> = plan.blocks.iter().flat_map(|b| &b.trials).collect();
    let mut known_s = cooldown * (trials.len() + plan.server_starts) as f64;
    let (mut trials_known, mut trials_unknown) = (0, 0);
    let by_file = matches!(
        w.dataset.kind,
        servebench_spec::DatasetKind::Trace | servebench_spec::DatasetKind::MultiTurn
    );
    for t in trials {
        let Some(p) = plan.points.get(t.point) else {
            continue;
        };
        match (w.duration, p.request_rate, p.requests) {
            (Some(d), _, None) if !by_file => {
                trials_known += 1;
                known_s += d.get().as_secs_f64();
            }
            (_, Rate::PerSecond(r), Some(n)) if !by_file && r > 0.0 => {
                trials_known += 1;
                known_s += (f64::from(n).max(1.0) - 1.0) / r + f64::from(w.warmup_requests) / r;
            }
            _ => trials_unknown += 1,
        }
    }
    let unknown_why = (trials_unknown > 0).then_some(match w.dataset.kind {
        servebench_spec::DatasetKind::Trace => {
            "a trace's requests each wait for their own timestamp and run as long as the \
             server takes"
        }
        servebench_spec::DatasetKind::MultiTurn => {
            "each turn of a conversation waits for the answer before it"
        }
        _ => "closed loop (request_rate: inf): requests go out as fast as the server answers",
    });
    WorkloadEstimate {
        known_s,
        trials_known,
        trials_unknown,
        unknown_why,
    }
}

/// Per cell of a result: (seconds, requests) of each ok trial.
type Cells = BTreeMap<(String, String), Vec<(f64, usize)>>;

/// The estimate of `plan` at the pace of `last`.
pub fn from_result(plan: &Plan, last: &RunResult, file: &Path) -> Option<ResultEstimate> {
    let mut cells: Cells = BTreeMap::new();
    let mut blocks = std::collections::BTreeSet::new();
    let (mut first, mut end): (Option<&str>, Option<&str>) = (None, None);
    let mut in_trials = 0.0;
    for t in &last.trials {
        blocks.insert(t.block);
        if first.is_none_or(|f| t.started_at.as_str() < f) {
            first = Some(&t.started_at);
        }
        if end.is_none_or(|e| t.ended_at.as_str() > e) {
            end = Some(&t.ended_at);
        }
        let Some(s) = secs(&t.started_at, &t.ended_at) else {
            continue;
        };
        in_trials += s;
        if t.status != TrialStatus::Ok {
            continue;
        }
        let Some(label) = last.points.get(t.point).map(|p| p.label.clone()) else {
            continue;
        };
        let n = t.summary.as_ref().map_or(0, |s| s.all.requests);
        cells
            .entry((t.variant.clone(), label))
            .or_default()
            .push((s, n));
    }
    if cells.is_empty() {
        return None;
    }
    // The run's wall time: from its first server start (or trial) to its last trial's end.
    let start = last
        .servers
        .iter()
        .map(|s| s.started_at.as_str())
        .chain(first)
        .min()?;
    let wall = secs(start, end?)?;
    let per_block_s = ((wall - in_trials) / blocks.len().max(1) as f64).max(0.0);
    let per_request = |variant: Option<&str>| -> Option<f64> {
        let (mut s, mut n) = (0.0, 0usize);
        for ((v, _), xs) in &cells {
            if variant.is_some_and(|want| want != v) {
                continue;
            }
            for (secs, reqs) in xs {
                s += secs;
                n += reqs;
            }
        }
        (n > 0).then(|| s / n as f64)
    };
    let (mut trials_s, mut matched, mut from_rate) = (0.0, 0, 0);
    for b in &plan.blocks {
        for t in &b.trials {
            let point = plan.points.get(t.point);
            let label = point.map(|p| p.to_string()).unwrap_or_default();
            let want = point.and_then(|p| p.requests).map(|n| n as usize);
            match cells.get(&(t.variant.clone(), label)) {
                Some(xs) => {
                    matched += 1;
                    let mean_s = xs.iter().map(|x| x.0).sum::<f64>() / xs.len() as f64;
                    let mean_n = xs.iter().map(|x| x.1).sum::<usize>() as f64 / xs.len() as f64;
                    trials_s += match want {
                        Some(n) if mean_n > 0.0 => mean_s * n as f64 / mean_n,
                        _ => mean_s,
                    };
                }
                None => {
                    from_rate += 1;
                    let rate = per_request(Some(&t.variant)).or_else(|| per_request(None));
                    trials_s += rate.unwrap_or(0.0) * want.unwrap_or(0) as f64;
                }
            }
        }
    }
    let blocks_s = per_block_s * plan.blocks.len() as f64;
    Some(ResultEstimate {
        file: file.display().to_string(),
        same_spec: last.spec_hash == plan.spec_hash,
        total_s: trials_s + blocks_s,
        trials_s,
        blocks_s,
        per_block_s,
        cells_matched: matched,
        cells_from_rate: from_rate,
    })
}

/// The newest measured result of the spec named `name` under `results_dir` with at least one
/// trial (run ids begin with their UTC start, so the newest sorts last), and its path.
pub fn last_result(results_dir: &Path, name: &str) -> Option<(PathBuf, RunResult)> {
    let dir = results_dir.join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_name()
                    .and_then(|f| f.to_str())
                    .is_some_and(|f| !f.starts_with("imported-"))
        })
        .collect();
    files.sort();
    files.into_iter().rev().find_map(|p| {
        let r = load_result(&p).ok()?;
        (r.origin == Origin::Measured && !r.trials.is_empty()).then_some((p, r))
    })
}

/// Both estimates of `plan`, reading the last result from `results_dir`.
pub fn estimate(spec: &SpecFile, plan: &Plan, results_dir: &Path) -> Estimate {
    let workload = from_workload(spec, plan);
    let last_result =
        last_result(results_dir, &plan.name).and_then(|(path, r)| from_result(plan, &r, &path));
    let at_most_s = plan.sequential.as_ref().and_then(|q| {
        let total = match &last_result {
            Some(e) => e.total_s,
            None if workload.trials_unknown == 0 => workload.known_s,
            None => return None,
        };
        Some(total / plan.trial_count.max(1) as f64 * q.max_total(plan) as f64)
    });
    Estimate {
        workload,
        last_result,
        at_most_s,
    }
}

/// `75 s`, `4 min 10 s`, `2 h 05 min`.
pub fn human_duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..=99 => format!("{s} s"),
        100..=5999 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

impl Estimate {
    /// The estimate in lines, as `plan` prints it.
    pub fn render(&self) -> String {
        let mut out = String::from("\nestimated duration:\n");
        let w = &self.workload;
        if w.trials_unknown == 0 {
            out.push_str(&format!(
                "  from the workload: at least {} (sends of {} trial(s) by rate or duration, \
                 and cooldowns; server starts and the last responses not counted)\n",
                human_duration(w.known_s),
                w.trials_known
            ));
        } else {
            out.push_str(&format!(
                "  from the workload: {} trial(s) depend on the server's speed ({}){}\n",
                w.trials_unknown,
                w.unknown_why.unwrap_or("?"),
                if w.trials_known > 0 || w.known_s > 0.0 {
                    format!("; the rest at least {}", human_duration(w.known_s))
                } else {
                    String::new()
                }
            ));
        }
        match &self.last_result {
            Some(e) => {
                out.push_str(&format!(
                    "  from the last run ({}{}): about {} — trials {}, server starts and \
                     stops {} ({:.1} s a block)\n",
                    e.file,
                    if e.same_spec {
                        ""
                    } else {
                        ", a different spec hash"
                    },
                    human_duration(e.total_s),
                    human_duration(e.trials_s),
                    human_duration(e.blocks_s),
                    e.per_block_s
                ));
                if e.cells_from_rate > 0 {
                    out.push_str(&format!(
                        "    {} trial(s) at points the last run did not measure: estimated \
                         from its seconds per request\n",
                        e.cells_from_rate
                    ));
                }
            }
            None => out.push_str(
                "  from the last run: none yet under the results folder (run it once, and \
                 plan estimates from what it took)\n",
            ),
        }
        if let Some(m) = self.at_most_s {
            out.push_str(&format!(
                "  at most (every cell to the sequential budget): about {}\n",
                human_duration(m)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(workload: &str) -> SpecFile {
        let text = format!(
            "apiVersion: servebench/v1alpha1\nkind: Experiment\nmetadata: {{name: e}}\n\
             spec:\n  target: {{base_url: 'http://127.0.0.1:1', model: m}}\n  \
             variants: [{{name: a, baseline: true}}]\n  workload: {workload}\n  \
             trials: {{count: 3, cooldown: 2s}}\n"
        );
        servebench_spec::parse_str(&text, "e.yaml")
            .expect("valid spec")
            .file
    }

    #[test]
    fn open_loop_and_duration_trials_are_known_from_the_workload() {
        // 3 trials of 100 requests at 10 req/s: 9.9 s of sends each, 0.2 s of warm-up
        // sends, and a 2 s cooldown after each of them.
        let s = spec(
            "{dataset: {kind: random, input_tokens: 8, output_tokens: 8}, requests: 100, \
             request_rate: 10, warmup_requests: 2}",
        );
        let e = from_workload(&s, &servebench_spec::plan::plan(&s));
        assert_eq!((e.trials_known, e.trials_unknown), (3, 0));
        assert!(
            (e.known_s - 3.0 * (9.9 + 0.2 + 2.0)).abs() < 1e-9,
            "{}",
            e.known_s
        );
        let s = spec(
            "{dataset: {kind: random, input_tokens: 8, output_tokens: 8}, duration: 30s, \
             request_rate: 5}",
        );
        let e = from_workload(&s, &servebench_spec::plan::plan(&s));
        assert!((e.known_s - 3.0 * 32.0).abs() < 1e-9, "{}", e.known_s);
        let s = spec("{dataset: {kind: random, input_tokens: 8, output_tokens: 8}, requests: 9}");
        let e = from_workload(&s, &servebench_spec::plan::plan(&s));
        assert_eq!((e.trials_known, e.trials_unknown), (0, 3));
        assert!(e.unknown_why.is_some_and(|w| w.contains("closed loop")));
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(human_duration(54.6), "55 s");
        assert_eq!(human_duration(250.0), "4 min 10 s");
        assert_eq!(human_duration(7500.0), "2 h 05 min");
    }
}
