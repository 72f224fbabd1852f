//! Unit tests of the capacity report on the report crate's committed search fixture.

use super::*;

/// The report crate's committed search result (capacities 6 and 8 in flight, 4 rounds).
fn fixture() -> RunResult {
    let text = include_str!("../../../report/tests/fixtures/search.json");
    serde_json::from_str(text).expect("the search fixture parses")
}

/// Every finished start of `variant` ends bracketed at `estimates[i]`, in order.
fn set_estimates(r: &mut RunResult, variant: &str, estimates: &[f64]) {
    let log = r.search.as_mut().expect("log");
    let blocks = log.blocks.iter_mut().filter(|b| b.variant == variant);
    for (b, e) in blocks.zip(estimates) {
        b.outcome = Some(SearchOutcome::Bracketed {
            pass_load: *e,
            fail_load: e + 1.0,
            estimate: *e,
        });
    }
}

#[test]
fn identical_starts_get_the_rounding_floor_not_a_zero_width_interval() {
    let r = capacity_report(&fixture()).expect("a search");
    let base = &r.variants[0];
    assert_eq!(base.start_estimates, vec![6.0; 4]);
    let (lo, hi) = (base.lower.expect("lo"), base.upper.expect("hi"));
    // 4 starts, s² floored at 1/12: the half-width is t·√(1/48) > 0.
    assert!(lo < 6.0 && hi > 6.0 && hi - lo > 0.5, "[{lo}, {hi}]");
    assert!((hi + lo) / 2.0 - 6.0 < 1e-12);
    assert_eq!(r.comparisons[0].verdict, "improved");
}

#[test]
fn an_a_a_pair_is_not_improved_or_regressed() {
    let mut result = fixture();
    set_estimates(&mut result, "base", &[6.0, 7.0, 6.0, 7.0]);
    set_estimates(&mut result, "fast", &[7.0, 6.0, 6.0, 7.0]);
    let r = capacity_report(&result).expect("a search");
    let c = &r.comparisons[0];
    assert!((c.ratio.expect("ratio") - 1.0).abs() < 1e-12, "{c:?}");
    assert!(
        !matches!(c.verdict.as_str(), "improved" | "regressed"),
        "{c:?}"
    );
    assert!(c.lower.expect("lo") < 1.0 && c.upper.expect("hi") > 1.0);
}

#[test]
fn a_capacity_below_the_lower_bound_is_said_in_words_without_a_number() {
    let mut result = fixture();
    for b in result.search.as_mut().expect("log").blocks.iter_mut() {
        if b.variant == "base" {
            b.outcome = Some(SearchOutcome::BelowLower {
                attainment: Some(0.71),
            });
        }
    }
    let r = capacity_report(&result).expect("a search");
    let base = &r.variants[0];
    assert!(matches!(base.outcome, CapacityOutcome::BelowLower { .. }));
    assert_eq!((base.estimate, base.lower, base.upper), (None, None, None));
    assert!(
        base.note.starts_with(
            "capacity below the lower bound 1 in flight: at 1 in flight 71% of requests met \
             the SLOs (target 50%)"
        ),
        "{}",
        base.note
    );
    assert_eq!(r.comparisons[0].verdict, "not-computed");
    let look = search_look(&result, 4);
    assert!(look.variants[0].settled && !look.variants[0].precise);
}

#[test]
fn loads_print_as_the_spec_wrote_them() {
    assert_eq!(load(7.0), "7");
    assert_eq!(load(41.7), "41.7");
    assert_eq!(load(2.5), "2.5");
    assert_eq!(load(1500.0), "1500");
}

