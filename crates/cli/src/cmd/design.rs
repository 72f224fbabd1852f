//! `plan --optimize` and `trials.design: optimize`: starts per arm n and trials per start k
//! at the least GPU time (docs/statistics-method.md, "Choosing n and k"). The components come
//! from a pilot (a result with `per_start` ≥ 2), or the spec's stated `trials.optimize`; the
//! costs from the pilot's measured starts and trials, or the stated ones.

use std::fmt::Write as _;

use anyhow::Result;
use servebench_result::{RunResult, TrialStatus};
use servebench_spec::types::{OptimizeDesign, TrialDesign};
use servebench_spec::{Spec, SpecFile};
use servebench_stats::nested::allocation::{
    Costs, Design, Target, Variances, design_with, optimal_k, optimize,
};
use servebench_stats::nested::components;
use servebench_stats::nested::simulate::{Plan, Truth, sequential_looks, tally};

/// Seeds of the sequential design's predicted cost.
const SEQUENTIAL_RUNS: u64 = 2000;

/// The inputs of the choice, and where they came from.
#[derive(Debug, Clone)]
pub(crate) struct Inputs {
    pub stated: OptimizeDesign,
    pub from: String,
}

/// The components measured in `result` for `metric` (log scale): the pooled within-start
/// variance `Σ SSW / Σ (N − n)` and the between-start ANOVA estimate averaged over the cells
/// (floored at 0), weighted by their n − 1. An error in words when no start has two trials.
pub(crate) fn pilot_variances(result: &RunResult, metric: &str) -> Result<Variances, String> {
    let (mut ssw, mut dfw, mut vb, mut dfb) = (0.0, 0.0, 0.0, 0.0);
    for v in &result.spec.spec.variants {
        for p in 0..result.points.len() {
            let mut starts: Vec<(u32, Vec<f64>)> = Vec::new();
            for t in result
                .trials
                .iter()
                .filter(|t| t.variant == v.name && t.point == p && t.status == TrialStatus::Ok)
            {
                let Some(y) = t.summary.as_ref().and_then(|s| s.metric(metric)) else {
                    continue;
                };
                if !(y > 0.0 && y.is_finite()) {
                    continue;
                }
                match starts.iter_mut().find(|(k, _)| *k == t.trial) {
                    Some((_, ys)) => ys.push(y.ln()),
                    None => starts.push((t.trial, vec![y.ln()])),
                }
            }
            let groups: Vec<Vec<f64>> = starts.into_iter().map(|(_, ys)| ys).collect();
            let Ok(c) = components(&groups) else { continue };
            let (Some(w), Some(b)) = (c.ms_within, c.between_clamped()) else {
                continue;
            };
            let df_w = (c.trials - c.starts) as f64;
            ssw += w * df_w;
            dfw += df_w;
            vb += b * (c.starts - 1) as f64;
            dfb += (c.starts - 1) as f64;
        }
    }
    if dfw == 0.0 || dfb == 0.0 {
        return Err(format!(
            "{} has one trial per server start: the between-start and within-start variances \
             cannot be told apart (their sum is all one start's trial shows). Run a pilot with \
             `trials.per_start: 2` or more and at least 3 starts per variant, e.g. `servebench \
             run SPEC --set trials.per_start=3 --set trials.count=4`, then `plan --optimize \
             --from` its result",
            result.run_id
        ));
    }
    Ok(Variances {
        between: vb / dfb,
        within: ssw / dfw,
    })
}

/// The stated values from a pilot result: its components and its measured costs.
pub(crate) fn inputs_from_result(
    result: &RunResult,
    metric: &str,
    path: &str,
) -> Result<Inputs, String> {
    let v = pilot_variances(result, metric)?;
    let (start_s, trial_s) = servebench_result::costs::mean_start_and_repeat(result)
        .ok_or_else(|| format!("{path} has no server start with a measured trial"))?;
    Ok(Inputs {
        stated: OptimizeDesign {
            sd_between: v.between.sqrt(),
            sd_within: v.within.sqrt(),
            start_seconds: start_s,
            trial_seconds: trial_s.max(1e-3),
            theta: None,
            power: 0.8,
            max_per_start: 10,
        },
        from: format!("{path} (metric {metric})"),
    })
}

fn target(spec: &SpecFile, o: &OptimizeDesign) -> Target {
    let s = &spec.spec;
    let first = s.compare.metrics.first();
    let theta = o.theta.unwrap_or_else(|| {
        first
            .and_then(|m| s.compare.thresholds.get(m).copied())
            .unwrap_or(s.compare.threshold)
    });
    Target {
        theta,
        alpha: s.compare.alpha,
        power: o.power,
    }
}

