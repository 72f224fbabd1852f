//! Plan expansion: sweep points, blocks and trials in the exact order they will run.
//!
//! Words (docs/architecture.md): a *cell* is one (variant, sweep point); a *trial* is one measured
//! load run of one cell; a *block* is one server start of one variant.

use std::fmt;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::hash::spec_hash;
use crate::types::{ServerRestart, SpecFile, Spending, TrialOrder};

mod points;

pub use points::{
    PointShape, SweepPoint, include_point, kept_matrix_points, matrix_points, search_point,
    shape_of, sweep_points, trial_requests,
};

/// Seed of the prompts of trial `trial` (1-based) at sweep point `point` (0-based): the same
/// for every variant (paired), different across trials and points. SplitMix64 over the
/// three numbers (Steele, Lea & Flood, OOPSLA 2014).
pub fn prompt_seed(workload_seed: u64, trial: u32, point: usize) -> u64 {
    let mut x = splitmix(workload_seed ^ 0x5345_5256_4542_4e43);
    x = splitmix(x ^ u64::from(trial));
    splitmix(x ^ point as u64)
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One planned trial.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedTrial {
    /// Position in the run, from 0.
    pub seq: usize,
    /// Variant name.
    pub variant: String,
    /// Repetition index t, from 1.
    pub trial: u32,
    /// Sweep point index, from 0.
    pub point: usize,
    /// Repeat r of the cell within its server start, from 1 (`trials.per_start`).
    #[serde(skip_serializing_if = "is_first")]
    pub repeat: u32,
    /// Seed of this trial's prompts.
    pub prompt_seed: u64,
}

fn is_first(r: &u32) -> bool {
    *r == 1
}

/// The index trial `t`'s repeat `r` draws its prompts with (`prompt_seed`, the prompt
/// source): `(t − 1)·k + r` with k = `per_start`, so repeats within a start get different
/// prompts, the same for every variant (paired), and with one trial per start it is t.
pub fn draw_index(trial: u32, repeat: u32, per_start: u32) -> u32 {
    (trial.saturating_sub(1))
        .saturating_mul(per_start.max(1))
        .saturating_add(repeat.max(1))
}

/// One trial of a server start: (trial number t, repeat within the start, point index).
type StartTrial = (u32, u32, usize);

/// The (t, repeat, point) triples of one start of repetition `t` measuring `points` with
/// `k` repeats each: every point once, then every point again (a repeat is a sweep).
fn start_trials(t: u32, points: &[usize], k: u32) -> Vec<(u32, u32, usize)> {
    (1..=k.max(1))
        .flat_map(|r| points.iter().map(move |p| (t, r, *p)))
        .collect()
}

/// Planned trials of one block from (t, repeat, point) triples, numbered from `*seq`.
fn planned(
    variant: &str,
    triples: Vec<(u32, u32, usize)>,
    workload_seed: u64,
    k: u32,
    seq: &mut usize,
) -> Vec<PlannedTrial> {
    triples
        .into_iter()
        .map(|(t, r, p)| {
            let pt = PlannedTrial {
                seq: *seq,
                variant: variant.to_owned(),
                trial: t,
                point: p,
                repeat: r,
                prompt_seed: prompt_seed(workload_seed, draw_index(t, r, k), p),
            };
            *seq += 1;
            pt
        })
        .collect()
}

/// One server start of one variant and the trials measured during it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    /// Position in the run, from 0.
    pub index: usize,
    /// Variant name.
    pub variant: String,
    /// Whether a server is started before and stopped after this block.
    pub server_start: bool,
    /// The trials, in order.
    pub trials: Vec<PlannedTrial>,
}

/// The whole run, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The spec's name.
    pub name: String,
    /// Canonical spec hash.
    pub spec_hash: String,
    /// Sweep points, indexed by `PlannedTrial::point`.
    pub points: Vec<SweepPoint>,
    /// Blocks in run order.
    pub blocks: Vec<Block>,
    /// Number of trials in all (the first stage, for a sequential run).
    pub trial_count: usize,
    /// Number of server starts (0 without a `server` block).
    pub server_starts: usize,
    /// Trials of every cell in each server start (`trials.per_start`).
    #[serde(skip_serializing_if = "is_first")]
    pub per_start: u32,
    /// With `trials.until_decided`: the rounds that may follow the blocks above.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequential: Option<SequentialPlan>,
    /// With `search`: the capacity search, whose loads are chosen as it goes (no blocks are
    /// planned ahead; docs/search.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::search::SearchPlan>,
}

/// What may follow the first stage of a sequential run: rounds `count + 1 ..= max`, each one
/// block per variant (per trial and point with `server_restart: per_trial`) holding only the
/// points still undecided — the baseline at every point where some candidate is undecided.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SequentialPlan {
    /// Trials per cell in the first stage (`trials.count`).
    pub first_stage: u32,
    /// Most trials per cell (`until_decided.max`).
    pub max_trials: u32,
    /// Rounds that may follow the first stage.
    pub rounds: u32,
    /// Metrics every cell must have decided.
    pub metrics: Vec<String>,
    /// The alpha-spending function.
    pub spending: Spending,
    /// Trials the rounds add at most (every cell undecided until the budget).
    pub max_extra_trials: usize,
    /// Server starts the rounds add at most.
    pub max_extra_starts: usize,
}

