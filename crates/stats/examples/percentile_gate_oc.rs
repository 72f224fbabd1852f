//! Operating characteristics of `compare` and its gates on an arbitrary percentile
//! (`ttft_p95`, any `<family>_pNN`; a long check, not a CI test).
//!
//! `gate_oc` reads normal log-values per trial: right for a mean, whose trial values are
//! near-normal. A percentile's trial value is the pNN of that trial's requests, so it carries
//! the sampling noise of a few tail requests (at 90 requests a trial, p95 rests on the
//! largest five) and a skew a mean does not. This example draws the requests themselves:
//! each trial has `requests` request latencies, log-normal with a request-level CV, times a
//! trial factor (log-normal, the trial-level CV: the machine's and the server's drift from
//! trial to trial); the candidate's latencies are the baseline's distribution times `ratio`.
//! Each trial's value is the type-7 percentile of its requests (what `servebench` reads from
//! the stored histograms, to their 0.1% resolution), and the arms are read as `compare`
//! reads them (`verdict::compare_arms`, Welch on the logs, lower is better) and gated (`gate::
//! answer`, non-inferiority at θ).
//!
//! Prints per scenario, for p95 (and p99, p50 and the mean of the same requests beside it):
//! the share of cells with a directional verdict, the shares that trip `regressed` and
//! `likely-regressed`, and the share that fail `not-shown-non-inferior`.
//!
//!     cargo run --release -p servebench-stats --example percentile_gate_oc [-- --seeds 4000]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use servebench_stats::gate::{Answer, Question, answer};
use servebench_stats::percentile::percentile_sorted;
use servebench_stats::verdict::{Direction, Verdict, compare_arms};

const ALPHA: f64 = 0.05;

/// Standard normals by Box–Muller over ChaCha8 (as `gate_oc`).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[derive(Clone, Copy)]
struct Scenario {
    /// Latency ratio candidate / baseline (1: an A/A; 1.1: 10% slower).
    ratio: f64,
    /// Request-level CV of the latencies within a trial.
    request_cv: f64,
    /// Trial-level CV (a factor common to a trial's requests).
    trial_cv: f64,
    requests: usize,
    trials: usize,
    theta: f64,
}

/// What a trial is summarised by.
#[derive(Clone, Copy)]
enum Stat {
    Mean,
    Quantile(f64),
}

impl Stat {
    fn name(self) -> String {
        match self {
            Stat::Mean => "mean".into(),
            Stat::Quantile(q) => format!("p{}", (q * 100.0).round()),
        }
    }
    fn of(self, sorted: &[f64]) -> f64 {
        match self {
            Stat::Mean => sorted.iter().sum::<f64>() / sorted.len() as f64,
            Stat::Quantile(q) => percentile_sorted(sorted, q).expect("non-empty"),
        }
    }
}

const STATS: [Stat; 4] = [
    Stat::Quantile(0.95),
    Stat::Quantile(0.99),
    Stat::Quantile(0.5),
    Stat::Mean,
];

#[derive(Default, Clone, Copy)]
struct Tally {
    runs: u64,
    directional: u64,
    regressed: u64,
    likely_regressed: u64,
    ni_failed: u64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.runs += o.runs;
        self.directional += o.directional;
        self.regressed += o.regressed;
        self.likely_regressed += o.likely_regressed;
        self.ni_failed += o.ni_failed;
    }
    fn share(&self, x: u64) -> f64 {
        x as f64 / self.runs as f64
    }
}

