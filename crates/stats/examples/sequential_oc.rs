//! Operating characteristics of servebench's sequential trials (a long check, not a CI test).
//!
//! Simulates normal log-values for two arms with a given CV (SD of the logs
//! `√ln(1 + CV²)`), a first stage of 5 trials per arm, then one trial per arm per round until
//! the sequential verdict (`sequential::compare_arms_sequential`) is decided or the budget of
//! 30 trials per arm is reached, over many seeds, for both spending functions — and, for
//! contrast, the fixed-sample verdict re-read after every round (optional stopping). Prints
//! the shares of final verdicts and the mean trials per arm used, plus the time one
//! `boundaries` call takes for 40 and 60 looks.
//!
//!     cargo run --release -p servebench-stats --example sequential_oc [-- --seeds 20000]
//!
//! Targets (θ = 5%, α = 0.05): A/A at CV 8% ends directional (improved, regressed, likely)
//! in ≤ 5%; a true +15% at CV 8% is decided improved within 30 in ≥ 90%; A/A at CV 4% is
//! decided equivalent within 30 in ≥ 90%; a true +8% at CV 4% is wrongly decided
//! equivalent in ≤ 5%.

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use servebench_stats::power::sample_size;
use servebench_stats::sequential::{
    Look, SequentialDesign, SpendingFunction, boundaries, compare_arms_sequential,
};
use servebench_stats::verdict::{Direction, Verdict, classify};
use servebench_stats::welch::welch_log_ratio;

const FIRST_STAGE: usize = 5;
const MAX_TRIALS: usize = 30;
const ALPHA: f64 = 0.05;
const THRESHOLD: f64 = 0.05;

#[derive(Clone, Copy)]
enum Rule {
    Sequential(SpendingFunction),
    /// The fixed-sample verdict at 1 − α, re-read after every round.
    Naive,
}

impl Rule {
    fn name(self) -> &'static str {
        match self {
            Rule::Sequential(SpendingFunction::OBrienFleming) => "RCI, O'Brien-Fleming",
            Rule::Sequential(SpendingFunction::Pocock) => "RCI, Pocock",
            Rule::Naive => "fixed-sample CI every round",
        }
    }
}

struct Scenario {
    name: &'static str,
    cv: f64,
    true_ratio: f64,
}

#[derive(Default, Clone, Copy)]
struct Tally {
    runs: u64,
    improved: u64,
    regressed: u64,
    equivalent: u64,
    likely: u64,
    inconclusive: u64,
    ever_significant: u64,
    trials: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.runs += other.runs;
        self.improved += other.improved;
        self.regressed += other.regressed;
        self.equivalent += other.equivalent;
        self.likely += other.likely;
        self.inconclusive += other.inconclusive;
        self.ever_significant += other.ever_significant;
        self.trials += other.trials;
    }

    fn share(&self, count: u64) -> f64 {
        count as f64 / self.runs as f64
    }
}

/// Standard normals by Box–Muller over ChaCha8 (no extra dependency).
fn normals(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(n + 1);
    while out.len() < n {
        let u1: f64 = 1.0 - rng.random::<f64>();
        let u2: f64 = rng.random::<f64>();
        let radius = (-2.0 * u1.ln()).sqrt();
        let angle = std::f64::consts::TAU * u2;
        out.push(radius * angle.cos());
        out.push(radius * angle.sin());
    }
    out.truncate(n);
    out
}

fn run_one(scenario: &Scenario, rule: Rule, looks: &[Look], seed: u64) -> Tally {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let sd = (scenario.cv * scenario.cv).ln_1p().sqrt();
    let shift = scenario.true_ratio.ln();
    let base: Vec<f64> = normals(&mut rng, MAX_TRIALS)
        .iter()
        .map(|z| (sd * z).exp())
        .collect();
    let cand: Vec<f64> = normals(&mut rng, MAX_TRIALS)
        .iter()
        .map(|z| (shift + sd * z).exp())
        .collect();
    let mut tally = Tally {
        runs: 1,
        ..Tally::default()
    };
    let mut ever_significant = false;
    for n in FIRST_STAGE..=MAX_TRIALS {
        let (verdict, significant, stop) = match rule {
            Rule::Sequential(_) => {
                let c = compare_arms_sequential(
                    &base[..n],
                    &cand[..n],
                    Direction::HigherIsBetter,
                    THRESHOLD,
                    &looks[n - FIRST_STAGE],
                )
                .expect("simulated arms are valid");
                (c.verdict, c.significant, c.stop)
            }
            Rule::Naive => {
                let t = welch_log_ratio(&base[..n], &cand[..n], 1.0 - ALPHA)
                    .expect("simulated arms are valid")
                    .log;
                let significant = t.p < ALPHA;
                let v = classify(
                    t.diff,
                    &t.ci,
                    significant,
                    THRESHOLD.ln_1p(),
                    Direction::HigherIsBetter,
                );
                (v, significant, v.is_decided() || n == MAX_TRIALS)
            }
        };
        ever_significant |= significant;
        if stop {
            tally.trials = n as u64;
            match verdict {
                Verdict::Improved => tally.improved = 1,
                Verdict::Regressed => tally.regressed = 1,
                Verdict::Equivalent => tally.equivalent = 1,
                Verdict::LikelyImproved | Verdict::LikelyRegressed => tally.likely = 1,
                Verdict::Inconclusive => tally.inconclusive = 1,
            }
            break;
        }
    }
    tally.ever_significant = u64::from(ever_significant);
    tally
}