impl SequentialPlan {
    /// Most trials of the whole run.
    pub fn max_total(&self, plan: &Plan) -> usize {
        plan.trial_count + self.max_extra_trials
    }
}

/// The blocks of round `t` (a repetition index after the first stage) in the plan's order
/// rules: one block per variant holding the points `todo` lists for it (in sweep order), or
/// with `server_restart: per_trial` one block per (variant, point). Variants without points
/// get no block. Blocks are numbered from `first_index`, trials from `first_seq`. `order:
/// random` shuffles the round's variants with a seed of `trials.seed` (or `workload.seed`)
/// and `t`.
pub fn round_blocks(
    spec: &SpecFile,
    t: u32,
    todo: &[(String, Vec<usize>)],
    first_index: usize,
    first_seq: usize,
) -> Vec<Block> {
    let s = &spec.spec;
    let mut order: Vec<&(String, Vec<usize>)> = s
        .variants
        .iter()
        .filter_map(|v| {
            todo.iter()
                .find(|(name, pts)| *name == v.name && !pts.is_empty())
        })
        .collect();
    if s.trials.order == TrialOrder::Random {
        let seed = splitmix(s.trials.seed.unwrap_or(s.workload.seed) ^ u64::from(t));
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    }
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    for (v, points) in order {
        if s.trials.server_restart == ServerRestart::PerTrial {
            groups.extend(points.iter().map(|p| (v.as_str(), vec![*p])));
        } else {
            groups.push((v.as_str(), points.clone()));
        }
    }
    let has_server = s.server.is_some();
    let k = s.trials.per_start;
    let mut seq = first_seq;
    groups
        .into_iter()
        .enumerate()
        .map(|(i, (variant, points))| Block {
            index: first_index + i,
            variant: variant.to_owned(),
            server_start: has_server,
            trials: planned(
                variant,
                start_trials(t, &points, k),
                s.workload.seed,
                k,
                &mut seq,
            ),
        })
        .collect()
}

