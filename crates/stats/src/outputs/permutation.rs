//! Does the candidate diverge from the baseline more than the baseline's own server starts
//! diverge from each other? A permutation test over the starts' labels, prompt by prompt.
//!
//! Data: for every prompt, one output per server start of each arm, given as a class label
//! (two starts share a label exactly when their outputs are identical). For prompt `i` with
//! `Bᵢ ≥ 2` baseline and `Vᵢ ≥ 1` candidate outputs, `x̄ᵢ` is the share of the `Bᵢ(Bᵢ−1)/2`
//! baseline pairs whose outputs differ (the engine's own divergence) and `ȳᵢ` the share of
//! the `BᵢVᵢ` baseline–candidate pairs that differ. The statistic is `T = Σᵢ (ȳᵢ − x̄ᵢ)`.
//!
//! Null hypothesis: the candidate's starts are exchangeable with the baseline's — for every
//! prompt, any `Vᵢ` of its `Bᵢ + Vᵢ` outputs are as likely to be the candidate's as the ones
//! that are. Under it each prompt's labelling is uniform over the `C(Bᵢ+Vᵢ, Vᵢ)` choices,
//! independently across prompts (prompts are the units, as the interval's are), and the
//! one-sided p-value is `P(T* ≥ T)`. Prompts whose outputs are all identical add 0 under
//! every labelling and drop out. The distribution of `T*` is computed exactly — each
//! prompt's values by enumerating its labellings, the sum by convolution — when every prompt
//! has at most [`EXACT_LABELLINGS`] labellings and the sum at most [`EXACT_SUPPORT`]
//! distinct values; otherwise from [`MONTE_CARLO_DRAWS`] random labellings (ChaCha8, fixed
//! seed), `p = (1 + #{T* ≥ T}) / (1 + draws)`.
//!
//! What it cannot see: a whole server start that behaves differently (all of its prompts at
//! once) is, to this test, many independent prompts; the baseline's starts are the reference
//! only for the variation they show (docs/equivalence.md).
//! Reference: Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses* (2005) §3;
//! Phipson & Smyth, "Permutation p-values should never be zero" (2010) for the Monte-Carlo p.

use std::collections::BTreeMap;

use rand::SeedableRng as _;
use rand::seq::SliceRandom as _;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::StatsError;

/// Most labellings of one prompt enumerated for the exact distribution.
pub const EXACT_LABELLINGS: u64 = 5000;
/// Most distinct values of the exact distribution of the sum.
pub const EXACT_SUPPORT: usize = 200_000;
/// Random labellings drawn when the exact distribution is too large.
pub const MONTE_CARLO_DRAWS: usize = 20_000;
/// Seed of the Monte-Carlo draws.
pub const MONTE_CARLO_SEED: u64 = 0x5eed_0e71;

/// Values are summed on this grid (1e-9), so that equal rationals reached by different
/// paths compare equal.
const GRID: f64 = 1e9;

/// One prompt's outputs: a class label per server start of each arm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptStarts {
    /// One label per baseline start that answered this prompt.
    pub baseline: Vec<u32>,
    /// One label per candidate start that answered it.
    pub candidate: Vec<u32>,
}

impl PromptStarts {
    /// Whether the prompt can be compared: two baseline outputs and one candidate output.
    pub fn usable(&self) -> bool {
        self.baseline.len() >= 2 && !self.candidate.is_empty()
    }

    /// `(x̄, ȳ)`: the share of differing baseline pairs and of differing cross pairs.
    pub fn shares(&self) -> (f64, f64) {
        shares(&self.baseline, &self.candidate)
    }
}

/// How the p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum PermutationMethod {
    /// The exact distribution over every labelling.
    Exact,
    /// Random labellings.
    MonteCarlo {
        /// How many.
        draws: usize,
        /// The generator's seed.
        seed: u64,
    },
}

/// The test's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermutationOutcome {
    /// Prompts compared (two baseline outputs and one candidate output at least).
    pub prompts: usize,
    /// `x̄ᵢ` per compared prompt, in the order given.
    pub own: Vec<f64>,
    /// `ȳᵢ` per compared prompt.
    pub cross: Vec<f64>,
    /// One-sided p: the candidate diverges more than the baseline's own starts.
    pub p: f64,
    /// How `p` was computed.
    pub method: PermutationMethod,
}

fn pairs_differ(a: &[u32], b: &[u32]) -> usize {
    a.iter().map(|x| b.iter().filter(|y| *y != x).count()).sum()
}

