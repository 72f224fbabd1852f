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

pub(crate) fn addr() -> std::net::SocketAddr {
    "127.0.0.1:30000".parse().unwrap_or_else(|e| panic!("{e}"))
}
