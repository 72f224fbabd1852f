//! Measuring one trial of a start: its prompts (announced when there are many), the check
//! against the longest request the server takes, the load with its telemetry
//! (`telemetry.rs`) and host load, and the trial's record.

use servebench_spec::plan::{Block, PlannedTrial, SweepPoint};

use super::super::progress::Progress;
use super::super::recorder::Recorder;
use super::super::workload::{PromptSource, load_config, schedule_seed};
use super::{Start, StartContext, Step, failed, unmeasured, wait_cancel};
use crate::dataset::TrialPrompts;
use crate::loadgen::{LoadConfig, TrialOutcome, run_trial};
use servebench_result::rfc3339;
use servebench_result::{RequestLine, TrialResult, TrialStatus};

/// Prompt counts from which their preparation is announced.
const PREPARE_NOTICE: usize = 1000;

/// A trial's prompts, once prepared.
enum Prepared {
    /// Ready to send.
    Ready(TrialPrompts),
    /// Not sent, and why (longer than the server takes, or the prompts could not be made).
    Refused(String),
    /// Interrupted.
    Cancelled,
}

impl StartContext<'_> {
    /// Measure `step` on `start`'s server; `None` when interrupted (then nothing is
    /// recorded).
    pub(super) async fn measure(
        &self,
        step: &Step,
        start: &Start<'_>,
        source: &mut PromptSource,
        rec: &Recorder<'_>,
    ) -> Option<(TrialResult, Vec<RequestLine>)> {
        let (t, target) = (&step.trial, &start.target);
        let mut cfg = load_config(
            self.spec,
            &step.point,
            schedule_seed(t.prompt_seed),
            &self.body_plan(),
        );
        // `request_body`: measured and warm-up requests carry the variant's merged body.
        cfg.extra_body = self.spec.request_body(&t.variant);
        // The engine's profile reads the answers (its finish words, a stream it cuts).
        cfg.engine = self.block_plan.as_ref().map(|p| p.profile);
        let prompts = match self.prepare(step, &cfg, source, rec).await {
            Prepared::Ready(p) => p,
            Prepared::Refused(why) => return Some((failed(t, start.block, &why), Vec::new())),
            Prepared::Cancelled => return None,
        };
        let capture = self.telemetry_begin(t, target);
        let sampler = crate::hostprobe::load::Sampler::begin(self.server_pgid);
        let outcome = tokio::select! {
            r = run_trial(target, &cfg, &prompts) => r,
            _ = wait_cancel(self) => return None,
            _ = Progress::live_throughput(rec.reporter().trial_bar()) => return None,
        };
        let host_load = sampler.and_then(|s| s.finish());
        Some(match outcome {
            Err(e) => (
                failed(t, start.block, &format!("load generator: {e}")),
                Vec::new(),
            ),
            Ok(mut o) => {
                self.telemetry_end(capture, step, &cfg, &mut o, rec).await;
                record(t, start.block, o, host_load)
            }
        })
    }

    /// The trial's prompts (announced when there are many), checked against the longest
    /// request the server takes — before they are built where their lengths are known.
    async fn prepare(
        &self,
        step: &Step,
        cfg: &LoadConfig,
        source: &mut PromptSource,
        rec: &Recorder<'_>,
    ) -> Prepared {
        let (t, point) = (&step.trial, &step.point);
        // Preparing thousands of exact-length prompts takes a while: say so (not with -q).
        let say = |msg: String| rec.reporter().line(&msg);
        let count = cfg.requests + self.spec.spec.workload.warmup_requests as usize;
        if count >= PREPARE_NOTICE {
            say(format!("preparing {count} prompts …"));
        }
        // Requests whose planned lengths exceed what the server takes are refused before their
        // prompts are built (they can be millions of tokens): nothing built, nothing sent.
        if let Some(limit) = &self.limit
            && let Some(lengths) = planned_lengths(self.spec, point, source, count, limit.tokens)
            && let Err(why) = crate::server::check_planned(lengths.into_iter().map(Some), limit)
        {
            return Prepared::Refused(why);
        }
        let preparing = std::time::Instant::now();
        let prompts = tokio::select! {
            p = source.trial_prompts(self.spec, step.prompts.0, step.prompts.1, cfg.requests) => p,
            _ = wait_cancel(self) => return Prepared::Cancelled,
        };
        let took = preparing.elapsed().as_secs_f64();
        if count >= PREPARE_NOTICE || took >= 1.0 {
            say(format!(
                "prepared {count} prompts in {took:.2} s ({:.0} µs a prompt)",
                took * 1e6 / count.max(1) as f64
            ));
        }
        let mut prompts = match prompts {
            Ok(p) => p,
            Err(e) => return Prepared::Refused(format!("prompts: {e}")),
        };
        if !self.renders_as_fitted(&t.variant) {
            for p in prompts.measured.iter_mut().chain(prompts.warmup.iter_mut()) {
                p.input_tokens_exact = false;
            }
        }
        // Requests longer than the server takes would each fail: refuse the trial unsent.
        if let Some(limit) = &self.limit
            && let Err(why) = crate::server::check_lengths(&prompts, limit)
        {
            return Prepared::Refused(why);
        }
        Prepared::Ready(prompts)
    }

    /// Whether `variant` renders prompts as they were fitted. Prompts are fitted with the
    /// workload's render fields (the same for every variant, so prompts stay paired); a
    /// variant rendering them otherwise has estimated lengths. A field the engine drops at
    /// generation and tokenize alike renders nothing (TGI's `chat_template_kwargs`): it is
    /// no difference.
    fn renders_as_fitted(&self, variant: &str) -> bool {
        let renders = |mut m: servebench_spec::request_body::BodyMap| {
            if let Some(p) = self.block_plan.as_ref().map(|p| p.profile) {
                m.retain(|k, _| p.drops_field(k).is_none());
            }
            m
        };
        renders(self.spec.render_fields(variant)) == renders(self.spec.workload_render_fields())
    }
}

