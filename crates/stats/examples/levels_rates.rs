//! False-alarm and detection rates of the level statements (docs/statistics-measured.md,
//! "Levels apart from effects"), by simulation of the design the statements read: 2 arms ×
//! 4 points, S server starts per arm and run, each start with its own speed (lognormal,
//! CV `START_CV`) that moves all its points alike, and trial noise (CV `TRIAL_CV`) per point.
//! Cases: no change (A/A), every cell × 0.8 (uniform), one arm × 0.9 (one arm apart), and
//! one cell × 0.85. Per case the share of replicates whose common change is significant,
//! whose shape is `uniform`, and that name a departure (and the right one).
//!
//!     cargo run --release -p servebench-stats --example levels_rates -- 2000 6 0.03 0.02

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use servebench_stats::levels::{CellPlace, LevelObs, LevelSettings, Scope, Shape, levels};

/// A normal draw with standard deviation `sd` (Box–Muller).
fn normal(rng: &mut ChaCha8Rng, sd: f64) -> f64 {
    let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let v: f64 = rng.random();
    sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

const ARMS: usize = 2;
const POINTS: usize = 4;

fn arg(i: usize, default: f64) -> f64 {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let reps = arg(1, 2000.0) as usize;
    let starts = arg(2, 6.0) as usize;
    let start_cv = arg(3, 0.03);
    let trial_cv = arg(4, 0.02);
    let places: Vec<CellPlace> = (0..ARMS)
        .flat_map(|arm| (0..POINTS).map(move |point| CellPlace { arm, point }))
        .collect();
    let settings = LevelSettings {
        alpha: 0.05,
        threshold: 0.05,
    };
    type Shift = fn(usize, usize) -> f64;
    let cases: [(&str, Shift); 4] = [
        ("A/A (no change)", |_, _| 1.0),
        ("uniform × 0.8", |_, _| 0.8),
        ("arm 1 × 0.9", |a, _| if a == 1 { 0.9 } else { 1.0 }),
        ("cell (1, 3) × 0.85", |a, p| {
            if a == 1 && p == 3 { 0.85 } else { 1.0 }
        }),
    ];
    println!(
        "{reps} replicates, {starts} starts per arm and run, start CV {start_cv}, trial CV {trial_cv}, α = 0.05"
    );
    for (name, shift) in cases {
        let mut rng = ChaCha8Rng::seed_from_u64(43);
        let (mut common, mut uniform, mut any, mut arm1, mut cell) = (0, 0, 0, 0, 0);
        for _ in 0..reps {
            let mut obs = Vec::new();
            for r in 0..2 {
                for a in 0..ARMS {
                    for k in 0..starts {
                        let s = normal(&mut rng, start_cv);
                        for p in 0..POINTS {
                            let base = 100.0 * (1 + a + p) as f64;
                            let f = if r == 1 { shift(a, p) } else { 1.0 };
                            obs.push(LevelObs {
                                new_run: r == 1,
                                start: a * 1000 + k,
                                cell: a * POINTS + p,
                                value: base * f * (s + normal(&mut rng, trial_cv)).exp(),
                            });
                        }
                    }
                }
            }
            let l = levels(&obs, &places, &settings).expect("levels");
            common += usize::from(l.common_p < settings.alpha);
            uniform += usize::from(l.shape == Shape::Uniform);
            let named: Vec<Scope> = l
                .departures
                .iter()
                .filter(|d| d.significant)
                .map(|d| d.scope)
                .collect();
            any += usize::from(!named.is_empty());
            arm1 += usize::from(named.contains(&Scope::Arm(1)));
            cell += usize::from(named.contains(&Scope::Cell(POINTS + 3)));
        }
        let pc = |n: usize| format!("{:.1}%", 100.0 * n as f64 / reps as f64);
        println!(
            "{name:20} common change significant {:>6}  shape uniform {:>6}  any departure named {:>6}  arm 1 named {:>6}  cell (1, 3) named {:>6}",
            pc(common),
            pc(uniform),
            pc(any),
            pc(arm1),
            pc(cell)
        );
    }
}
