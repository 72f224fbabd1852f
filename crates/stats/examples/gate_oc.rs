//! Operating characteristics of the non-inferiority gate (`--fail-on
//! not-shown-non-inferior`; a long check, not a CI test).
//!
//! Simulates normal log-values for two arms with a given trial CV (SD of the logs
//! `√ln(1 + CV²)`) and a true ratio candidate/baseline, over many seeds, and reads each
//! simulated cell the way `servebench compare` does:
//! * **fixed**: `n` trials per arm, the Welch interval of the log ratio at `1 − α`; the gate
//!   passes when its lower end is above `−ln(1 + θ)` (`gate::answer`);
//! * **sequential**: a first stage of 5 trials per arm, then one per arm per round up to a
//!   budget `N`, the repeated interval of an O'Brien–Fleming design at each look
//!   (`sequential::compare_arms_sequential`); the cell stops as soon as the gate's question
//!   is answered either way (the interval wholly above or wholly below `−ln(1 + θ)`), and
//!   passes when it stopped shown non-inferior.
//!
//! For the other gates, the same fixed cells are also read by the verdict: `regressed` trips
//! on a regressed cell, `likely-regressed` on regressed or likely regressed, `inconclusive`
//! on an inconclusive one; `not-shown-superior` trips unless the interval lies wholly above
//! `+ln(1 + θ)` (and the verdict is on the better side). The superiority gate is also run sequentially
//! on the same trials, its cell stopping once its own question is answered either way.
//!
//! Prints per scenario the share of cells that *fail* the gate (on an A/A: the
//! false-failure rate, target ≤ α at the design's trial count; on a loss: the detection
//! rate) and the mean trials per arm, and the design counts of `gate::trials_to_pass`.
//!
//!     cargo run --release -p servebench-stats --example gate_oc [-- --seeds 20000]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use servebench_stats::gate::{Answer, Question, answer, trials_to_pass};
use servebench_stats::sequential::{
    Look, SequentialDesign, SpendingFunction, compare_arms_sequential,
};
use servebench_stats::verdict::{Direction, Verdict, compare_arms};

const FIRST_STAGE: usize = 5;
const ALPHA: f64 = 0.05;

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

#[derive(Clone, Copy)]
struct Scenario {
    name: &'static str,
    cv: f64,
    ratio: f64,
    theta: f64,
}

#[derive(Clone, Copy)]
enum Design {
    Fixed(usize),
    /// Budget N per arm.
    Sequential(usize),
}

#[derive(Default, Clone, Copy)]
struct Tally {
    runs: u64,
    /// The non-inferiority gate failed (not shown, or shown worse).
    ni_failed: u64,
    /// … of which shown worse (the interval wholly below −θ).
    shown_worse: u64,
    /// `regressed` tripped (fixed designs only).
    regressed: u64,
    /// `likely-regressed` tripped (fixed designs only).
    likely_regressed: u64,
    /// `inconclusive` tripped (fixed designs only).
    inconclusive: u64,
    /// `not-shown-superior` tripped (fixed, or sequential with its own stopping rule).
    sup_failed: u64,
    /// Trials per arm the sequential superiority gate used.
    sup_trials: u64,
    trials: u64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.runs += o.runs;
        self.ni_failed += o.ni_failed;
        self.shown_worse += o.shown_worse;
        self.regressed += o.regressed;
        self.likely_regressed += o.likely_regressed;
        self.inconclusive += o.inconclusive;
        self.sup_failed += o.sup_failed;
        self.sup_trials += o.sup_trials;
        self.trials += o.trials;
    }
    fn share(&self, x: u64) -> f64 {
        x as f64 / self.runs as f64
    }
}

fn arms(s: &Scenario, n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let sd = (s.cv * s.cv).ln_1p().sqrt();
    let shift = s.ratio.ln();
    let base = normals(&mut rng, n)
        .iter()
        .map(|z| (sd * z).exp())
        .collect();
    let cand = normals(&mut rng, n)
        .iter()
        .map(|z| (shift + sd * z).exp())
        .collect();
    (base, cand)
}

