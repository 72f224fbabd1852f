//! The findings of a history in words, shared by the text output, the gate, the report and
//! the stale-baseline evidence: shifts with their intervals, change points, ages.

use servebench_compare::text::{num, p_value, signed_pct};
use servebench_stats::Estimate;
use servebench_stats::changepoint::{Rule, Status};
use servebench_stats::verdict::Scale;

use crate::model::{Cell, ChangeReport, Effect, RunRef};

/// An age in the largest whole unit: `21 days`, `3 hours`, `12 minutes`, `just now`.
pub fn age(days: f64) -> String {
    let plural = |n: f64, unit: &str| {
        let n = n.floor() as i64;
        format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
    };
    if days >= 2.0 {
        plural(days, "day")
    } else if days * 24.0 >= 1.0 {
        plural(days * 24.0, "hour")
    } else if days * 1440.0 >= 1.0 {
        plural(days * 1440.0, "minute")
    } else {
        "just now".into()
    }
}

/// A shift on `scale`: `+8.0% [+5.0%, +11.0%]` (ratio) or `+1.50 [0.50, 2.50] ms`.
pub fn shift(scale: Scale, e: &Estimate, unit: &str) -> String {
    match scale {
        Scale::Log => format!(
            "{} [{}, {}]",
            signed_pct(e.point - 1.0),
            signed_pct(e.ci.lower - 1.0),
            signed_pct(e.ci.upper - 1.0)
        ),
        Scale::Arithmetic => {
            let sign = if e.point >= 0.0 { "+" } else { "" };
            format!(
                "{sign}{} [{}, {}] {unit}",
                num(e.point),
                num(e.ci.lower),
                num(e.ci.upper)
            )
        }
    }
}

/// An outlier's distance from its level: `−23.4%` or `+12.0 ms`.
pub fn outlier_shift(scale: Scale, shift: f64, unit: &str) -> String {
    match scale {
        Scale::Log => signed_pct(shift - 1.0),
        Scale::Arithmetic => format!(
            "{}{} {unit}",
            if shift >= 0.0 { "+" } else { "" },
            num(shift)
        ),
    }
}

/// A run as `run 16 (20261130T171845Z-1a2b, 2026-11-30 17:18)`, numbered across the spec.
pub fn run(r: &RunRef) -> String {
    let when: String = r
        .created_at
        .chars()
        .take(16)
        .collect::<String>()
        .replace('T', " ");
    format!("run {} ({}, {when})", r.number, r.run_id)
}

/// `better`, `worse` or `moved`.
pub fn effect(e: Effect) -> &'static str {
    match e {
        Effect::Better => "better",
        Effect::Worse => "worse",
        Effect::Moved => "moved",
    }
}

/// How a change point was established, in words.
pub fn how(cp: &ChangeReport) -> String {
    match (cp.status, cp.rule) {
        (Status::Unconfirmed, _) => {
            "unconfirmed: only the newest run is off; the next run tells a step from an outlier"
                .into()
        }
        (_, Rule::Segmentation) => format!(
            "confirmed by segmentation (t-test between the levels p {}; {} runs before, {} after)",
            p_value(cp.p_value),
            cp.runs_before,
            cp.runs_after
        ),
        (_, Rule::Persistence) => format!(
            "confirmed: the newest {} runs are all off on one side (persistence rule)",
            cp.runs_after
        ),
        (_, Rule::Newest) => "newest run".into(),
    }
}

/// One change point in a sentence.
pub fn change(c: &Cell, cp: &ChangeReport) -> String {
    let kind = if cp.status == Status::Confirmed {
        "step"
    } else {
        "change"
    };
    format!(
        "{kind} {} ({}) from {} on: {}{}",
        shift(c.scale, &cp.shift, &c.unit),
        effect(cp.effect),
        run(&cp.first_run_after),
        how(cp),
        if cp.new {
            "; new since the reference run"
        } else {
            ""
        }
    )
}

/// `output_throughput at c=16 of `base``.
pub fn cell_name(c: &Cell) -> String {
    format!("{} at {} of `{}`", c.metric, c.label, c.variant)
}

fn runs(n: usize) -> String {
    match n {
        1 => "one later baseline run is".into(),
        2 => "two later baseline runs are".into(),
        n => format!("{n} later baseline runs are"),
    }
}

/// The baseline variant's state in one sentence (module docs of `analyze`).
pub fn baseline_message(
    c: &Cell,
    latest: &RunRef,
    age_days: f64,
    since: &RunRef,
    moved: Option<&ChangeReport>,
) -> String {
    let when = match age(age_days).as_str() {
        "just now" => "just now".to_owned(),
        a => format!("{a} ago"),
    };
    let head = format!(
        "{} {}: baseline from {when} ({})",
        c.metric,
        c.label,
        run(latest)
    );
    match moved {
        Some(cp) if cp.status == Status::Confirmed => format!(
            "{head}; {} {} ({}): re-baseline",
            runs(cp.runs_after),
            shift(c.scale, &cp.shift, &c.unit),
            effect(cp.effect)
        ),
        Some(cp) => format!(
            "{head}; the newest baseline run is {} ({}): unconfirmed, the next run tells a \
             step from an outlier",
            shift(c.scale, &cp.shift, &c.unit),
            effect(cp.effect)
        ),
        None => format!("{head}; the level has held since run {}", since.number),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_use_the_largest_whole_unit() {
        assert_eq!(age(21.4), "21 days");
        assert_eq!(age(1.5), "36 hours");
        assert_eq!(age(1.0 / 24.0), "1 hour");
        assert_eq!(age(0.01), "14 minutes");
        assert_eq!(age(0.0), "just now");
    }
}