fn parts(o: &OptimizeDesign) -> (Variances, Costs) {
    (
        Variances {
            between: o.sd_between * o.sd_between,
            within: o.sd_within * o.sd_within,
        },
        Costs {
            start_s: o.start_seconds,
            trial_s: o.trial_seconds,
        },
    )
}

/// The optimized design of `o` for `spec`.
pub(crate) fn choose(spec: &SpecFile, o: &OptimizeDesign) -> Result<Design, String> {
    let (v, c) = parts(o);
    optimize(v, c, target(spec, o), o.max_per_start).map_err(|e| e.to_string())
}

/// With `design: optimize`, the spec with `count` and `per_start` set to the chosen design
/// (through the same overrides `--set` applies, so it is validated); otherwise as it is.
pub(crate) fn resolve(spec: Spec, file: &str) -> Result<Option<Spec>> {
    let t = &spec.file.spec.trials;
    let (TrialDesign::Optimize, Some(o)) = (t.design, &t.optimize) else {
        return Ok(Some(spec));
    };
    let d = choose(&spec.file, o).map_err(|e| anyhow::anyhow!("trials.optimize: {e}"))?;
    if d.starts_per_arm == u64::from(t.count) && d.per_start == t.per_start {
        return Ok(Some(spec));
    }
    let set = [
        format!("trials.count={}", d.starts_per_arm),
        format!("trials.per_start={}", d.per_start),
    ];
    let overrides = set
        .iter()
        .map(|s| servebench_spec::overrides::Override::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    super::apply_overrides(spec, &overrides, file)
}

/// The three designs side by side (module docs).
pub(crate) fn report(spec: &SpecFile, inputs: &Inputs) -> Result<String, String> {
    let o = &inputs.stated;
    let (v, c) = parts(o);
    let tg = target(spec, o);
    let err = |e: servebench_stats::StatsError| e.to_string();
    let best = optimize(v, c, tg, o.max_per_start).map_err(err)?;
    let one = design_with(v, c, tg, 1).map_err(err)?;
    let first = one.starts_per_arm.clamp(3, 5);
    let max = (2 * one.starts_per_arm).max(first + 1);
    let looks = sequential_looks(tg.alpha, first, max).map_err(err)?;
    let seq = tally(
        &Plan::Sequential { first, k: 1, looks },
        Truth {
            variances: v,
            ratio: 1.0 + tg.theta,
        },
        c,
        tg.alpha,
        1,
        SEQUENTIAL_RUNS,
    );
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\noptimized design (trials.design: optimize), from {}:",
        inputs.from
    );
    let _ = writeln!(
        out,
        "  σ_between {:.4}, σ_within {:.4} (log scale); a start costs S = {:.1} s before its \
         first trial, one trial of every point T = {:.1} s",
        o.sd_between, o.sd_within, o.start_seconds, o.trial_seconds
    );
    let _ = writeln!(
        out,
        "  target: detect θ = {:.1}% at α = {} with power {}; k* = √(S·σ²_within/(T·σ²_between)) \
         = {:.2}, bounded by {} and costed at every k",
        100.0 * tg.theta,
        tg.alpha,
        tg.power,
        optimal_k(v, c),
        o.max_per_start
    );
    let _ = writeln!(
        out,
        "  {:<34} {:>14} {:>16} {:>14}",
        "design", "starts per arm", "trials per start", "GPU-seconds"
    );
    let row = |name: &str, n: String, k: String, s: f64| {
        format!("  {name:<34} {n:>14} {k:>16} {s:>14.0}\n")
    };
    out += &row(
        "optimized",
        best.starts_per_arm.to_string(),
        best.per_start.to_string(),
        best.seconds,
    );
    out += &row(
        "one trial per start",
        one.starts_per_arm.to_string(),
        "1".into(),
        one.seconds,
    );
    out += &row(
        &format!("sequential (first {first}, at most {max})"),
        format!("{:.1} (mean)", seq.starts as f64 / seq.runs as f64),
        "1".into(),
        seq.mean_seconds(),
    );
    let _ = writeln!(
        out,
        "  (two arms; the sequential row is the mean of {SEQUENTIAL_RUNS} seeded simulations at a \
         true ratio of 1 + θ, stopping when the repeated interval excludes 0 — it detected in \
         {:.0}% of them)",
        100.0 * seq.detection()
    );
    let _ = writeln!(
        out,
        "  to run it, put in the spec's `trials:`\n    design: optimize\n    optimize: {{sd_between: \
         {:.4}, sd_within: {:.4}, start_seconds: {:.1}, trial_seconds: {:.1}, max_per_start: {}}}",
        o.sd_between, o.sd_within, o.start_seconds, o.trial_seconds, o.max_per_start
    );
    Ok(out)
}
