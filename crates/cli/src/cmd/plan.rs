//! `servebench plan SPEC [--set KEY=VALUE]…`: the trials in run order, and how long they will
//! take.

use std::path::PathBuf;

use anyhow::Result;
use servebench_compare::{FailOn, GateSpec};
use servebench_result::estimate;
use servebench_spec::SpecFile;
use servebench_stats::gate::trials_to_pass;

use crate::exit::Exit;

/// Arguments of `plan`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The estimated duration comes from the workload where it fixes it \
                  (trials by duration, open-loop sends, cooldowns) and, when the spec has \
                  run before, from the newest result under `--results-dir`/<spec name>/: \
                  each trial at the pace its cell had there, server starts at what they \
                  took.\n\nExit codes: 0 planned; 1 invalid spec (or overrides); 2 usage or \
                  I/O error."
)]
pub(crate) struct Args {
    /// The spec file.
    spec: PathBuf,
    /// Print the plan as JSON (with an `estimate` object).
    #[arg(long)]
    json: bool,
    /// The gate to plan for (as `run --fail-on` would use it): what it asks, how many cells
    /// it gates, and the trials per arm at which an A/A passes it.
    #[command(flatten)]
    gate: super::compare::GateArgs,
    /// Choose starts per arm and trials per start at the least GPU time, and print that
    /// design's predicted GPU-seconds beside one trial per start and the sequential design
    /// (from `--from`, or the spec's `trials.optimize`).
    #[arg(long)]
    optimize: bool,
    /// With `--optimize`: the pilot result (with `trials.per_start` ≥ 2) to measure the
    /// variance components and costs from.
    #[arg(long, value_name = "RESULT", requires = "optimize")]
    from: Option<PathBuf>,
    /// With `--optimize --from`: the metric whose components are measured (default: the
    /// first of `compare.metrics`).
    #[arg(long, value_name = "NAME", requires = "from")]
    metric: Option<String>,
    /// Where earlier results of the spec are (`<results-dir>/<spec name>/*.json`).
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// The same overrides `run` takes: the plan is of the spec `run` would measure.
    #[command(flatten)]
    overrides: super::SpecOverrides,
}

