//! From the spec to the load generator's inputs: one `LoadConfig` per sweep point and the
//! prompt source of a server start.

use std::path::Path;

use servebench_spec::plan::SweepPoint;
use servebench_spec::{
    ApiKind as SpecApi, ArrivalProcess, DatasetKind, Rate, SpecFile, TokenCount, TokenizerSource,
};

use crate::dataset::{
    AnyCounter, DatasetError, FileDataset, LengthDist, RandomDataset, RandomPromptBuilder,
    TokenizerSpec, TrialPrompts, load_jsonl, load_sharegpt,
};
use crate::loadgen::schedule::offsets_within;
use crate::loadgen::{ApiKind, Arrival, LoadConfig, MinTokens, Target};
use servebench_result::metrics::Slo;

/// The load generator's API kind for the spec's.
pub fn api_kind(api: SpecApi) -> ApiKind {
    match api {
        SpecApi::OpenaiCompletions => ApiKind::Completions,
        SpecApi::OpenaiChat => ApiKind::Chat,
    }
}

/// The `LoadConfig` of one trial at `point`; `schedule_seed` seeds its arrival times.
///
/// Its request count is the point's `requests` (a trial by count), else, for a trial by
/// `workload.duration`, exactly the arrivals of its schedule due before the duration has
/// passed: the schedule is drawn here with the same seed `run_trial` draws it with, so the
/// prompts built for the trial are the ones it sends.
pub fn load_config(spec: &SpecFile, point: &SweepPoint, schedule_seed: u64) -> LoadConfig {
    let w = &spec.spec.workload;
    let mut cfg = LoadConfig::new(1);
    cfg.max_concurrency = point.max_concurrency.map(|c| c as usize);
    cfg.arrival = match point.request_rate {
        Rate::Inf => Arrival::Inf,
        Rate::PerSecond(rate) => match w.arrival {
            ArrivalProcess::Poisson => Arrival::Poisson { rate },
            ArrivalProcess::Constant => Arrival::Constant { rate },
            ArrivalProcess::Gamma => Arrival::Gamma {
                rate,
                burstiness: w.burstiness.unwrap_or(1.0),
            },
        },
    };
    cfg.seed = schedule_seed;
    cfg.requests = match (point.requests, w.duration) {
        (Some(n), _) => n as usize,
        // Validation refuses a duration at `request_rate: inf`; were one to get here, its
        // trial would be one request.
        (None, Some(d)) => offsets_within(&cfg.arrival, d.get(), cfg.seed).map_or(1, |o| o.len()),
        (None, None) => 1,
    };
    cfg.warmup_requests = w.warmup_requests as usize;
    cfg.request_timeout = w.request_timeout.get();
    cfg.trial_deadline = w.trial_timeout.map(|t| t.get());
    cfg.ignore_eos = w.ignore_eos;
    cfg.temperature = w.temperature;
    cfg.min_tokens = if w.send_min_tokens {
        MinTokens::MatchMax
    } else {
        MinTokens::Omit
    };
    cfg.slo = spec.spec.slo.as_ref().map(|s| Slo {
        ttft_ms: s.ttft.map(ms),
        tpot_ms: s.tpot.map(ms),
        e2e_ms: s.e2e.map(ms),
    });
    cfg
}

fn ms(d: servebench_spec::HumanDuration) -> f64 {
    d.get().as_secs_f64() * 1e3
}

fn length(t: Option<TokenCount>) -> Option<LengthDist> {
    t.map(|t| match t {
        TokenCount::Fixed(n) => LengthDist::Fixed { tokens: n },
        TokenCount::Range(r) => LengthDist::Uniform {
            min: r.min,
            max: r.max,
        },
    })
}

/// Builds the prompts of every trial of one server start.
#[derive(Debug)]
pub enum PromptSource {
    /// Random prompts fitted to exact lengths; one builder per sweep point's lengths.
    Random {
        builders: Vec<RandomPromptBuilder<AnyCounter>>,
    },
    /// Prompts from a file.
    File(Box<FileDataset<AnyCounter>>),
}

/// The tokenizer the spec asks for, pointed at `target`.
pub fn tokenizer(spec: &SpecFile, target: &Target, spec_dir: &Path) -> TokenizerSpec {
    match spec.spec.target.tokenizer {
        TokenizerSource::Server => TokenizerSpec::Server {
            base_url: target.base_url.clone(),
            path: "/tokenize".into(),
            model: Some(target.model.clone()),
            api_key: target.api_key.clone(),
        },
        TokenizerSource::Local => TokenizerSpec::Local {
            path: spec_dir.join(spec.spec.target.tokenizer_path.clone().unwrap_or_default()),
        },
        TokenizerSource::None => TokenizerSpec::None,
    }
}

impl PromptSource {
    /// A source for one server start.
    pub fn new(
        spec: &SpecFile,
        points: &[SweepPoint],
        tokenizer: &TokenizerSpec,
        spec_dir: &Path,
    ) -> Result<Self, DatasetError> {
        let d = &spec.spec.workload.dataset;
        let chat = spec.spec.target.api == SpecApi::OpenaiChat;
        match d.kind {
            DatasetKind::Random => {
                let mut builders = Vec::with_capacity(points.len());
                for p in points {
                    let (Some(input), Some(output)) =
                        (length(p.input_tokens), length(p.output_tokens))
                    else {
                        return Err(DatasetError::InvalidLength(
                            "a random dataset needs input and output lengths".into(),
                        ));
                    };
                    let ds = RandomDataset {
                        input_tokens: input,
                        output_tokens: output,
                        chat,
                    };
                    builders.push(RandomPromptBuilder::new(
                        ds,
                        AnyCounter::from_spec(tokenizer)?,
                    )?);
                }
                Ok(PromptSource::Random { builders })
            }
            DatasetKind::Jsonl | DatasetKind::Sharegpt => {
                let path = spec_dir.join(d.path.clone().unwrap_or_default());
                let entries = if d.kind == DatasetKind::Jsonl {
                    load_jsonl(&path)?
                } else {
                    load_sharegpt(&path)?.0
                };
                let fixed = d.output_tokens.map(|t| t.max());
                Ok(PromptSource::File(Box::new(FileDataset::new(
                    entries,
                    fixed,
                    AnyCounter::from_spec(tokenizer)?,
                )?)))
            }
        }
    }

    /// The `requests` measured prompts (the trial's `LoadConfig::requests`) and the warm-up
    /// prompts of trial `trial` at point `point`: paired across variants (same seed).
    pub async fn trial_prompts(
        &mut self,
        spec: &SpecFile,
        trial: u32,
        point: usize,
        requests: usize,
    ) -> Result<TrialPrompts, DatasetError> {
        let w = &spec.spec.workload;
        let (n, warm, seed) = (requests, w.warmup_requests as usize, w.seed);
        match self {
            PromptSource::Random { builders } => {
                let b = builders.get_mut(point).ok_or_else(|| {
                    DatasetError::InvalidLength(format!("no sweep point {point}"))
                })?;
                b.trial_prompts(n, warm, seed, trial, point as u32).await
            }
            PromptSource::File(f) => f.trial_prompts(n, warm, seed, trial, point as u32).await,
        }
    }
}
