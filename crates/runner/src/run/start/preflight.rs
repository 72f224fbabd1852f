//! A block's checks before its trials: the engine behind the target (named, or detected
//! from what it answers), what its requests carry by that engine's profile, and the
//! guarantees that cost no generation request, recorded in `result.preflight`.

use servebench_result::checks::{BlockChecks, CheckOutcome, CheckRecord, Guarantee};
use servebench_spec::Variant;
use servebench_spec::plan::Block;

use super::super::recorder::{Recorder, Reporter};
use super::StartContext;
use crate::engine::{self, BlockPlan, Endpoint, Resolved};
use crate::loadgen::Target;

impl StartContext<'_> {
    /// The engine of `target` (`resolved` already for a launched server), the block's plan,
    /// its checks. A needed check that fails (the model not served, no tokenize endpoint for
    /// `tokenizer: server`) refuses the block: its reason is returned.
    pub(super) async fn preflight(
        &mut self,
        block: &Block,
        variant: &Variant,
        target: &mut Target,
        resolved: Option<Resolved>,
        rec: &mut Recorder<'_>,
    ) -> Result<(), String> {
        let ep = Endpoint::of(target);
        let resolved = match resolved {
            Some(r) => r,
            None => engine::resolve(&ep, self.spec.spec.target.engine)
                .await
                .map_err(|e| format!("the target does not answer: {e}"))?,
        };
        let chosen = self.auto_model(block, target, &resolved, rec.reporter())?;
        let w = &self.spec.spec.workload;
        let plan = BlockPlan::new(self.spec, target, &self.spec_dir, resolved.profile);
        let (mut checks, limit) =
            engine::block_checks(&ep, &resolved, &target.model, &plan, w.ignore_eos).await;
        checks.extend(chosen);
        self.limit = limit;
        let highest = block
            .trials
            .iter()
            .filter_map(|t| self.plan.points.get(t.point)?.max_concurrency)
            .max();
        let running = engine::limits::concurrency_limit(&ep, resolved.profile).await;
        let mut warnings = plan.body.warnings.clone();
        let over = engine::limits::check(resolved.profile.name, running, highest);
        if let Ok(Some(w)) = &over {
            warnings.push(w.clone());
        }
        let scraping = self
            .spec
            .spec
            .telemetry
            .as_ref()
            .is_some_and(|t| t.server_metrics != servebench_spec::ServerMetrics::Off);
        for c in checks.iter().filter(|c| {
            scraping && c.guarantee == Guarantee::Metrics && c.outcome == CheckOutcome::Fails
        }) {
            let set = c
                .set
                .as_deref()
                .map_or_else(String::new, |s| format!("; set {s}"));
            warnings.push(format!("metrics endpoint: {}{set}", c.detail));
        }
        let engine = resolved.record.describe();
        if self.said.insert(engine.clone()) {
            rec.reporter()
                .line(&format!("block {}: engine {engine}", block.index + 1));
        }
        for warning in &warnings {
            if self.said.insert(warning.clone()) {
                rec.reporter().line(&format!("warning: {warning}"));
            }
        }
        let blocking: Vec<String> = checks
            .iter()
            .filter(|c| c.is_blocking())
            .map(|c| {
                let set = c
                    .set
                    .as_deref()
                    .map_or_else(String::new, |s| format!("; set {s}"));
                format!("{}: {}{set}", c.guarantee.label(), c.detail)
            })
            .collect();
        rec.note(|r| {
            r.preflight.push(BlockChecks {
                block: block.index,
                variant: variant.name.clone(),
                engine: Some(resolved.record.clone()),
                model: Some(target.model.clone()),
                checks,
                warnings,
            });
        });
        self.block_plan = Some(plan);
        self.profile = Some(resolved.profile);
        if let Err(why) = over {
            return Err(format!("not measured: {why}"));
        }
        if blocking.is_empty() {
            Ok(())
        } else {
            Err(format!("not measured: {}", blocking.join("; ")))
        }
    }

    /// `target.model: auto`: the one model the server lists becomes the block's, said once
    /// and recorded as a check of the block; several or none refuse the block.
    fn auto_model(
        &mut self,
        block: &Block,
        target: &mut Target,
        resolved: &Resolved,
        ui: &dyn Reporter,
    ) -> Result<Option<CheckRecord>, String> {
        if self.spec.spec.target.model != servebench_spec::AUTO_MODEL {
            return Ok(None);
        }
        let model = engine::auto_model(resolved.model_list())?;
        let line = format!("target.model: auto: the server serves `{model}`, which is used");
        if self.said.insert(line.clone()) {
            ui.line(&format!("block {}: {line}", block.index + 1));
        }
        target.model.clone_from(&model);
        Ok(Some(CheckRecord::new(
            Guarantee::ModelServed,
            CheckOutcome::Holds,
            format!("target.model: auto: `{model}`, the one model /v1/models lists"),
        )))
    }
}
