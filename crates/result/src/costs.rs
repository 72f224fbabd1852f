//! What a run's wall time went on, from what the result already records: per server start
//! its time to ready (`ServerStart::ready_after_s`) and the time to its first trial, per trial
//! its measured phase (`TrialResult::started_at`..`ended_at`). `compare` prints the split and
//! `plan --optimize` reads the costs of a start and of a trial from it
//! (docs/statistics-method.md, "Choosing n and k").

use serde::{Deserialize, Serialize};

use crate::estimate::secs;
use crate::{RunResult, TrialStatus};

/// One server start's costs, in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartCost {
    /// Block index.
    pub block: usize,
    /// Variant.
    pub variant: String,
    /// Spawn until the readiness probe passed.
    pub ready_s: f64,
    /// Ready until the first trial's measured phase (verify, warm-up).
    pub warm_s: f64,
    /// The measured phases of its trials, summed.
    pub measuring_s: f64,
    /// First trial's start to last trial's end, less the measured phases (each trial's
    /// warm-up requests, cool-down).
    pub between_s: f64,
    /// Repeats of every point it measured (`trials.per_start`; fewer when cut short).
    pub repeats: u32,
}

/// The split of a run's wall time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WallSplit {
    /// Starting servers (spawn until ready).
    pub starting_s: f64,
    /// Warming (ready until the first measured trial: verify, warm-up).
    pub warming_s: f64,
    /// Measuring (the trials' measured phases).
    pub measuring_s: f64,
    /// Between trials of a start (per-trial warm-up, cool-down), and anything else up to
    /// the run's last write (stops, saves).
    pub cooling_s: f64,
    /// The run's wall time: its creation until its last write.
    pub total_s: f64,
}

impl WallSplit {
    /// `x` as a share of the total, in percent.
    pub fn percent(&self, x: f64) -> f64 {
        if self.total_s > 0.0 {
            100.0 * x / self.total_s
        } else {
            0.0
        }
    }

    /// One line: `wall 1,234 s: starting 40%, warming 5%, measuring 50%, cooling 5%`.
    pub fn line(&self) -> String {
        format!(
            "wall {:.0} s: starting {:.0} s ({:.0}%), warming {:.0} s ({:.0}%), measuring {:.0} s \
             ({:.0}%), cooling and between trials {:.0} s ({:.0}%)",
            self.total_s,
            self.starting_s,
            self.percent(self.starting_s),
            self.warming_s,
            self.percent(self.warming_s),
            self.measuring_s,
            self.percent(self.measuring_s),
            self.cooling_s,
            self.percent(self.cooling_s),
        )
    }
}

/// Every server start's costs, in run order (starts that measured nothing are left out).
pub fn start_costs(result: &RunResult) -> Vec<StartCost> {
    result
        .servers
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            // A resumed block has a second start: each start owns the trials begun between
            // it and the block's next start.
            let next = result.servers[i + 1..].iter().find(|n| n.block == s.block);
            let trials: Vec<_> = result
                .trials
                .iter()
                .filter(|t| t.block == s.block && t.status == TrialStatus::Ok)
                .filter(|t| secs(&s.started_at, &t.started_at).is_some())
                .filter(|t| next.is_none_or(|n| secs(&t.started_at, &n.started_at).is_some()))
                .collect();
            let first = trials.iter().min_by_key(|t| t.seq)?;
            let last = trials.iter().max_by_key(|t| t.seq)?;
            let to_first = secs(&s.started_at, &first.started_at)?;
            let ready_s = s.ready_after_s.unwrap_or(0.0).min(to_first);
            let measuring_s: f64 = trials
                .iter()
                .filter_map(|t| secs(&t.started_at, &t.ended_at))
                .sum();
            let span = secs(&first.started_at, &last.ended_at).unwrap_or(measuring_s);
            Some(StartCost {
                block: s.block,
                variant: s.variant.clone(),
                ready_s,
                warm_s: to_first - ready_s,
                measuring_s,
                between_s: (span - measuring_s).max(0.0),
                repeats: trials.iter().map(|t| t.repeat).max().unwrap_or(1),
            })
        })
        .collect()
}

