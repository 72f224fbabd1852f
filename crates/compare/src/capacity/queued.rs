//! Whether an engine's own cap on running requests, not the searched load, decided a
//! variant's capacity: its server's metrics (`spec.telemetry`, scraped by default where the
//! engine profile names an endpoint) show requests waiting inside the engine during the
//! search's trials. Widening `search.lower..upper` cannot help then; raising the engine's
//! cap can, and the advice says so (docs/search.md).

use servebench_result::RunResult;

/// The most requests the engine ran at once and the most it held waiting, over `variant`'s
/// trials of the blocks `blocks` (by index), when some trial's scrapes saw one waiting.
pub(super) fn engine_queued(
    result: &RunResult,
    variant: &str,
    blocks: &[usize],
) -> Option<(f64, f64)> {
    let mut running: f64 = 0.0;
    let mut waiting: f64 = 0.0;
    for t in result
        .trials
        .iter()
        .filter(|t| t.variant == variant && blocks.contains(&t.block))
    {
        let Some(s) = t
            .summary
            .as_ref()
            .and_then(|s| s.telemetry.as_ref())
            .and_then(|t| t.server.as_ref())
        else {
            continue;
        };
        if let Some(r) = &s.running {
            running = running.max(r.max);
        }
        if let Some(w) = &s.waiting {
            waiting = waiting.max(w.max);
        }
    }
    (waiting >= 1.0).then_some((running, waiting))
}

/// The advice for a capacity at or below the searched range when the engine queued: its
/// cap, not the range, is what to change.
pub(super) fn advice(running: f64, waiting: f64) -> String {
    format!(
        "the engine queued requests inside it (it ran at most {running:.0} at once and held up \
         to {waiting:.0} waiting): its own cap on running requests limits this capacity, so \
         widening `search.lower`..`upper` would not help — raise the engine's cap (e.g. \
         `--max-num-seqs`, llama.cpp's `--parallel`) or search below it"
    )
}