/// Print the ordered plan and its estimated duration.
pub(crate) fn run(args: Args) -> Result<Exit> {
    let overrides = args.overrides.list()?;
    let Some(spec) = super::load_spec(&args.spec)? else {
        return Ok(Exit::Failed);
    };
    let file = args.spec.display().to_string();
    let Some(spec) = super::apply_overrides(spec, &overrides, &file)? else {
        return Ok(Exit::Failed);
    };
    super::print_warnings(&spec, &file);
    let Some(spec) = super::design::resolve(spec, &file)? else {
        return Ok(Exit::Failed);
    };
    let optimized = if args.optimize {
        match optimize_text(&spec.file, args.from.as_deref(), args.metric.as_deref())? {
            Ok(text) => Some(text),
            Err(why) => {
                eprintln!("servebench plan --optimize: {why}");
                return Ok(Exit::Failed);
            }
        }
    } else {
        None
    };
    let plan = servebench_spec::plan::plan(&spec.file);
    let gate = args.gate.resolve(&spec.file)?;
    let estimate =
        (plan.search.is_none()).then(|| estimate::estimate(&spec.file, &plan, &args.results_dir));
    if args.json {
        let mut v = serde_json::to_value(&plan)?;
        if let (serde_json::Value::Object(m), Some(e)) = (&mut v, &estimate) {
            m.insert("estimate".into(), serde_json::to_value(e)?);
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{plan}");
        if gate.is_active() && spec.file.spec.search.is_none() {
            print!("{}", gate_plan(&spec.file, &gate));
        }
        if let Some(text) = &optimized {
            print!("{text}");
        }
        match &estimate {
            Some(e) => print!("{}", e.render()),
            None => println!(
                "\nestimated duration: a capacity search chooses its loads as it goes; its \
                 length is bounded by `search.max_rounds` server starts per variant (docs/search.md)"
            ),
        }
    }
    Ok(Exit::Ok)
}

/// `plan --optimize`'s table: from the pilot `from`, or the spec's stated values; `Err` in
/// words when neither can say.
fn optimize_text(
    spec: &SpecFile,
    from: Option<&std::path::Path>,
    metric: Option<&str>,
) -> Result<std::result::Result<String, String>> {
    use super::design::{Inputs, inputs_from_result, report};
    let inputs = match (from, &spec.spec.trials.optimize) {
        (Some(path), _) => {
            let loaded = super::load_result(path)?;
            let metric = metric
                .map(str::to_owned)
                .or_else(|| spec.spec.compare.metrics.first().cloned())
                .unwrap_or_else(|| "output_throughput".into());
            let shown = path.display().to_string();
            match inputs_from_result(&loaded.result, &metric, &shown) {
                Ok(i) => i,
                Err(why) => return Ok(Err(why)),
            }
        }
        (None, Some(o)) => Inputs {
            stated: o.clone(),
            from: "the spec's trials.optimize".into(),
        },
        (None, None) => {
            return Ok(Err(
                "give a pilot result with `--from RESULT` (measured with \
                 `trials.per_start: 2` or more), or state the values in the spec's \
                 `trials.optimize` (docs/spec.md)"
                    .into(),
            ));
        }
    };
    Ok(report(spec, &inputs))
}

/// The SD of the logs of a lognormal value with coefficient of variation `cv`.
fn log_sd(cv: f64) -> f64 {
    cv.mul_add(cv, 1.0).ln().sqrt()
}

/// The largest trial CV at which an A/A passes `cells` non-inferiority cells at margin
/// `l = ln(1 + θ)` with probability ≥ 1 − α, given `n` trials per arm (bisection on the
/// sample-size formula, which falls as the CV does).
fn largest_cv(n: u64, l: f64, alpha: f64, cells: usize) -> Option<f64> {
    let passes =
        |cv: f64| trials_to_pass(log_sd(cv), l, alpha, 1.0 - alpha, cells).is_ok_and(|k| k <= n);
    let (mut lo, mut hi) = (1e-6, 1.0);
    if !passes(lo) {
        return None;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if passes(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// What the gate asks, what it covers, and what an A/A needs to pass it.
fn gate_plan(spec: &SpecFile, gate: &GateSpec) -> String {
    let s = &spec.spec;
    let asked: Vec<&str> = gate.fail_on.iter().map(|f| f.as_str()).collect();
    let metrics: Vec<&String> = s
        .compare
        .metrics
        .iter()
        .filter(|m| gate.gates_metric(m))
        .collect();
    let points: Vec<String> = servebench_spec::plan::sweep_points(spec)
        .iter()
        .map(ToString::to_string)
        .filter(|l| gate.gates_point(l))
        .collect();
    let candidates = s.variants.len().saturating_sub(1);
    let cells = candidates * metrics.len() * points.len();
    let thetas: Vec<f64> = metrics
        .iter()
        .map(|m| {
            gate.theta(
                s.compare
                    .thresholds
                    .get(*m)
                    .copied()
                    .unwrap_or(s.compare.threshold),
            )
        })
        .collect();
    let theta = thetas.iter().copied().fold(f64::INFINITY, f64::min);
    let alpha = s.compare.alpha;
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    let mut out = format!(
        "\ngate --fail-on {}: {} gated cell(s) ({candidates} candidate(s) × {} metric(s) × {} \
         point(s): {}; {})\n",
        asked.join(","),
        cells,
        metrics.len(),
        points.len(),
        metrics
            .iter()
            .map(|m| m.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        if points.len() == servebench_spec::plan::sweep_points(spec).len() {
            "every point".to_owned()
        } else {
            points.join("; ")
        }
    );
    if gate.fail_on.contains(&FailOn::NotShownNonInferior) && cells > 0 && theta.is_finite() {
        let l = theta.ln_1p();
        let n = u64::from(s.trials.count);
        out.push_str(&format!(
            "  passes only when every gated cell's interval lies wholly above −{} (an \
             undecided cell fails); a candidate truly worse by {} passes a cell with \
             probability ≤ α/2 = {}\n",
            pct(theta),
            pct(theta),
            alpha / 2.0
        ));
        match largest_cv(n, l, alpha, cells) {
            Some(cv) => out.push_str(&format!(
                "  at {n} trials per arm an A/A passes all {cells} with probability ≥ {} only \
                 when the trials' CV is at most {}\n",
                pct(1.0 - alpha),
                pct(cv)
            )),
            None => out.push_str(&format!(
                "  at {n} trials per arm an A/A cannot be expected to pass\n"
            )),
        }
        let need: Vec<String> = [0.02, 0.05, 0.1]
            .iter()
            .map(|cv| {
                let k = trials_to_pass(log_sd(*cv), l, alpha, 1.0 - alpha, cells);
                format!(
                    "CV {}: {}",
                    pct(*cv),
                    k.map_or_else(|_| "more than a million".into(), |k| k.to_string())
                )
            })
            .collect();
        out.push_str(&format!("  trials per arm for that: {}\n", need.join(", ")));
    }
    if let Some(u) = &s.trials.until_decided {
        let needs = gate.needs();
        let question = if needs.non_inferiority || needs.superiority {
            format!(
                "its repeated interval lies wholly {} (the gate's question answered either \
                 way)",
                match (needs.non_inferiority, needs.superiority) {
                    (true, true) =>
                        format!("above or below both −{} and +{}", pct(theta), pct(theta)),
                    (true, false) => format!("above or below −{}", pct(theta)),
                    _ => format!("above or below +{}", pct(theta)),
                }
            )
        } else {
            "every gated metric is decided".to_owned()
        };
        out.push_str(&format!(
            "  sequential: a gated cell stops once {question}, or at its budget of {} trials; \
             the most the run can cost is the plan's \"at most\" above\n",
            u.max
        ));
        // The repeated interval at the last look is wider than a fixed-sample one: a budget
        // 1.1 × the fixed count keeps an A/A's false failures at α (measured with
        // `examples/gate_oc.rs`, docs/statistics-measured.md).
        if gate.fail_on.contains(&FailOn::NotShownNonInferior) && cells > 0 && theta.is_finite() {
            let as_fixed = (f64::from(u.max) / 1.1).floor() as u64;
            if let Some(cv) = largest_cv(as_fixed, theta.ln_1p(), alpha, cells) {
                out.push_str(&format!(
                    "  at the budget of {} an A/A passes all {cells} with probability ≥ {} \
                     when the trials' CV is at most {} (a budget works as about 1/1.1 of it \
                     fixed)\n",
                    u.max,
                    pct(1.0 - alpha),
                    pct(cv)
                ));
            }
        }
    }
    out
}
