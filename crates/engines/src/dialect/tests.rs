//! What the dialects' tests share: a server's settings and address. The tests of every
//! dialect at once (their log lines, ids and metrics against their engines' profiles) are the
//! crate's (`dialects_tests.rs`), where the table of engines is.

use super::*;

pub(crate) fn config(engine: Engine) -> Served {
    let mut c = Served::default();
    c.wire.engine = engine;
    c.wire.moe_backend = Some("flashinfer_cutedsl".into());
    c.wire.tp_size = 8;
    c.model = "glm-5".into();
    c.wire.model_path = Some("lukealonso/GLM-5-NVFP4".into());
    c
}

/// A server that is ready, with nothing in flight, whose engine model says `.0`.
pub(crate) struct Ready(pub(crate) Snapshot);

impl Live for Ready {
    fn ready(&self) -> bool {
        true
    }
    fn serving(&self) -> bool {
        true
    }
    fn in_flight(&self) -> u64 {
        0
    }
    fn metrics(&self) -> Snapshot {
        self.0.clone()
    }
    fn at_last_finish(&self) -> Option<Snapshot> {
        (self.0.finished > 0).then(|| self.0.clone())
    }
    fn info(&self) -> serde_json::Value {
        serde_json::json!({})
    }
}

pub(crate) fn addr() -> std::net::SocketAddr {
    "127.0.0.1:30000".parse().unwrap_or_else(|e| panic!("{e}"))
}