/// Expand a spec into its run order.
pub fn plan(spec: &SpecFile) -> Plan {
    let s = &spec.spec;
    if let Some(search) = crate::search::search_plan(spec) {
        return Plan {
            name: spec.metadata.name.clone(),
            spec_hash: spec_hash(spec),
            points: Vec::new(),
            blocks: Vec::new(),
            trial_count: 0,
            server_starts: 0,
            per_start: 1,
            sequential: None,
            search: Some(search),
        };
    }
    let points = sweep_points(spec);
    let count = s.trials.count;
    let variants: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
    let seed = s.workload.seed;
    // Groups of (variant, its trials) — one group per server start.
    let k = s.trials.per_start;
    let all: Vec<usize> = (0..points.len()).collect();
    let mut groups: Vec<(&str, Vec<StartTrial>)> = Vec::new();
    match s.trials.server_restart {
        ServerRestart::Once => {
            for v in &variants {
                let trials = (1..=count).flat_map(|t| start_trials(t, &all, k)).collect();
                groups.push((v, trials));
            }
        }
        ServerRestart::PerBlock | ServerRestart::PerTrial => {
            let mut pairs: Vec<(u32, &str)> = Vec::new();
            match s.trials.order {
                TrialOrder::Interleaved | TrialOrder::Random => {
                    for t in 1..=count {
                        for v in &variants {
                            pairs.push((t, v));
                        }
                    }
                }
                TrialOrder::Blocked => {
                    for v in &variants {
                        for t in 1..=count {
                            pairs.push((t, v));
                        }
                    }
                }
            }
            if s.trials.order == TrialOrder::Random {
                let mut rng = ChaCha8Rng::seed_from_u64(s.trials.seed.unwrap_or(seed));
                pairs.shuffle(&mut rng);
            }
            for (t, v) in pairs {
                if s.trials.server_restart == ServerRestart::PerTrial {
                    for p in 0..points.len() {
                        groups.push((v, start_trials(t, &[p], k)));
                    }
                } else {
                    groups.push((v, start_trials(t, &all, k)));
                }
            }
        }
    }
    let has_server = s.server.is_some();
    let mut seq = 0;
    let blocks: Vec<Block> = groups
        .into_iter()
        .enumerate()
        .map(|(index, (variant, trials))| Block {
            index,
            variant: variant.to_owned(),
            server_start: has_server,
            trials: planned(variant, trials, seed, k, &mut seq),
        })
        .collect();
    let sequential = s.trials.until_decided.as_ref().map(|u| {
        let rounds = u.max.saturating_sub(count);
        let cells = variants.len() * points.len();
        let starts_per_round = match s.trials.server_restart {
            ServerRestart::PerTrial => cells,
            _ => variants.len(),
        };
        SequentialPlan {
            first_stage: count,
            max_trials: u.max.max(count),
            rounds,
            metrics: u
                .metrics
                .clone()
                .unwrap_or_else(|| s.compare.metrics.clone()),
            spending: u.spending,
            max_extra_trials: rounds as usize * cells * k as usize,
            max_extra_starts: if has_server {
                rounds as usize * starts_per_round
            } else {
                0
            },
        }
    });
    Plan {
        name: spec.metadata.name.clone(),
        spec_hash: spec_hash(spec),
        points,
        trial_count: seq,
        server_starts: if has_server { blocks.len() } else { 0 },
        per_start: k,
        blocks,
        sequential,
        search: None,
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "plan for {}", self.name)?;
        writeln!(f, "spec hash: {}", self.spec_hash)?;
        if let Some(q) = &self.search {
            return crate::search::fmt_plan(q, f);
        }
        writeln!(f, "sweep points:")?;
        for (i, p) in self.points.iter().enumerate() {
            writeln!(f, "  [{i}] {p}")?;
        }
        if self.per_start > 1 {
            writeln!(
                f,
                "{} trials of every cell in each server start (trials.per_start): the start is \
                 the unit of analysis, compare reads the mean of its trials",
                self.per_start
            )?;
        }
        match &self.sequential {
            None => writeln!(
                f,
                "{} trials in {} blocks, {} server starts",
                self.trial_count,
                self.blocks.len(),
                self.server_starts
            )?,
            Some(q) => {
                writeln!(
                    f,
                    "first stage: {} trials per cell, {} trials in {} blocks, {} server starts",
                    q.first_stage,
                    self.trial_count,
                    self.blocks.len(),
                    self.server_starts
                )?;
                writeln!(
                    f,
                    "then until decided ({} on every cell; {} spending): up to {} more round(s), \
                     one interleaved block per variant holding only the undecided points, until \
                     every cell is decided or has {} trials",
                    q.metrics.join(", "),
                    match q.spending {
                        Spending::ObrienFleming => "O'Brien-Fleming",
                        Spending::Pocock => "Pocock",
                    },
                    q.rounds,
                    q.max_trials
                )?;
                writeln!(
                    f,
                    "at most: {} trials ({} more) and {} server starts ({} more)",
                    q.max_total(self),
                    q.max_extra_trials,
                    self.server_starts + q.max_extra_starts,
                    q.max_extra_starts
                )?;
            }
        }
        for b in &self.blocks {
            writeln!(f)?;
            writeln!(f, "block {} — variant {}", b.index + 1, b.variant)?;
            if b.server_start {
                writeln!(f, "  ▶ start server ({})", b.variant)?;
            }
            for t in &b.trials {
                writeln!(
                    f,
                    "  #{:<4} trial {}{} of {:<10} point [{}] {:<40} prompt seed {:016x}",
                    t.seq + 1,
                    t.trial,
                    if self.per_start > 1 {
                        format!(" repeat {}/{}", t.repeat, self.per_start)
                    } else {
                        String::new()
                    },
                    t.variant,
                    t.point,
                    self.points
                        .get(t.point)
                        .map(|p| p.to_string())
                        .unwrap_or_default(),
                    t.prompt_seed
                )?;
            }
            if b.server_start {
                writeln!(f, "  ■ stop server ({})", b.variant)?;
            }
        }
        if let Some(q) = &self.sequential
            && q.rounds > 0
        {
            writeln!(f)?;
            writeln!(
                f,
                "rounds {}..={} (only while cells are undecided): each variant's block holds the \
                 points still undecided for it, the baseline every point some candidate still \
                 needs; prompts seeded by (workload.seed, t, point) as above",
                q.first_stage + 1,
                q.max_trials
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::prompt_seed;

    #[test]
    fn the_search_dither_is_the_prompt_seed_chain() {
        // search::round_offset repeats prompt_seed's chain (so search does not depend on the
        // plan): the offsets recorded in older search results stay what a resume computes.
        for (seed, round) in [(0u64, 1u32), (7, 3), (u64::MAX, 10)] {
            let x = prompt_seed(seed ^ 0x6361_7061_6369_7479, round, usize::MAX);
            let expect = (x >> 11) as f64 / (1u64 << 53) as f64;
            assert_eq!(crate::search::round_offset(seed, round), expect);
        }
    }

    #[test]
    fn prompt_seed_matches_an_independent_splitmix_chain() {
        // Computed in Python with the same SplitMix64 chain (Steele, Lea & Flood 2014).
        assert_eq!(prompt_seed(1, 2, 3), 0xd156_a85a_6a91_425a);
        assert_ne!(prompt_seed(1, 1, 0), prompt_seed(1, 2, 0));
        assert_ne!(prompt_seed(1, 1, 0), prompt_seed(1, 1, 1));
        assert_ne!(prompt_seed(1, 1, 0), prompt_seed(2, 1, 0));
    }
}
