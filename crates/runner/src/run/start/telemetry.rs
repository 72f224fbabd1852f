//! The telemetry of a trial (`spec.telemetry`, docs/gpu.md): the GPU samples and the
//! server's metrics captured while it runs, summarised into the trial's summary (the decode
//! ceiling, the load held) and appended to the telemetry sidecar, its record.

use servebench_result::telemetry::TrialTelemetry;
use servebench_spec::plan::PlannedTrial;

use super::super::recorder::Recorder;
use super::{StartContext, Step};
use crate::loadgen::{LoadConfig, Target, TrialOutcome};
use crate::telemetry::Capture;

impl StartContext<'_> {
    /// Begins the capture of trial `t`'s telemetry, where the spec asks for it.
    pub(super) fn telemetry_begin(&self, t: &PlannedTrial, target: &Target) -> Option<Capture> {
        let metrics = self.block_plan.as_ref().and_then(|p| p.metrics.clone());
        let auth = (target.api_key.clone(), target.headers.clone());
        self.telemetry
            .as_ref()
            .and_then(|tel| tel.begin(&t.variant, &target.base_url, metrics, auth))
    }

    /// Ends the capture: the trial's summary gains what it says, and its record goes to the
    /// telemetry sidecar (a witness of the trial, not its data: a failed write is warned of,
    /// and the trial kept). The record.
    pub(super) async fn telemetry_end(
        &self,
        capture: Option<Capture>,
        step: &Step,
        cfg: &LoadConfig,
        o: &mut TrialOutcome,
        rec: &Recorder<'_>,
    ) -> Option<TrialTelemetry> {
        let tel = self.telemetry.as_ref()?;
        let t = &step.trial;
        let line = match capture {
            Some(c) => {
                let start = (o.started_at.unix_timestamp_nanos() / 1_000_000) as i64;
                let mut line = tel.finish(c, start).await;
                line.seq = t.seq;
                line.variant.clone_from(&t.variant);
                line.trial = t.trial;
                line.point = t.point;
                Some(line)
            }
            None => None,
        };
        let closed = step.point.request_rate == servebench_spec::Rate::Inf;
        let limit = cfg.max_concurrency.filter(|_| closed);
        tel.summarise(line.as_ref(), &o.records, &mut o.summary, limit);
        if let Some(line) = &line
            && let Err(e) = rec.store().append_telemetry(line)
        {
            eprintln!("servebench: warning: the trial's telemetry was not saved: {e}");
        }
        line
    }
}