fn log_ci(c: &servebench_stats::verdict::ArmComparison) -> servebench_stats::ConfidenceInterval {
    c.effect_interval_on_scale()
}

/// The superiority gate's answer, as `servebench compare` reads it: the interval wholly above
/// `+margin`, and the verdict on the better side (`compare`'s `cell_answer`).
fn superior(ci: &servebench_stats::ConfidenceInterval, margin: f64, verdict: Verdict) -> Answer {
    match answer(Question::Superiority, ci, margin, Direction::HigherIsBetter) {
        Answer::Shown if verdict.is_better() != Some(true) => Answer::NotShown,
        a => a,
    }
}

fn run_one(s: &Scenario, design: Design, looks: &[Look], seed: u64) -> Tally {
    let margin = s.theta.ln_1p();
    let mut t = Tally {
        runs: 1,
        ..Tally::default()
    };
    match design {
        Design::Fixed(n) => {
            let (b, c) = arms(s, n, seed);
            let cmp = compare_arms(&b, &c, Direction::HigherIsBetter, s.theta, ALPHA)
                .expect("simulated arms are valid");
            let a = answer(
                Question::NonInferiority,
                &log_ci(&cmp),
                margin,
                Direction::HigherIsBetter,
            );
            t.ni_failed = u64::from(a != Answer::Shown);
            t.shown_worse = u64::from(a == Answer::ShownNot);
            t.regressed = u64::from(cmp.verdict == Verdict::Regressed);
            t.likely_regressed = u64::from(matches!(
                cmp.verdict,
                Verdict::Regressed | Verdict::LikelyRegressed
            ));
            t.inconclusive = u64::from(cmp.verdict == Verdict::Inconclusive);
            t.sup_failed = u64::from(superior(&log_ci(&cmp), margin, cmp.verdict) != Answer::Shown);
            t.trials = n as u64;
            t.sup_trials = n as u64;
        }
        Design::Sequential(budget) => {
            let (b, c) = arms(s, budget, seed);
            for n in FIRST_STAGE..=budget {
                let look = &looks[n - FIRST_STAGE];
                let cmp = compare_arms_sequential(
                    &b[..n],
                    &c[..n],
                    Direction::HigherIsBetter,
                    s.theta,
                    look,
                )
                .expect("simulated arms are valid");
                let a = answer(
                    Question::NonInferiority,
                    &cmp.rci,
                    margin,
                    Direction::HigherIsBetter,
                );
                if a.is_settled() || look.last {
                    t.ni_failed = u64::from(a != Answer::Shown);
                    t.shown_worse = u64::from(a == Answer::ShownNot);
                    t.trials = n as u64;
                    break;
                }
            }
            // The superiority gate on the same trials, stopping on its own question.
            for n in FIRST_STAGE..=budget {
                let look = &looks[n - FIRST_STAGE];
                let cmp = compare_arms_sequential(
                    &b[..n],
                    &c[..n],
                    Direction::HigherIsBetter,
                    s.theta,
                    look,
                )
                .expect("simulated arms are valid");
                let a = superior(&cmp.rci, margin, cmp.verdict);
                if a.is_settled() || look.last {
                    t.sup_failed = u64::from(a != Answer::Shown);
                    t.sup_trials = n as u64;
                    break;
                }
            }
        }
    }
    t
}