fn simulate(scenario: &Scenario, rule: Rule, looks: &[Look], seeds: u64, salt: u64) -> Tally {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let mut total = Tally::default();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|worker| {
                scope.spawn(move || {
                    let mut t = Tally::default();
                    let mut seed = worker;
                    while seed < seeds {
                        t.add(&run_one(scenario, rule, looks, salt * 1_000_003 + seed));
                        seed += threads;
                    }
                    t
                })
            })
            .collect();
        for h in handles {
            total.add(&h.join().expect("worker does not panic"));
        }
    });
    total
}

fn time_boundaries(looks: usize) {
    let fractions: Vec<f64> = (1..=looks).map(|k| k as f64 / looks as f64).collect();
    for spending in [SpendingFunction::OBrienFleming, SpendingFunction::Pocock] {
        let mut ms: Vec<f64> = (0..21)
            .map(|_| {
                let start = Instant::now();
                let b = boundaries(spending, ALPHA, &fractions).expect("valid design");
                std::hint::black_box(b);
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        println!(
            "boundaries({spending:?}, {looks} equally spaced looks): median {:.1} ms (min {:.1}, max {:.1}, 21 calls)",
            ms[10], ms[0], ms[20]
        );
    }
}

fn main() {
    let mut seeds: u64 = 20_000;
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--seeds") {
        seeds = args
            .get(i + 1)
            .and_then(|s| s.parse().ok())
            .expect("--seeds takes a number");
    }
    time_boundaries(40);
    time_boundaries(60);

    let history: Vec<(u64, u64)> = (FIRST_STAGE..=MAX_TRIALS)
        .map(|n| (n as u64, n as u64))
        .collect();
    let scenarios = [
        Scenario {
            name: "A/A, CV 8%",
            cv: 0.08,
            true_ratio: 1.0,
        },
        Scenario {
            name: "+15%, CV 8%",
            cv: 0.08,
            true_ratio: 1.15,
        },
        Scenario {
            name: "A/A, CV 4%",
            cv: 0.04,
            true_ratio: 1.0,
        },
        Scenario {
            name: "+8%, CV 4%",
            cv: 0.04,
            true_ratio: 1.08,
        },
    ];
    println!(
        "\n{seeds} seeds per row; θ = {THRESHOLD}, α = {ALPHA}; first stage {FIRST_STAGE}, +1 per arm per round, budget {MAX_TRIALS}"
    );
    println!(
        "| scenario | rule | improved | regressed | equivalent | likely | inconclusive | directional | ever RCI/CI excl. 0 | mean trials/arm |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (i, scenario) in scenarios.iter().enumerate() {
        for rule in [
            Rule::Sequential(SpendingFunction::OBrienFleming),
            Rule::Sequential(SpendingFunction::Pocock),
            Rule::Naive,
        ] {
            let looks = match rule {
                Rule::Sequential(spending) => SequentialDesign::new(spending, ALPHA, 30)
                    .and_then(|d| d.looks(&history))
                    .expect("valid design"),
                Rule::Naive => Vec::new(),
            };
            // The same seeds (same data) for every rule of a scenario.
            let t = simulate(scenario, rule, &looks, seeds, i as u64 + 1);
            println!(
                "| {} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {:.2} |",
                scenario.name,
                rule.name(),
                t.share(t.improved),
                t.share(t.regressed),
                t.share(t.equivalent),
                t.share(t.likely),
                t.share(t.inconclusive),
                t.share(t.improved + t.regressed + t.likely),
                t.share(t.ever_significant),
                t.trials as f64 / t.runs as f64,
            );
        }
    }
    let sd = (0.08f64 * 0.08).ln_1p().sqrt();
    let detect = sample_size(sd, 1.15f64.ln(), ALPHA, 0.8).expect("valid");
    let beyond = 1.15f64.ln() - THRESHOLD.ln_1p();
    let beyond_80 = sample_size(sd, beyond, ALPHA, 0.8).expect("valid");
    let beyond_90 = sample_size(sd, beyond, ALPHA, 0.9).expect("valid");
    println!(
        "\nfixed-sample trials per arm, +15% at CV 8% (SD of logs {sd:.4}): {detect} to detect it (δ = ln 1.15, power 0.8); \
         {beyond_80} (power 0.8) / {beyond_90} (power 0.9) to put the CI beyond θ (δ = ln 1.15 − ln 1.05)"
    );
}
