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
        .filter_map(|s| {
            let trials: Vec<_> = result
                .trials
                .iter()
                .filter(|t| t.block == s.block && t.status == TrialStatus::Ok)
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

/// The split of the run's wall time (its creation until its last write).
pub fn wall_split(result: &RunResult) -> WallSplit {
    let starts = start_costs(result);
    let total_s = secs(&result.created_at, &result.updated_at).unwrap_or(0.0);
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
