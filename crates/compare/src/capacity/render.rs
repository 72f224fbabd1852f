//! The capacity report as text: the question, one line per variant, one per comparison.

use servebench_spec::SearchAxis;

use crate::text::{pct, signed_pct};

use super::{CapacityOutcome, CapacityReport, load};

/// The report as text: the question, one line per variant, one per comparison.
pub fn render_capacity(r: &CapacityReport) -> String {
    let mut s = format!(
        "capacity under SLOs ({}): the highest {} at which at least {} of a trial's requests \
         meet {}\n",
        r.run_id,
        match r.axis {
            SearchAxis::RequestRate => "request rate",
            SearchAxis::MaxConcurrency => "concurrency",
        },
        pct(r.attainment),
        r.slo
    );
    s.push_str(&format!(
        "searched {}..{} {}, precision {}, {} round(s); intervals are {}% repeated confidence \
         intervals over server starts\n",
        load(r.lower_bound),
        load(r.upper_bound),
        r.unit,
        r.precision,
        r.rounds,
        load((1.0 - r.alpha) * 100.0)
    ));
    if let Some(w) = &r.stopped {
        s.push_str(&format!("stopped: {w}\n"));
    } else {
        s.push_str("the search did not finish (interrupted or failed): the numbers below are from the rounds measured\n");
    }
    s.push('\n');
    let mut rows = vec![[
        "variant".to_owned(),
        "capacity".to_owned(),
        "interval".to_owned(),
        "starts".to_owned(),
        "trials".to_owned(),
        "".to_owned(),
    ]];
    for v in &r.variants {
        let name = if v.baseline {
            format!("{} (baseline)", v.variant)
        } else {
            v.variant.clone()
        };
        let text = |x: f64| r.load_text(x);
        let (cap, ci) = match (v.estimate, v.lower, v.upper, &v.outcome) {
            (Some(e), Some(l), Some(u), CapacityOutcome::Estimated) => (
                format!("{} {}", text(e), r.unit),
                format!("[{}, {}]", text(l), text(u)),
            ),
            (_, _, _, CapacityOutcome::BelowLower { .. }) => {
                (format!("< {} {}", load(r.lower_bound), r.unit), "—".into())
            }
            (_, _, _, CapacityOutcome::AboveUpper { .. }) => {
                (format!("> {} {}", load(r.upper_bound), r.unit), "—".into())
            }
            _ => ("—".into(), "—".into()),
        };
        let extra = if v.precise {
            String::new()
        } else {
            v.note.clone()
        };
        rows.push([
            name,
            cap,
            ci,
            (v.start_estimates.len() as u64 + v.below_lower + v.above_upper + v.invalid)
                .to_string(),
            v.trials.to_string(),
            extra,
        ]);
    }
    for line in crate::text::aligned(&rows) {
        s.push_str(&line);
        s.push('\n');
    }
    for v in &r.variants {
        if !matches!(v.outcome, CapacityOutcome::Estimated) {
            s.push_str(&format!("  {}: {}\n", v.variant, v.note));
        }
    }
    for l in &r.looks {
        s.push_str(&format!("  look: {l}\n"));
    }
    if !r.comparisons.is_empty() {
        s.push('\n');
        for c in &r.comparisons {
            match (c.ratio, c.lower, c.upper) {
                (Some(x), Some(l), Some(u)) => s.push_str(&format!(
                    "  {} vs {}: capacity {} [{}, {}] — {}\n",
                    c.candidate,
                    c.baseline,
                    signed_pct(x - 1.0),
                    signed_pct(l - 1.0),
                    signed_pct(u - 1.0),
                    c.verdict
                )),
                _ => s.push_str(&format!(
                    "  {} vs {}: not compared — {}\n",
                    c.candidate,
                    c.baseline,
                    c.note.as_deref().unwrap_or("no interval")
                )),
            }
        }
    }
    s
}