/// One arm's trial values for every statistic: `[stat][trial]`.
fn arm(s: &Scenario, ratio: f64, rng: &mut ChaCha8Rng) -> Vec<Vec<f64>> {
    let sd_r = (s.request_cv * s.request_cv).ln_1p().sqrt();
    let sd_t = (s.trial_cv * s.trial_cv).ln_1p().sqrt();
    let mut out = vec![Vec::with_capacity(s.trials); STATS.len()];
    let mut lat = vec![0.0; s.requests];
    for _ in 0..s.trials {
        let trial = ratio.ln() + sd_t * normal(rng);
        for l in lat.iter_mut() {
            *l = (trial + sd_r * normal(rng)).exp();
        }
        lat.sort_by(f64::total_cmp);
        for (k, st) in STATS.iter().enumerate() {
            out[k].push(st.of(&lat));
        }
    }
    out
}

fn run_one(s: &Scenario, seed: u64) -> Vec<Tally> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let base = arm(s, 1.0, &mut rng);
    let cand = arm(s, s.ratio, &mut rng);
    let margin = s.theta.ln_1p();
    (0..STATS.len())
        .map(|k| {
            let cmp = compare_arms(&base[k], &cand[k], Direction::LowerIsBetter, s.theta, ALPHA)
                .expect("simulated arms are valid");
            let a = answer(
                Question::NonInferiority,
                &cmp.effect_interval_on_scale(),
                margin,
                Direction::LowerIsBetter,
            );
            Tally {
                runs: 1,
                directional: u64::from(cmp.verdict.is_better().is_some()),
                regressed: u64::from(cmp.verdict == Verdict::Regressed),
                likely_regressed: u64::from(matches!(
                    cmp.verdict,
                    Verdict::Regressed | Verdict::LikelyRegressed
                )),
                ni_failed: u64::from(a != Answer::Shown),
            }
        })
        .collect()
}

fn simulate(s: &Scenario, seeds: u64, salt: u64) -> Vec<Tally> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let mut total = vec![Tally::default(); STATS.len()];
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|worker| {
                scope.spawn(move || {
                    let mut t = vec![Tally::default(); STATS.len()];
                    let mut seed = worker;
                    while seed < seeds {
                        for (a, b) in t.iter_mut().zip(run_one(s, salt * 1_000_003 + seed)) {
                            a.add(&b);
                        }
                        seed += threads;
                    }
                    t
                })
            })
            .collect();
        for h in handles {
            for (a, b) in total
                .iter_mut()
                .zip(h.join().expect("worker does not panic"))
            {
                a.add(&b);
            }
        }
    });
    total
}

fn main() {
    let mut seeds: u64 = 4_000;
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--seeds") {
        seeds = args
            .get(i + 1)
            .and_then(|s| s.parse().ok())
            .expect("--seeds takes a number");
    }
    println!(
        "{seeds} seeds per row; α = {ALPHA}; lower is better; directional = improved, \
         regressed, likely improved or likely regressed"
    );
    println!(
        "| latency ratio | request CV | trial CV | requests/trial | trials/arm | θ | statistic \
         | directional | `regressed` | `likely-regressed` | `not-shown-non-inferior` fails |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut salt = 0;
    for ratio in [1.0, 1.05, 1.10, 1.20] {
        for (request_cv, trial_cv) in [(0.3, 0.02), (0.8, 0.02)] {
            for requests in [90, 400] {
                for (trials, theta) in [(5, 0.02), (5, 0.05), (20, 0.05)] {
                    let s = Scenario {
                        ratio,
                        request_cv,
                        trial_cv,
                        requests,
                        trials,
                        theta,
                    };
                    salt += 1;
                    // The same seeds for every statistic of a scenario (the same requests).
                    let t = simulate(&s, seeds, salt);
                    for (k, st) in STATS.iter().enumerate() {
                        let t = &t[k];
                        println!(
                            "| {ratio} | {request_cv} | {trial_cv} | {requests} | {trials} | \
                             {theta} | {} | {:.4} | {:.4} | {:.4} | {:.4} |",
                            st.name(),
                            t.share(t.directional),
                            t.share(t.regressed),
                            t.share(t.likely_regressed),
                            t.share(t.ni_failed)
                        );
                    }
                }
            }
        }
    }
}