fn shares(base: &[u32], cand: &[u32]) -> (f64, f64) {
    let b = base.len();
    let self_pairs = b * b.saturating_sub(1) / 2;
    let mut own = 0usize;
    for i in 0..b {
        for j in i + 1..b {
            own += usize::from(base[i] != base[j]);
        }
    }
    let cross_pairs = b * cand.len();
    let x = if self_pairs == 0 {
        0.0
    } else {
        own as f64 / self_pairs as f64
    };
    let y = if cross_pairs == 0 {
        0.0
    } else {
        pairs_differ(base, cand) as f64 / cross_pairs as f64
    };
    (x, y)
}

fn binomial(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut r: u64 = 1;
    for i in 0..k {
        r = match r.checked_mul(n - i) {
            Some(v) => v / (i + 1),
            None => return u64::MAX,
        };
    }
    r
}

/// Every `k`-subset of `0..n`, as index lists, in lexicographic order.
fn subsets(n: usize, k: usize, mut f: impl FnMut(&[usize])) {
    if k > n {
        return;
    }
    let mut idx: Vec<usize> = (0..k).collect();
    loop {
        f(&idx);
        let mut i = k;
        while i > 0 && idx[i - 1] == n - k + i - 1 {
            i -= 1;
        }
        if i == 0 {
            return;
        }
        idx[i - 1] += 1;
        for j in i..k {
            idx[j] = idx[j - 1] + 1;
        }
    }
}

/// `ȳ − x̄` of one labelling: `cand` are the positions (in `all`) taken as the candidate's.
fn contribution(all: &[u32], cand: &[usize], scratch: &mut (Vec<u32>, Vec<u32>)) -> f64 {
    let (b, c) = scratch;
    b.clear();
    c.clear();
    let mut next = cand.iter().peekable();
    for (i, v) in all.iter().enumerate() {
        if next.peek() == Some(&&i) {
            next.next();
            c.push(*v);
        } else {
            b.push(*v);
        }
    }
    let (x, y) = shares(b, c);
    y - x
}

fn key(v: f64) -> i64 {
    (v * GRID).round() as i64
}

/// The exact distribution of one prompt's contribution, `None` above the enumeration limit.
fn prompt_distribution(p: &PromptStarts) -> Option<BTreeMap<i64, f64>> {
    let all: Vec<u32> = p.baseline.iter().chain(&p.candidate).copied().collect();
    let (n, k) = (all.len(), p.candidate.len());
    let count = binomial(n as u64, k as u64);
    if count > EXACT_LABELLINGS {
        return None;
    }
    let mut out: BTreeMap<i64, f64> = BTreeMap::new();
    let w = 1.0 / count as f64;
    let mut scratch = (Vec::new(), Vec::new());
    subsets(n, k, |s| {
        *out.entry(key(contribution(&all, s, &mut scratch)))
            .or_insert(0.0) += w;
    });
    Some(out)
}

fn convolve(a: &BTreeMap<i64, f64>, b: &BTreeMap<i64, f64>) -> BTreeMap<i64, f64> {
    let mut out = BTreeMap::new();
    for (ka, pa) in a {
        for (kb, pb) in b {
            *out.entry(ka + kb).or_insert(0.0) += pa * pb;
        }
    }
    out
}

fn exact_p(prompts: &[&PromptStarts], observed: i64) -> Option<f64> {
    let mut dist: BTreeMap<i64, f64> = BTreeMap::from([(0, 1.0)]);
    for p in prompts {
        let d = prompt_distribution(p)?;
        dist = convolve(&dist, &d);
        if dist.len() > EXACT_SUPPORT {
            return None;
        }
    }
    // A small slack for the grid: values equal to the observed one count as ≥.
    let p: f64 = dist.range(observed - 1..).map(|(_, p)| p).sum();
    Some(p.clamp(0.0, 1.0))
}

fn monte_carlo_p(prompts: &[&PromptStarts], observed: f64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(MONTE_CARLO_SEED);
    let mut scratch = (Vec::new(), Vec::new());
    let mut hits = 0usize;
    let data: Vec<(Vec<u32>, usize)> = prompts
        .iter()
        .map(|p| {
            (
                p.baseline.iter().chain(&p.candidate).copied().collect(),
                p.candidate.len(),
            )
        })
        .collect();
    let mut order: Vec<usize> = Vec::new();
    for _ in 0..MONTE_CARLO_DRAWS {
        let mut t = 0.0;
        for (all, k) in &data {
            order.clear();
            order.extend(0..all.len());
            let (chosen, _) = order.partial_shuffle(&mut rng, *k);
            let mut chosen = chosen.to_vec();
            chosen.sort_unstable();
            t += contribution(all, &chosen, &mut scratch);
        }
        if t >= observed - 1.0 / GRID {
            hits += 1;
        }
    }
    (1 + hits) as f64 / (1 + MONTE_CARLO_DRAWS) as f64
}