fn simulate(s: &Scenario, design: Design, looks: &[Look], seeds: u64, salt: u64) -> Tally {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let mut total = Tally::default();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|worker| {
                scope.spawn(move || {
                    let mut t = Tally::default();
                    let mut seed = worker;
                    while seed < seeds {
                        t.add(&run_one(s, design, looks, salt * 1_000_003 + seed));
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

fn main() {
    let mut seeds: u64 = 20_000;
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--seeds") {
        seeds = args
            .get(i + 1)
            .and_then(|s| s.parse().ok())
            .expect("--seeds takes a number");
    }
    let sd8 = (0.08f64 * 0.08).ln_1p().sqrt();
    let theta: f64 = 0.05;
    let design1 =
        trials_to_pass(sd8, theta.ln_1p(), ALPHA, 1.0 - ALPHA, 1).expect("valid") as usize;
    let design4 =
        trials_to_pass(sd8, theta.ln_1p(), ALPHA, 1.0 - ALPHA, 4).expect("valid") as usize;
    println!(
        "design counts at CV 8%, θ = 5%, α = {ALPHA}: an A/A passes 1 cell with ≥ 95% at {design1} trials per arm, 4 cells at {design4}"
    );
    // The case: −5.2% at c=32 measured [−11.1%, +1.1%] with 3 trials per arm, which
    // a trial CV near 2.6% gives, at the default θ = 2%.
    let cases = [
        Scenario {
            name: "issue 29: −5.2%, CV 2.6%, θ 2%",
            cv: 0.026,
            ratio: 0.948,
            theta: 0.02,
        },
        Scenario {
            name: "A/A, CV 8%, θ 5%",
            cv: 0.08,
            ratio: 1.0,
            theta,
        },
        Scenario {
            name: "−5%, CV 8%, θ 5%",
            cv: 0.08,
            ratio: 0.95,
            theta,
        },
        Scenario {
            name: "at the margin (1/1.05), CV 8%, θ 5%",
            cv: 0.08,
            ratio: 1.0 / 1.05,
            theta,
        },
        Scenario {
            name: "−2.5%, CV 8%, θ 5%",
            cv: 0.08,
            ratio: 0.975,
            theta,
        },
        // For the superiority gate: a real speed-up beyond θ, and one at θ itself.
        Scenario {
            name: "+10%, CV 8%, θ 5%",
            cv: 0.08,
            ratio: 1.10,
            theta,
        },
        Scenario {
            name: "+5% (at the margin), CV 8%, θ 5%",
            cv: 0.08,
            ratio: 1.05,
            theta,
        },
    ];
    let designs = [
        Design::Fixed(3),
        Design::Fixed(6),
        Design::Fixed(10),
        Design::Fixed(30),
        Design::Fixed(design1),
        Design::Fixed(design4),
        Design::Sequential(design1),
        // A budget a tenth above the fixed count: the repeated interval at the last look is
        // wider than the fixed-sample one.
        Design::Sequential((design1 as f64 * 1.1).ceil() as usize),
        Design::Sequential(100),
    ];
    println!(
        "\n{seeds} seeds per row; α = {ALPHA}; sequential: O'Brien–Fleming, first stage {FIRST_STAGE}, +1 per arm per round"
    );
    println!(
        "| scenario | design | gate fails | of which shown worse | `regressed` trips | `likely-regressed` trips | `inconclusive` trips | `not-shown-superior` trips | mean trials/arm | superiority's mean trials/arm |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (i, s) in cases.iter().enumerate() {
        for d in designs {
            let (name, looks) = match d {
                Design::Fixed(n) => (format!("fixed {n}"), Vec::new()),
                Design::Sequential(n) => {
                    let history: Vec<(u64, u64)> =
                        (FIRST_STAGE..=n).map(|k| (k as u64, k as u64)).collect();
                    let looks =
                        SequentialDesign::new(SpendingFunction::OBrienFleming, ALPHA, n as u64)
                            .and_then(|x| x.looks(&history))
                            .expect("valid design");
                    (format!("sequential, budget {n}"), looks)
                }
            };
            // The same seeds for every design of a scenario.
            let t = simulate(s, d, &looks, seeds, i as u64 + 1);
            let old = |x: u64| match d {
                Design::Fixed(_) => format!("{:.4}", t.share(x)),
                Design::Sequential(_) => "—".into(),
            };
            println!(
                "| {} | {name} | {:.4} | {:.4} | {} | {} | {} | {:.4} | {:.2} | {:.2} |",
                s.name,
                t.share(t.ni_failed),
                t.share(t.shown_worse),
                old(t.regressed),
                old(t.likely_regressed),
                old(t.inconclusive),
                t.share(t.sup_failed),
                t.trials as f64 / t.runs as f64,
                t.sup_trials as f64 / t.runs as f64
            );
        }
    }
}