/// A measured trial's record, and its requests' lines for the sidecar.
fn record(
    t: &PlannedTrial,
    block: &Block,
    o: TrialOutcome,
    host_load: Option<servebench_result::HostLoad>,
) -> (TrialResult, Vec<RequestLine>) {
    let errors = o
        .summary
        .errors
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    // The records move into the sidecar lines (no copy: a trial's records are its largest
    // allocation).
    let mut lines = Vec::with_capacity(o.records.len() + o.warmup_records.len());
    for (warmup, recs) in [(true, o.warmup_records), (false, o.records)] {
        lines.extend(recs.into_iter().map(|record| {
            RequestLine::new(t.seq, t.variant.clone(), t.trial, t.point, warmup, record)
        }));
    }
    let trial = TrialResult {
        status: TrialStatus::Ok,
        failure: None,
        started_at: rfc3339(o.started_at),
        ended_at: rfc3339(o.ended_at),
        errors,
        summary: Some(o.summary),
        receive_stamps: o.receive_stamps,
        host_load,
        ..unmeasured(t, block)
    };
    (trial, lines)
}

/// The (prompt, output) lengths of a trial's `count` requests (warm-up included), where the
/// workload fixes them exactly and the server's or the model's tokenizer counts them (prompts
/// are fitted to those lengths exactly): a trace's window, and random or shared-prefix
/// lengths that are fixed, or whose shortest request already exceeds `limit` (the longest
/// is then reported). `None` otherwise (checked once built).
fn planned_lengths(
    spec: &servebench_spec::SpecFile,
    point: &SweepPoint,
    source: &PromptSource,
    count: usize,
    limit: u64,
) -> Option<Vec<(u32, u32)>> {
    use servebench_spec::{DatasetKind, TokenCount, TokenizerSource};
    if spec.spec.target.tokenizer == TokenizerSource::None {
        return None;
    }
    let d = &spec.spec.workload.dataset;
    // The longest request, when every request is alike for the check: all the same length,
    // or even the shortest over the limit.
    let same = |input: (u32, u32), output: TokenCount| {
        let short = u64::from(input.0) + u64::from(output.min());
        let long = u64::from(input.1) + u64::from(output.max());
        (short == long || short > limit).then_some((input.1, output.max()))
    };
    let fixed = match (d.kind, source) {
        (DatasetKind::Trace, PromptSource::Trace { builder, .. }) => {
            return Some(builder.planned_lengths(spec.spec.workload.warmup_requests as usize));
        }
        (DatasetKind::Random, _) => {
            let input = point.input_tokens?;
            same((input.min(), input.max()), point.output_tokens?)?
        }
        (DatasetKind::SharedPrefix, _) => {
            let sp = d.shared_prefix.as_ref()?;
            let lo = sp
                .prefix_tokens
                .min()
                .saturating_add(sp.suffix_tokens.min());
            let hi = sp
                .prefix_tokens
                .max()
                .saturating_add(sp.suffix_tokens.max());
            same((lo, hi), point.output_tokens?)?
        }
        _ => return None,
    };
    Some(vec![fixed; count])
}
