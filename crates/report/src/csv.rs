//! `trials.csv`: one row per trial and sweep point — run id, variant, trial, point label,
//! concurrency, status, failure and the main metrics (with the share of token events that
//! arrived in one read beside ITL) — for spreadsheets and pandas.
//! Quoting by RFC 4180; empty cells where a value is absent.

use super::Exporter;
use super::error::ReportError;
use super::model::Report;

/// The trials table.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrialsCsv;

/// The metric columns, by catalogue name (their units are in `docs/metrics.md`: tok/s, req/s,
/// ms, a fraction, requests).
pub const METRICS: [&str; 15] = [
    "output_throughput",
    "total_throughput",
    "request_throughput",
    "ttft_mean",
    "ttft_p50",
    "ttft_p99",
    "tpot_mean",
    "tpot_p50",
    "tpot_p99",
    "itl_p50",
    "itl_p99",
    "e2e_mean",
    "e2e_p50",
    "e2e_p99",
    "error_rate",
];

/// Where `itl_batched_share` goes in a row of `len` cells (before it is inserted): right
/// after `itl_p99`, so the share of token events that arrived in one read with another
/// (docs/metrics.md, "ITL and batched events") stands beside the ITL it explains.
fn batched_column(len: usize) -> usize {
    let after = METRICS
        .iter()
        .position(|m| *m == "itl_p99")
        .map_or(METRICS.len(), |i| i + 1);
    len - METRICS.len() + after
}

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

impl Exporter for TrialsCsv {
    fn file_name(&self) -> String {
        "trials.csv".into()
    }

    fn export(&self, report: &Report) -> Result<String, ReportError> {
        let mut head: Vec<String> = [
            "run_id",
            "variant",
            "role",
            "trial",
            "seq",
            "block",
            "point",
            "point_label",
            "max_concurrency",
            "status",
            "failure",
            "started_at",
            "requests",
            "completed",
            "failed_requests",
            "duration_s",
            "peak_concurrency",
        ]
        .map(String::from)
        .to_vec();
        head.extend(METRICS.iter().map(|m| (*m).to_owned()));
        head.insert(batched_column(head.len()), "itl_batched_share".into());
        let mut out = head.join(",");
        out.push('\n');
        for arm in &report.arms {
            let r = report.result(arm);
            for tr in r.trials.iter().filter(|t| t.variant == arm.variant) {
                let point = r.points.get(tr.point);
                let s = tr.summary.as_ref();
                let mut row = vec![
                    r.run_id.clone(),
                    tr.variant.clone(),
                    format!("{:?}", arm.role).to_lowercase(),
                    tr.trial.to_string(),
                    tr.seq.to_string(),
                    tr.block.to_string(),
                    tr.point.to_string(),
                    opt(point.map(|p| p.label.clone())),
                    opt(point.and_then(|p| p.max_concurrency)),
                    format!("{:?}", tr.status).to_lowercase(),
                    tr.failure.clone().unwrap_or_default(),
                    tr.started_at.clone(),
                    opt(s.map(|s| s.all.requests)),
                    opt(s.map(|s| s.all.completed)),
                    opt(s.map(|s| s.all.failed)),
                    opt(s.and_then(|s| s.all.duration_s)),
                    opt(s.map(|s| s.all.peak_concurrency)),
                ];
                row.extend(METRICS.iter().map(|m| opt(s.and_then(|s| s.metric(m)))));
                row.insert(
                    batched_column(row.len()),
                    opt(s.and_then(|s| s.batched_event_share)),
                );
                let row: Vec<String> = row.iter().map(|f| field(f)).collect();
                out.push_str(&row.join(","));
                out.push('\n');
            }
        }
        Ok(out)
    }
}