/// The issue-29 case: an early look's wide t quantile put a capacity interval below zero
/// (`12.3333 [-18.0482, 42.7149] in flight`). Every start bracketed a load inside the
/// bounds, so the interval is cut at them, and printed at the grid's precision.
#[test]
fn capacity_intervals_stay_inside_the_bounds() {
    let mut result = fixture();
    set_estimates(&mut result, "base", &[1.5, 14.5, 2.5, 13.5]);
    for round in [3, 4] {
        let look = search_look(&result, round);
        let v = &look.variants[0];
        let (lo, hi) = (v.lower.expect("lo"), v.upper.expect("hi"));
        assert!(lo >= 1.0 && hi <= 16.0, "round {round}: [{lo}, {hi}]");
        assert!(v.note.contains("in flight ["), "{}", v.note);
    }
    let r = capacity_report(&result).expect("a search");
    let base = &r.variants[0];
    assert_eq!(base.lower, Some(1.0), "{base:?}");
    assert_eq!(base.upper, Some(16.0), "{base:?}");
    let text = render_capacity(&r);
    assert!(text.contains("8.0 in flight [1.0, 16.0]"), "{text}");
    assert!(text.contains("cut at the bounds"), "{text}");
    let c = &r.comparisons[0];
    let (lo, hi) = (c.lower.expect("lo"), c.upper.expect("hi"));
    assert!(lo >= 1.0 / 16.0 && hi <= 16.0, "ratio [{lo}, {hi}]");
}

#[test]
fn attainment_that_falls_and_rises_with_the_load_is_a_look() {
    let clean = capacity_report(&fixture()).expect("a search");
    assert!(clean.looks.is_empty(), "{:?}", clean.looks);
    let mut result = fixture();
    let log = result.search.as_mut().expect("log");
    // Round 1 of `base` measured 8 (fail), 4 (pass), 6 (pass), 7 (fail): make 4 fail.
    let steps = &mut log.blocks[0].steps;
    steps[1].passed = Some(false);
    let r = capacity_report(&result).expect("a search");
    assert!(
        r.looks.iter().any(|l| l.contains(
            "`base`, round 1 (block 0): 6.0 in flight passed although 4.0 in flight failed"
        )),
        "{:?}",
        r.looks
    );
    assert!(render_capacity(&r).contains("  look: `base`, round 1"));
}

/// Issue 41, item 9: a capacity at a bound whose engine held requests waiting is not told
/// to widen the search (queueing inside the engine was the cause), and the table's count
/// of server starts is the text's.
#[test]
fn an_engine_that_queued_is_not_told_to_widen_the_search() {
    let mut result = fixture();
    let log = result.search.as_mut().expect("log");
    let mut base_blocks = Vec::new();
    for (i, b) in log
        .blocks
        .iter_mut()
        .filter(|b| b.variant == "base")
        .enumerate()
    {
        base_blocks.push(b.block);
        if i == 0 {
            b.outcome = Some(SearchOutcome::BelowLower {
                attainment: Some(0.5),
            });
        }
    }
    let plain = capacity_report(&result).expect("a search");
    let base = &plain.variants[0];
    assert!(
        base.note.contains(": widen `search.lower`"),
        "{}",
        base.note
    );
    let text = render_capacity(&plain);
    let row = text
        .lines()
        .find(|l| l.contains("base (baseline)"))
        .expect("a row");
    let starts = base.start_estimates.len() as u64 + base.below_lower + base.above_upper;
    assert!(
        base.note.contains(&format!("of {starts} server starts")),
        "{}",
        base.note
    );
    assert!(
        row.split_whitespace().any(|w| w == starts.to_string()),
        "the table says {starts} starts too: {row}"
    );
    // The engine's metrics show requests waiting inside it during the search's trials.
    for t in result
        .trials
        .iter_mut()
        .filter(|t| t.variant == "base" && base_blocks.contains(&t.block))
    {
        let s = t.summary.as_mut().expect("a summary");
        let tel = s.telemetry.get_or_insert_with(Default::default);
        let span = |v: f64| servebench_result::telemetry::Span {
            mean: v,
            min: v,
            max: v,
        };
        tel.server = Some(servebench_result::telemetry::ServerSummary {
            scrapes: 10,
            running: Some(span(4.0)),
            waiting: Some(span(3.0)),
            ..Default::default()
        });
    }
    let queued = capacity_report(&result).expect("a search");
    let note = &queued.variants[0].note;
    assert!(!note.contains(": widen `search.lower`"), "{note}");
    assert!(
        note.contains("the engine queued requests inside it (it ran at most 4 at once")
            && note.contains("would not help"),
        "{note}"
    );
}
