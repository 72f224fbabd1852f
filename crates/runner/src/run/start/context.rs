//! What stays the same across a run's server starts: the spec and plan, the API key and
//! headers, the variants refused so far, the open start's engine plan and limit, the lines
//! said once, the run's telemetry.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use servebench_spec::plan::Plan;
use servebench_spec::substitute::{Context, resolve};
use servebench_spec::{Spec, SpecFile, Variant};

use super::super::{RunError, RunOptions};
use crate::dataset::TokenizerSpec;
use crate::engine::BlockPlan;

/// What stays the same across a run's server starts.
pub(in crate::run) struct StartContext<'a> {
    pub(super) spec: &'a SpecFile,
    pub(super) plan: &'a Plan,
    pub(super) opts: &'a RunOptions,
    pub(super) spec_dir: PathBuf,
    pub(super) api_key: Option<String>,
    /// `target.headers` with `${env.NAME}` resolved; never written anywhere.
    pub(super) headers: Vec<(String, String)>,
    /// Variants whose verify failed: not measured again in this run.
    pub(super) refused: BTreeMap<String, String>,
    /// The longest request the open block's server takes, when it says
    /// (`server::context_limit`): trials whose prompts exceed it are refused unsent.
    pub(super) limit: Option<crate::server::ContextLimit>,
    /// What the open block's requests carry and where its prompts are counted, by its
    /// engine's profile (`preflight`).
    pub(super) block_plan: Option<BlockPlan>,
    /// The open block's engine profile (`preflight`): how the equivalence probe asks for
    /// token ids and log-probabilities.
    pub(super) profile: Option<&'static servebench_engines::Profile>,
    /// Lines said once per run (the engine, what it cannot do).
    pub(super) said: BTreeSet<String>,
    /// GPU samples and server scrapes during trials, the decode ceiling (`spec.telemetry`,
    /// `spec.model_facts`); set up when the first block opens.
    pub(super) telemetry: Option<crate::telemetry::RunTelemetry>,
    /// The open block's local server's process group (`None`: none, or not on this host),
    /// whose CPU time the trials' host load keeps apart from other processes'.
    pub(super) server_pgid: Option<i32>,
}

impl<'a> StartContext<'a> {
    /// Check what is needed before the first block (the API key).
    pub(in crate::run) fn new(
        spec: &'a Spec,
        plan: &'a Plan,
        opts: &'a RunOptions,
        spec_dir: &Path,
    ) -> Result<Self, RunError> {
        let api_key = match &spec.file.spec.target.api_key_env {
            Some(name) => Some(std::env::var(name).map_err(|_| {
                RunError::Setup(format!(
                    "the spec reads its API key from the environment variable `{name}` (target.api_key_env), which is not set: export it and run again"
                ))
            })?),
            None => None,
        };
        let mut headers = Vec::new();
        for (name, value) in &spec.file.spec.target.headers {
            let ctx = Context {
                env: true,
                ..Context::default()
            };
            let v = resolve(value, &ctx)
                .map_err(|e| RunError::Setup(format!("target.headers.{name}: {e}")))?;
            headers.push((name.clone(), v));
        }
        Ok(Self {
            spec: &spec.file,
            plan,
            opts,
            spec_dir: spec_dir.to_owned(),
            api_key,
            headers,
            refused: BTreeMap::new(),
            limit: None,
            block_plan: None,
            profile: None,
            said: BTreeSet::new(),
            telemetry: None,
            server_pgid: None,
        })
    }

    /// The spec the run carries out.
    pub(in crate::run) fn spec(&self) -> &'a SpecFile {
        self.spec
    }

    /// The run's plan.
    pub(in crate::run) fn plan(&self) -> &'a Plan {
        self.plan
    }

    pub(in crate::run) fn variant(&self, name: &str) -> Option<&'a Variant> {
        self.spec.spec.variants.iter().find(|v| v.name == name)
    }

    /// Why `variant` is not measured again in this run (its verify failed), if it is not.
    pub(in crate::run) fn refused(&self, variant: &str) -> Option<&str> {
        self.refused.get(variant).map(String::as_str)
    }

    /// Whether no comparison is left to make: the baseline variant, or every other variant,
    /// failed verify (a run of one variant: that one). The run then stops.
    pub(in crate::run) fn nothing_left_to_compare(&self) -> bool {
        let variants = &self.spec.spec.variants;
        let refused = |v: &Variant| self.refused.contains_key(&v.name);
        if variants.len() < 2 {
            return variants.iter().any(refused);
        }
        variants.iter().any(|v| v.baseline && refused(v))
            || variants.iter().filter(|v| !v.baseline).all(refused)
    }

    /// The run's one message about its verify failures: per refused variant what the
    /// server reported, the trials never tried (`never_tried`: planned, not recorded), and
    /// whether the run stopped. `None` when every verify passed.
    pub(in crate::run) fn verify_summary(
        &self,
        stopped: bool,
        never_tried: usize,
    ) -> Option<String> {
        if self.refused.is_empty() {
            return None;
        }
        let reasons: Vec<&str> = self.refused.values().map(String::as_str).collect();
        let mut out = reasons.join("; ");
        if never_tried > 0 {
            out.push_str(&format!(
                "; {never_tried} trial(s) were never tried (not failed: `servebench run \
                 --resume` runs them)"
            ));
        }
        if stopped {
            out.push_str("; the run stopped: no comparison was left to make");
        }
        Some(out)
    }

    /// `target.tls.ca_file`, resolved against the spec's directory.
    pub(in crate::run) fn ca_file(&self) -> Option<PathBuf> {
        let tls = self.spec.spec.target.tls.as_ref()?;
        tls.ca_file.as_ref().map(|f| self.spec_dir.join(f))
    }

    /// Where the open block's prompts are counted (set by [`StartContext::open`]).
    pub(in crate::run) fn tokenizer_spec(&self) -> TokenizerSpec {
        self.block_plan
            .as_ref()
            .map_or(TokenizerSpec::None, |p| p.tokenizer.clone())
    }

    /// The open block's request fields (set by [`StartContext::open`]).
    pub(in crate::run) fn body_plan(&self) -> servebench_engines::BodyPlan {
        self.block_plan.as_ref().map_or_else(
            || {
                let w = &self.spec.spec.workload;
                servebench_engines::GENERIC.body_plan(w.ignore_eos, w.send_min_tokens)
            },
            |p| p.body.clone(),
        )
    }

    pub(in crate::run) fn cancelled(&self) -> bool {
        self.opts.cancel.load(Ordering::SeqCst)
    }
}
