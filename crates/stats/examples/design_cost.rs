//! GPU-seconds per decided cell of three designs on the nested model (a long check, not a
//! CI test): one trial per start (today's fixed design), the optimized n and k
//! (`nested::allocation::optimize`), and the sequential design (one trial per start, a first
//! stage, then a start per arm per round, O'Brien–Fleming). Over scenarios from "starts
//! expensive, between-start variance small" to "starts cheap, between-start variance large",
//! many seeds each, it prints the A/A false-verdict rate, the detection rate at θ, and the
//! seconds per detected cell (docs/statistics-measured.md, "Designs by cost").
//!
//!     cargo run --release -p servebench-stats --example design_cost [-- --seeds 4000]
//!
//! Target: the optimized design costs at most half of one trial per start where starts
//! dominate, and never more, at false-verdict rates ≤ α and the same detection.

use servebench_stats::nested::allocation::{Costs, Target, Variances, design_with, optimize};
use servebench_stats::nested::simulate::{Plan, Tally, Truth, sequential_looks, tally};

struct Scenario {
    name: &'static str,
    sd_between: f64,
    sd_within: f64,
    start_s: f64,
    trial_s: f64,
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "starts 80 s, σb 1%, σw 5%",
        sd_between: 0.01,
        sd_within: 0.05,
        start_s: 80.0,
        trial_s: 10.0,
    },
    Scenario {
        name: "starts 80 s, σb 3%, σw 3%",
        sd_between: 0.03,
        sd_within: 0.03,
        start_s: 80.0,
        trial_s: 10.0,
    },
    Scenario {
        name: "starts 20 s, σb 2%, σw 4%",
        sd_between: 0.02,
        sd_within: 0.04,
        start_s: 20.0,
        trial_s: 10.0,
    },
    Scenario {
        name: "starts 5 s, σb 4%, σw 2%",
        sd_between: 0.04,
        sd_within: 0.02,
        start_s: 5.0,
        trial_s: 10.0,
    },
    Scenario {
        name: "starts 1 s, σb 5%, σw 1%",
        sd_between: 0.05,
        sd_within: 0.01,
        start_s: 1.0,
        trial_s: 10.0,
    },
];

const TARGET: Target = Target {
    theta: 0.05,
    alpha: 0.05,
    power: 0.8,
};

fn row(name: &str, design: &str, aa: &Tally, hit: &Tally) {
    println!(
        "| {name} | {design} | {:.2}% | {:.1}% | {:.0} | {} |",
        100.0 * aa.false_rate(),
        100.0 * hit.detection(),
        hit.mean_seconds(),
        hit.seconds_per_detection()
            .map_or("—".into(), |s| format!("{s:.0}")),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seeds: u64 = args
        .iter()
        .position(|a| a == "--seeds")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    println!("{seeds} seeds per row; θ = 5%, α = 0.05, power 0.8; T = 10 s per trial\n");
    println!(
        "| scenario | design (n starts per arm × k) | A/A false verdicts | detected at θ | mean s per cell | s per detected cell |"
    );
    println!("|---|---|---|---|---|---|");
    for sc in SCENARIOS {
        let v = Variances {
            between: sc.sd_between.powi(2),
            within: sc.sd_within.powi(2),
        };
        let c = Costs {
            start_s: sc.start_s,
            trial_s: sc.trial_s,
        };
        let one = design_with(v, c, TARGET, 1).expect("design");
        let best = optimize(v, c, TARGET, 10).expect("design");
        let first = one.starts_per_arm.clamp(3, 5);
        let max = (2 * one.starts_per_arm).max(first + 1);
        let looks = sequential_looks(TARGET.alpha, first, max).expect("looks");
        let plans = [
            (
                format!("one per start ({}×1)", one.starts_per_arm),
                Plan::Fixed {
                    n: one.starts_per_arm,
                    k: 1,
                },
            ),
            (
                format!("optimized ({}×{})", best.starts_per_arm, best.per_start),
                Plan::Fixed {
                    n: best.starts_per_arm,
                    k: best.per_start,
                },
            ),
            (
                format!("sequential ({first}..{max}×1)"),
                Plan::Sequential { first, k: 1, looks },
            ),
        ];
        for (name, plan) in &plans {
            let aa = tally(
                plan,
                Truth {
                    variances: v,
                    ratio: 1.0,
                },
                c,
                TARGET.alpha,
                1,
                seeds,
            );
            let hit = tally(
                plan,
                Truth {
                    variances: v,
                    ratio: 1.0 + TARGET.theta,
                },
                c,
                TARGET.alpha,
                1_000_000,
                seeds,
            );
            row(sc.name, name, &aa, &hit);
        }
    }
}