/// The split of the run's wall time: its creation until its last write, less the time it
/// lay interrupted before each resume.
pub fn wall_split(result: &RunResult) -> WallSplit {
    let starts = start_costs(result);
    let idle_s: f64 = result
        .resumes
        .iter()
        .filter_map(|r| secs(&r.interrupted_at, &r.resumed_at))
        .map(|s| s.max(0.0))
        .sum();
    let total_s = (secs(&result.created_at, &result.updated_at).unwrap_or(0.0) - idle_s).max(0.0);
    let starting_s: f64 = starts.iter().map(|s| s.ready_s).sum();
    let warming_s: f64 = starts.iter().map(|s| s.warm_s).sum();
    let measuring_s: f64 = if starts.is_empty() {
        result
            .trials
            .iter()
            .filter_map(|t| secs(&t.started_at, &t.ended_at))
            .sum()
    } else {
        starts.iter().map(|s| s.measuring_s).sum()
    };
    let total_s = total_s.max(starting_s + warming_s + measuring_s);
    WallSplit {
        starting_s,
        warming_s,
        measuring_s,
        cooling_s: (total_s - starting_s - warming_s - measuring_s).max(0.0),
        total_s,
    }
}

/// Mean seconds of a start before its first trial (`S`: ready plus warm-up) and of one
/// repeat of every point it measures (`T`: its trials' span over its repeats), over the
/// starts that measured: what `plan --optimize` costs a design with.
pub fn mean_start_and_repeat(result: &RunResult) -> Option<(f64, f64)> {
    let starts = start_costs(result);
    if starts.is_empty() {
        return None;
    }
    let n = starts.len() as f64;
    let s = starts.iter().map(|c| c.ready_s + c.warm_s).sum::<f64>() / n;
    let t = starts
        .iter()
        .map(|c| (c.measuring_s + c.between_s) / f64::from(c.repeats.max(1)))
        .sum::<f64>()
        / n;
    Some((s, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The H200 fixed-design run (b468): complete, 20 starts, never interrupted.
    fn b468() -> RunResult {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../results/gpu-transformers-moe-cost-fixed/20261201T162609Z-b468.json"
        );
        serde_json::from_str(&std::fs::read_to_string(path).expect("committed result"))
            .expect("a result")
    }

    #[test]
    fn the_time_a_run_lay_interrupted_is_not_its_wall_time() {
        let whole = b468();
        let before = wall_split(&whole);
        assert!(before.total_s > 0.0, "{before:?}");
        // The same run, as if interrupted for 10 minutes in the middle: its last write
        // moves 600 s later, and the resume says when it lay idle.
        let mut resumed = whole.clone();
        let later = |t: &str, s: i64| {
            let t = time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339)
                .expect("rfc3339")
                + time::Duration::seconds(s);
            t.format(&time::format_description::well_known::Rfc3339)
                .expect("format")
        };
        resumed.updated_at = later(&whole.updated_at, 600);
        let mid = later(&whole.created_at, 400);
        resumed.resumes.push(crate::Resume {
            interrupted_at: mid.clone(),
            resumed_at: later(&mid, 600),
        });
        let after = wall_split(&resumed);
        assert!(
            (after.total_s - before.total_s).abs() < 1e-6,
            "{after:?} vs {before:?}"
        );
        assert!((after.cooling_s - before.cooling_s).abs() < 1e-6);
        // Before the resumes were recorded, the idle 600 s were read as cooling.
        resumed.resumes.clear();
        let unrecorded = wall_split(&resumed);
        assert!((unrecorded.cooling_s - before.cooling_s - 600.0).abs() < 1e-6);
    }

    #[test]
    fn a_resumed_blocks_two_starts_each_own_the_trials_they_ran() {
        let mut r = b468();
        let before = start_costs(&r);
        let block = r.trials.last().expect("trials").block;
        let mut trials: Vec<_> = r.trials.iter().filter(|t| t.block == block).collect();
        trials.sort_by_key(|t| t.seq);
        assert_eq!(trials.len(), 2, "one trial of each point");
        // The block's second trial as if run by a second start, begun just before it.
        let mut again = r
            .servers
            .iter()
            .find(|s| s.block == block)
            .expect("start")
            .clone();
        again.started_at = trials[0].ended_at.clone();
        r.servers.push(again);
        let after = start_costs(&r);
        assert_eq!(after.len(), before.len() + 1);
        let (first, second) = (&after[after.len() - 2], &after[after.len() - 1]);
        let old = before.last().expect("last start");
        assert!(first.measuring_s < old.measuring_s, "{first:?} vs {old:?}");
        assert!(
            (first.measuring_s + second.measuring_s - old.measuring_s).abs() < 1e-6,
            "{after:?}"
        );
        // Before, both starts owned both trials: the second start's span ran back to the
        // first trial.
        assert!(second.between_s < 1e-6, "{second:?}");
    }
}
