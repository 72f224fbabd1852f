//! A result as tables for dataframes (`servebench export`): one row per trial, or one row per
//! request of the sidecar, as CSV (RFC 4180 quoting, a header row, an empty cell where a value
//! is absent, numbers in Rust's shortest round-trip form). The
//! columns are documented in docs/export.md; pandas reads both with `pd.read_csv`.
//!
//! Trials carry every metric of the catalogue ([`servebench_spec::metrics::catalogue`]) under
//! its name, over all measured requests of the trial (the values `compare` uses). Requests
//! carry the per-request metrics as [`crate::metrics::derive()`] defines them, so a dataframe's
//! `ttft_ms.quantile(0.99)` of a trial's requests is the trial's `ttft_p99` up to the
//! histogram's rounding.

use crate::metrics::{derive, itl_gaps};
use crate::{RequestLine, RunResult, TrialStatus};

/// The leading columns of [`trials_csv`], before the catalogue's metrics.
pub const TRIAL_COLUMNS: [&str; 20] = [
    "run_id",
    "spec_name",
    "variant",
    "trial",
    "seq",
    "block",
    "point",
    "point_label",
    "max_concurrency",
    "request_rate",
    "input_tokens",
    "output_tokens",
    "status",
    "failure",
    "started_at",
    "ended_at",
    "requests",
    "completed",
    "failed_requests",
    "duration_s",
];

/// The columns of [`requests_csv`].
pub const REQUEST_COLUMNS: [&str; 27] = [
    "run_id",
    "variant",
    "trial",
    "seq",
    "point",
    "point_label",
    "warmup",
    "index",
    "prompt_index",
    "conversation",
    "turn",
    "error",
    "flags",
    "intended_ms",
    "queue_ms",
    "ttft_ms",
    "tpot_ms",
    "itl_mean_ms",
    "e2e_ms",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "token_events",
    "max_tokens",
    "output_target",
    "finish_reason",
    "server_ttft_ms",
];

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn push_row(out: &mut String, cells: &[String]) {
    let row: Vec<String> = cells.iter().map(|c| field(c)).collect();
    out.push_str(&row.join(","));
    out.push('\n');
}

/// Every catalogue metric's name, in the catalogue's order.
fn metric_columns() -> Vec<String> {
    servebench_spec::metrics::catalogue()
        .into_iter()
        .map(|m| m.name)
        .collect()
}

/// One row per trial of `result` (every variant, failed trials included with empty metrics).
pub fn trials_csv(result: &RunResult) -> String {
    let metrics = metric_columns();
    let mut head: Vec<String> = TRIAL_COLUMNS.iter().map(|c| (*c).to_owned()).collect();
    head.extend(metrics.iter().cloned());
    let mut out = String::new();
    push_row(&mut out, &head);
    for t in &result.trials {
        let p = result.points.get(t.point);
        let s = t.summary.as_ref();
        let mut row = vec![
            result.run_id.clone(),
            result.spec_name.clone(),
            t.variant.clone(),
            t.trial.to_string(),
            t.seq.to_string(),
            t.block.to_string(),
            t.point.to_string(),
            opt(p.map(|p| p.label.clone())),
            opt(p.and_then(|p| p.max_concurrency)),
            opt(p.and_then(|p| p.request_rate)),
            opt(p.and_then(|p| p.input_tokens)),
            opt(p.and_then(|p| p.output_tokens)),
            match t.status {
                TrialStatus::Ok => "ok".into(),
                TrialStatus::Failed => "failed".into(),
            },
            t.failure.clone().unwrap_or_default(),
            t.started_at.clone(),
            t.ended_at.clone(),
            opt(s.map(|s| s.all.requests)),
            opt(s.map(|s| s.all.completed)),
            opt(s.map(|s| s.all.failed)),
            opt(s.and_then(|s| s.all.duration_s)),
        ];
        row.extend(metrics.iter().map(|m| opt(s.and_then(|s| s.metric(m)))));
        push_row(&mut out, &row);
    }
    out
}

/// One row per request line of `result`'s sidecar (`lines`, as [`crate::read_requests`]
/// reads them; warm-up requests included, marked by `warmup`).
pub fn requests_csv(result: &RunResult, lines: &[RequestLine]) -> String {
    let mut out = String::new();
    let head: Vec<String> = REQUEST_COLUMNS.iter().map(|c| (*c).to_owned()).collect();
    push_row(&mut out, &head);
    for l in lines {
        let r = &l.record;
        let m = derive(r);
        let (mut sum, mut n) = (0.0, 0usize);
        for (gap, _) in itl_gaps(r, &m) {
            sum += gap;
            n += 1;
        }
        let flags: Vec<String> = l.flags.iter().map(ToString::to_string).collect();
        let row = vec![
            result.run_id.clone(),
            l.variant.clone(),
            l.trial.to_string(),
            l.seq.to_string(),
            l.point.to_string(),
            opt(result.points.get(l.point).map(|p| p.label.clone())),
            l.warmup.to_string(),
            r.index.to_string(),
            r.prompt_index.to_string(),
            opt(r.turn.map(|t| t.conversation)),
            opt(r.turn.map(|t| t.turn)),
            opt(m.failure),
            flags.join(";"),
            (r.intended_ns as f64 / 1e6).to_string(),
            opt(m.queue_ms),
            opt(m.ttft_ms),
            opt(m.tpot_ms),
            opt((n > 0).then(|| sum / n as f64)),
            opt(m.e2e_ms),
            opt(m.n_in),
            opt(r
                .usage
                .and_then(|u| u.prompt_tokens_details)
                .and_then(|d| d.cached_tokens)),
            opt(m.n_out),
            r.events.len().to_string(),
            r.max_tokens.to_string(),
            opt(r.output_target),
            r.finish_reason.clone().unwrap_or_default(),
            opt(m.server_ttft_ms),
        ];
        push_row(&mut out, &row);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn fields_are_quoted_by_rfc_4180() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
    }
}