/// The permutation test of the module docs over `prompts` (unusable prompts are left out).
pub fn divergence_permutation(prompts: &[PromptStarts]) -> Result<PermutationOutcome, StatsError> {
    let usable: Vec<&PromptStarts> = prompts.iter().filter(|p| p.usable()).collect();
    if usable.is_empty() {
        return Err(StatsError::TooFewSamples {
            what: "output divergence test (prompts with two baseline outputs and a candidate output)",
            n: 0,
            required: 1,
        });
    }
    let (own, cross): (Vec<f64>, Vec<f64>) = usable.iter().map(|p| p.shares()).unzip();
    let observed: f64 = cross.iter().zip(&own).map(|(y, x)| y - x).sum();
    let varying: Vec<&PromptStarts> = usable
        .iter()
        .copied()
        .filter(|p| {
            let first = p.baseline[0];
            p.baseline.iter().chain(&p.candidate).any(|v| *v != first)
        })
        .collect();
    let (p, method) = if varying.is_empty() {
        (1.0, PermutationMethod::Exact)
    } else {
        match exact_p(&varying, key(observed)) {
            Some(p) => (p, PermutationMethod::Exact),
            None => (
                monte_carlo_p(&varying, observed),
                PermutationMethod::MonteCarlo {
                    draws: MONTE_CARLO_DRAWS,
                    seed: MONTE_CARLO_SEED,
                },
            ),
        }
    };
    Ok(PermutationOutcome {
        prompts: usable.len(),
        own,
        cross,
        p,
        method,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(b: &[u32], c: &[u32]) -> PromptStarts {
        PromptStarts {
            baseline: b.to_vec(),
            candidate: c.to_vec(),
        }
    }

    #[test]
    fn identical_outputs_give_p_one() {
        let ps = vec![prompt(&[1, 1], &[1, 1]); 16];
        let o = divergence_permutation(&ps).expect("ok");
        assert_eq!((o.p, o.prompts), (1.0, 16));
        assert_eq!(o.method, PermutationMethod::Exact);
    }

    #[test]
    fn a_changed_prompt_is_a_third_at_two_starts_each() {
        // (a, a | b, b): +1 when the two a's (or the two b's) are the baseline, 2 of 6
        // labellings; −1/2 otherwise. k such prompts: p = (1/3)^k.
        for k in 1..=4usize {
            let mut ps = vec![prompt(&[1, 1], &[1, 1]); 16 - k];
            ps.extend(vec![prompt(&[1, 1], &[2, 2]); k]);
            let o = divergence_permutation(&ps).expect("ok");
            let want = (1.0f64 / 3.0).powi(k as i32);
            assert!((o.p - want).abs() < 1e-12, "k={k}: {} vs {want}", o.p);
        }
    }

    #[test]
    fn the_baselines_own_variation_is_the_reference() {
        // Every prompt varies as much within the baseline as against the candidate.
        let ps = vec![prompt(&[1, 2, 1], &[2, 1]); 12];
        let o = divergence_permutation(&ps).expect("ok");
        assert!(o.p > 0.3, "{}", o.p);
    }

    #[test]
    fn large_designs_fall_back_to_monte_carlo() {
        // 12 + 12 starts: C(24, 12) labellings per prompt, above the exact limit.
        let base = vec![1u32; 12];
        let cand = vec![2u32; 12];
        let ps = vec![prompt(&base, &cand); 3];
        let o = divergence_permutation(&ps).expect("ok");
        assert!(matches!(o.method, PermutationMethod::MonteCarlo { .. }));
        assert!(o.p < 0.001, "{}", o.p);
    }

    #[test]
    fn unusable_prompts_are_left_out_and_none_is_an_error() {
        let ps = vec![prompt(&[1], &[2]), prompt(&[1, 1], &[])];
        assert!(divergence_permutation(&ps).is_err());
        let ps = vec![prompt(&[1], &[2]), prompt(&[1, 1], &[1])];
        assert_eq!(divergence_permutation(&ps).expect("ok").prompts, 1);
    }

    #[test]
    fn subsets_are_every_combination() {
        let mut n = 0;
        subsets(5, 2, |_| n += 1);
        assert_eq!(n, 10);
        assert_eq!(binomial(24, 12), 2_704_156);
    }
}
