//! A start's first stages: its server launched and verified (`launch.rs`) or the variant's
//! endpoint resolved and its TLS checked, then the engine's checks (`preflight.rs`); the
//! run's telemetry is set up when its first start opens.

use std::collections::BTreeMap;

use servebench_spec::Variant;
use servebench_spec::plan::Block;
use servebench_spec::substitute::{Context, resolve};

use super::super::recorder::Recorder;
use super::super::workload::api_kind;
use super::{Opening, Start, StartContext};
use crate::engine::Resolved;
use crate::loadgen::Target;
use crate::server::RunningServer;
use servebench_result::RunResult;

impl<'a> StartContext<'a> {
    /// The start's first stages: its server launched and verified (when the spec launches
    /// one) or the variant's endpoint resolved, then the engine's checks (`preflight`).
    pub(super) async fn open<'b>(
        &mut self,
        block: &'b Block,
        variant: &'b Variant,
        rec: &mut Recorder<'_>,
    ) -> Result<Start<'b>, Opening> {
        self.telemetry_for(rec.result());
        let (running, resolved, base_url) = self.reach(block, variant, rec).await?;
        let mut start = Start {
            block,
            variant,
            running,
            target: Target {
                base_url: base_url.trim_end_matches('/').to_owned(),
                api: api_kind(self.spec.spec.target.api),
                model: self.spec.spec.target.model.clone(),
                api_key: self.api_key.clone(),
                headers: self.headers.clone(),
                ca_file: self.ca_file(),
            },
            profile: &servebench_engines::GENERIC,
        };
        self.block_plan = None;
        self.profile = None;
        self.limit = None;
        if let Err(reason) = self
            .preflight(block, variant, &mut start.target, resolved, rec)
            .await
        {
            rec.reporter()
                .line(&format!("block {}: {reason}", block.index + 1));
            if start.running.is_some() {
                self.close(start, rec)
                    .await
                    .map_err(|e| Opening::Failed(format!("{reason} ({e})")))?;
            }
            return Err(Opening::Failed(reason));
        }
        start.profile = self.profile.unwrap_or(&servebench_engines::GENERIC);
        Ok(start)
    }

    /// The run's telemetry, set up when its first start opens.
    fn telemetry_for(&mut self, result: &RunResult) {
        if self.telemetry.is_none() {
            let gpus = result.accelerators.iter().map(|a| a.name.clone()).collect();
            self.telemetry = Some(crate::telemetry::RunTelemetry::new(
                self.spec,
                result.model_facts,
                gpus,
                self.ca_file().as_deref(),
            ));
        }
        if self.spec.spec.server.is_none()
            && let Some(t) = &self.telemetry
        {
            // A running endpoint: the runner's own CUDA_VISIBLE_DEVICES, else every GPU.
            t.set_server_env(&BTreeMap::new());
        }
    }

    /// The server started for `block` (when the spec launches one) with its engine, or the
    /// variant's endpoint, and the base URL the trials go to.
    async fn reach(
        &mut self,
        block: &Block,
        variant: &Variant,
        rec: &mut Recorder<'_>,
    ) -> Result<(Option<RunningServer>, Option<Resolved>, String), Opening> {
        let n = block.index + 1;
        if let Some(server_spec) = &self.spec.spec.server {
            rec.reporter().line(&format!(
                "block {n}: starting server for `{}`",
                variant.name
            ));
            return match self.start_server(block, variant, server_spec, rec).await {
                // `target.base_url` resolved for this start, or http://127.0.0.1:${port}.
                Ok((s, r)) => {
                    let url = s.base_url();
                    Ok((Some(s), Some(r), url))
                }
                Err(_) if self.cancelled() => Err(Opening::Cancelled),
                Err(reason) => {
                    // A verify failure is said once, with what the server reported, at the
                    // run's end; here only that it happened.
                    if self.refused.contains_key(&variant.name) {
                        rec.reporter().line(&format!(
                            "block {n}: `{}` failed verify: its later blocks are not run",
                            variant.name
                        ));
                    } else {
                        rec.reporter().line(&format!("block {n}: {reason}"));
                    }
                    Err(Opening::Failed(reason))
                }
            };
        }
        let raw = variant
            .base_url
            .clone()
            .or_else(|| self.spec.spec.target.base_url.clone())
            .unwrap_or_default();
        let ctx = Context {
            vars: Some(&variant.vars),
            env: true,
            ..Context::default()
        };
        let url = resolve(&raw, &ctx).map_err(|e| Opening::Failed(format!("target URL: {e}")))?;
        // An https:// endpoint whose certificate does not verify fails here, before any
        // trial of the block, not as every request's connect error.
        if let Err(e) = crate::tls::check(&url, self.ca_file().as_deref()).await {
            let reason = e.to_string();
            rec.reporter().line(&format!("block {n}: {reason}"));
            return Err(Opening::Failed(reason));
        }
        Ok((None, None, url))
    }
}
