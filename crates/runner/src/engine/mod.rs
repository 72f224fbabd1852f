//! The engine behind a target: told apart from what it answers (`target.engine: auto`) or
//! named by the spec, its profile (servebench_engines) used for everything
//! engine-specific, and the guarantees a spec relies on checked — all of them by `servebench
//! probe` ([`probe`]), the ones that send no generation request at each block's start
//! ([`block_checks`]).

mod checks;
mod detect;
pub mod limits;
pub mod probe;

use std::path::PathBuf;

pub use checks::{BlockPlan, auto_model, block_checks, model_check};
pub use detect::{Resolved, Unreachable, resolve};

/// Where and how a target is reached: what requests send.
#[derive(Clone)]
pub struct Endpoint {
    /// `http://host:port` (no trailing slash).
    pub base_url: String,
    /// A CA trusted besides the system's roots for `https://`.
    pub ca_file: Option<PathBuf>,
    /// Sent as `Authorization: Bearer …`; never printed.
    pub api_key: Option<String>,
    /// `target.headers`, resolved; values never printed.
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("ca_file", &self.ca_file)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// The endpoint of a load generator's target.
    pub fn of(target: &crate::loadgen::Target) -> Self {
        Endpoint {
            base_url: target.base_url.trim_end_matches('/').to_owned(),
            ca_file: target.ca_file.clone(),
            api_key: target.api_key.clone(),
            headers: target.headers.clone(),
        }
    }

    /// As the server module's probes take it.
    pub(crate) fn reach(&self) -> crate::server::Reach<'_> {
        crate::server::Reach {
            base_url: &self.base_url,
            ca_file: self.ca_file.as_deref(),
            api_key: self.api_key.as_deref(),
            headers: &self.headers,
        }
    }
}
