//! TGI's Prometheus series in the simulator, as read in
//! TGI db931fcf, `router/src/server.rs:1974-2070`, `backends/v3/src/backend.rs`,
//! `queue.rs`: always at `/metrics`, no labels: `tgi_batch_current_size`,
//! `tgi_queue_size`, `tgi_batch_current_max_tokens`.

use crate::dialect::Snapshot;
use crate::dialect::metrics::text;

/// TGI's series.
pub(super) fn tgi(s: &Snapshot) -> String {
    text(|f| {
        let gauges = [
            ("tgi_batch_current_size", "Current batch size", s.running),
            ("tgi_queue_size", "Current queue size", s.waiting),
            (
                "tgi_batch_current_max_tokens",
                "Maximum tokens for the current batch",
                s.kv_used_tokens,
            ),
        ];
        for (name, help, v) in gauges {
            f.head(name, help, "gauge");
            f.sample(name, "", &v.to_string());
        }
    })
}
