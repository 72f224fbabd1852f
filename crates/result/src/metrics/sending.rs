//! How an open-loop trial kept its schedule: the scheduled and achieved send rates, and the
//! share of the scheduled rate it held.

use crate::record::RequestRecord;

/// The achieved over the scheduled send rate of an open-loop trial (`TrialSummary::
/// rate_held_fraction`): the span of intended send times over the span of actual ones, over
/// the requests sent; `None` with fewer than two sent.
pub(crate) fn rate_held_fraction(records: &[RequestRecord]) -> Option<f64> {
    let sent: Vec<(u64, u64)> = records
        .iter()
        .filter_map(|r| r.send_ns.map(|s| (r.intended_ns, s)))
        .collect();
    if sent.len() < 2 {
        return None;
    }
    let span = |f: fn(&(u64, u64)) -> u64| {
        let (lo, hi) = sent
            .iter()
            .map(f)
            .fold((u64::MAX, 0), |(lo, hi), x| (lo.min(x), hi.max(x)));
        hi.saturating_sub(lo) as f64
    };
    let (intended, actual) = (span(|p| p.0), span(|p| p.1));
    (actual > 0.0).then(|| (intended / actual).min(1.0))
}

/// Open-loop trials: (scheduled, achieved) send rates in requests/s over the requests sent
/// (`TrialSummary::scheduled_rate`); `None` with fewer than two sent or zero spans.
pub(crate) fn send_rates(records: &[RequestRecord], closed_loop: bool) -> Option<(f64, f64)> {
    if closed_loop {
        return None;
    }
    let sent: Vec<(u64, u64)> = records
        .iter()
        .filter_map(|r| r.send_ns.map(|s| (r.intended_ns, s)))
        .collect();
    let n = sent.len();
    if n < 2 {
        return None;
    }
    let span = |f: fn(&(u64, u64)) -> u64| {
        let lo = sent.iter().map(f).min().unwrap_or(0);
        let hi = sent.iter().map(f).max().unwrap_or(0);
        (hi - lo) as f64 / 1e9
    };
    let (intended, actual) = (span(|p| p.0), span(|p| p.1));
    (intended > 0.0 && actual > 0.0).then(|| ((n - 1) as f64 / intended, (n - 1) as f64 / actual))
}
