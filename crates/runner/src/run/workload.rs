//! From the spec to the load generator's inputs: one `LoadConfig` per sweep point and the
//! prompt source of a server start.

use std::path::Path;

use servebench_engines::BodyPlan;
use servebench_spec::plan::SweepPoint;
use servebench_spec::{
    ApiKind as SpecApi, ArrivalProcess, DatasetKind, Rate, SpecFile, TimestampUnit, TokenCount,
    TraceFormat,
};

use crate::dataset::image::{ImageShape, data_urls};
use crate::dataset::{
    AnyCounter, DatasetError, FileDataset, LengthDist, MultiTurnBuilder, MultiTurnDataset,
    RandomDataset, RandomPromptBuilder, SharedPrefixBuilder, SharedPrefixDataset, TokenizerSpec,
    TraceBuilder, TraceLayout, TraceWindow, TrialPrompts, encode_images, load_jsonl, load_sharegpt,
    load_trace,
};
use crate::dataset::{prompt_seed, warmup_seed};
use crate::loadgen::schedule::offsets_within;
use crate::loadgen::{ApiKind, Arrival, LoadConfig, MinTokens};
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
///
/// The request fields are `body`'s, the engine profile's plan for the spec's `ignore_eos` and
/// `send_min_tokens` (servebench_engines::Profile::body_plan).
pub fn load_config(
    spec: &SpecFile,
    point: &SweepPoint,
    schedule_seed: u64,
    body: &BodyPlan,
) -> LoadConfig {
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
    cfg.ignore_eos = body.ignore_eos;
    cfg.temperature = w.temperature;
    cfg.min_tokens = if body.min_tokens {
        MinTokens::MatchMax
    } else {
        MinTokens::Omit
    };
    cfg.stream_options = body.stream_options;
    cfg.generation_config = body.generation_config;
    cfg.slo = spec.spec.slo.as_ref().map(|s| Slo {
        ttft_ms: s.ttft.map(ms),
        tpot_ms: s.tpot.map(ms),
        e2e_ms: s.e2e.map(ms),
    });
    cfg
}

/// The seed of a trial's arrival schedule, from its prompt seed (the same for every variant
/// at the same trial and point).
pub(super) fn schedule_seed(prompt_seed: u64) -> u64 {
    prompt_seed ^ 0x5ced_u64
}

pub(super) fn trace_layout(t: &servebench_spec::Trace) -> (TraceLayout, f64) {
    let layout = match t.format {
        TraceFormat::Plain => TraceLayout::Plain,
        TraceFormat::Mooncake => TraceLayout::Mooncake {
            block_tokens: t.block_tokens,
        },
    };
    let unit = match t.timestamp_unit {
        TimestampUnit::Ms => 1.0,
        TimestampUnit::S => 1000.0,
    };
    (layout, unit)
}

pub(super) fn trace_window(t: &servebench_spec::Trace) -> TraceWindow {
    TraceWindow {
        start: t.start.get(),
        duration: t.duration.map(|d| d.get()),
        requests: t.requests.map(|n| n as usize),
    }
}

/// The `trace` block's defaults, for a trace dataset given without one.
pub(super) fn default_trace() -> servebench_spec::Trace {
    serde_json::from_str("{}").expect("every trace field has a default")
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
pub(super) enum PromptSource {
    /// Random prompts fitted to exact lengths; one builder per sweep point's lengths.
    Random {
        builders: Vec<RandomPromptBuilder<AnyCounter>>,
    },
    /// Random prompts with random images (`image`): the random builders, and the images.
    Image {
        builders: Vec<RandomPromptBuilder<AnyCounter>>,
        shape: ImageShape,
    },
    /// Prompts from a file.
    File(Box<FileDataset<AnyCounter>>),
    /// Groups of prompts sharing a prefix; one builder per sweep point's output length.
    SharedPrefix {
        builders: Vec<SharedPrefixBuilder<AnyCounter>>,
    },
    /// Chat conversations; one builder per sweep point's output length.
    MultiTurn {
        builders: Vec<MultiTurnBuilder<AnyCounter>>,
    },
    /// A trace replayed on its own clock, at each sweep point's speed.
    Trace {
        builder: Box<TraceBuilder<AnyCounter>>,
        speeds: Vec<f64>,
    },
}

impl PromptSource {
    /// A source for one server start.
    pub(super) fn new(
        spec: &SpecFile,
        points: &[SweepPoint],
        tokenizer: &TokenizerSpec,
        spec_dir: &Path,
    ) -> Result<Self, DatasetError> {
        let make = match spec.spec.workload.dataset.kind {
            DatasetKind::Image => Self::image,
            DatasetKind::Random => Self::random,
            DatasetKind::SharedPrefix => Self::shared_prefix,
            DatasetKind::Trace => Self::trace,
            DatasetKind::MultiTurn => Self::multi_turn,
            DatasetKind::Jsonl | DatasetKind::Sharegpt => Self::file,
        };
        make(spec, points, tokenizer, spec_dir)
    }

    /// An image dataset: random prompts, each with its images.
    fn image(
        spec: &SpecFile,
        points: &[SweepPoint],
        tokenizer: &TokenizerSpec,
        spec_dir: &Path,
    ) -> Result<Self, DatasetError> {
        let d = &spec.spec.workload.dataset;
        let img = d.image.ok_or_else(|| {
            DatasetError::Unusable("an image dataset needs its `image` block".into())
        })?;
        let PromptSource::Random { builders } = Self::random(spec, points, tokenizer, spec_dir)?
        else {
            return Err(DatasetError::Unusable("no random builders".into()));
        };
        Ok(PromptSource::Image {
            builders,
            shape: ImageShape {
                count: img.count,
                width: img.width,
                height: img.height,
                format: img.format.into(),
            },
        })
    }

    /// A random dataset: one builder per sweep point.
    fn random(
        spec: &SpecFile,
        points: &[SweepPoint],
        tokenizer: &TokenizerSpec,
        _spec_dir: &Path,
    ) -> Result<Self, DatasetError> {
        let chat = spec.spec.target.api == SpecApi::OpenaiChat;
        let mut builders = Vec::with_capacity(points.len());
        for p in points {
            let (Some(input), Some(output)) = (length(p.input_tokens), length(p.output_tokens))
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

    /// A shared-prefix dataset: one builder per sweep point.
    fn shared_prefix(
        spec: &SpecFile,
        points: &[SweepPoint],
        tokenizer: &TokenizerSpec,
        _spec_dir: &Path,
    ) -> Result<Self, DatasetError> {
        let d = &spec.spec.workload.dataset;
        let chat = spec.spec.target.api == SpecApi::OpenaiChat;
        let Some(sp) = &d.shared_prefix else {
            return Err(DatasetError::Unusable(
                "a shared_prefix dataset needs its `shared_prefix` block".into(),
            ));
        };
        let mut builders = Vec::with_capacity(points.len());
        for p in points {
            let (Some(prefix), Some(suffix), Some(output)) = (
                length(Some(sp.prefix_tokens)),
                length(Some(sp.suffix_tokens)),
                length(p.output_tokens),
            ) else {
                return Err(DatasetError::InvalidLength(
                    "a shared_prefix dataset needs an output length".into(),
                ));
            };
            let ds = SharedPrefixDataset {
                groups: sp.groups,
                prompts_per_group: sp.prompts_per_group,
                prefix_tokens: prefix,
                suffix_tokens: suffix,
                output_tokens: output,
                prime: sp.prime,
                chat,
            };
            builders.push(SharedPrefixBuilder::new(
                ds,
                AnyCounter::from_spec(tokenizer)?,
            )?);
        }
        Ok(PromptSource::SharedPrefix { builders })
    }

    /// A trace: its requests, replayed at each point's speed.
    fn trace(
        spec: &SpecFile,
        points: &[SweepPoint],
        tokenizer: &TokenizerSpec,
        spec_dir: &Path,
    ) -> Result<Self, DatasetError> {
        let d = &spec.spec.workload.dataset;
        let chat = spec.spec.target.api == SpecApi::OpenaiChat;
        let t = d.trace.clone().unwrap_or_else(default_trace);
        let (layout, unit) = trace_layout(&t);
        let path = spec_dir.join(d.path.clone().unwrap_or_default());
        let entries = load_trace(&path, layout, unit)?;
        let window = trace_window(&t);
        let builder = TraceBuilder::new(
            &entries,
            window,
            layout,
            chat,
            AnyCounter::from_spec(tokenizer)?,
        )?;
        let speeds = points
            .iter()
            .map(|p| p.trace_speed.unwrap_or(t.speed))
            .collect();
        Ok(PromptSource::Trace {
            builder: Box::new(builder),
            speeds,
        })
    }

    /// A multi-turn dataset: one builder per sweep point.
    fn multi_turn(
        spec: &SpecFile,
        points: &[SweepPoint],
        tokenizer: &TokenizerSpec,
        _spec_dir: &Path,
    ) -> Result<Self, DatasetError> {
        let d = &spec.spec.workload.dataset;
        let Some(m) = &d.multi_turn else {
            return Err(DatasetError::Unusable(
                "a multi_turn dataset needs its `multi_turn` block".into(),
            ));
        };
        let mut builders = Vec::with_capacity(points.len());
        for p in points {
            let (Some(turns), Some(user), Some(output)) = (
                length(Some(m.turns)),
                length(Some(m.user_tokens)),
                length(p.output_tokens),
            ) else {
                return Err(DatasetError::InvalidLength(
                    "a multi_turn dataset needs an output length".into(),
                ));
            };
            let ds = MultiTurnDataset {
                conversations: m.conversations,
                turns,
                user_tokens: user,
                output_tokens: output,
                think_time: m.think_time.get(),
            };
            builders.push(MultiTurnBuilder::new(
                ds,
                AnyCounter::from_spec(tokenizer)?,
            )?);
        }
        Ok(PromptSource::MultiTurn { builders })
    }

    /// A JSONL or ShareGPT file, its images encoded now (never while sending).
    fn file(
        spec: &SpecFile,
        _points: &[SweepPoint],
        tokenizer: &TokenizerSpec,
        spec_dir: &Path,
    ) -> Result<Self, DatasetError> {
        let d = &spec.spec.workload.dataset;
        let path = spec_dir.join(d.path.clone().unwrap_or_default());
        let mut entries = if d.kind == DatasetKind::Jsonl {
            load_jsonl(&path)?
        } else {
            load_sharegpt(&path)?.0
        };
        // The lines' image files, read and encoded now: never while sending.
        encode_images(&mut entries, &path)?;
        let fixed = d.output_tokens.map(|t| t.max());
        Ok(PromptSource::File(Box::new(FileDataset::new(
            entries,
            fixed,
            AnyCounter::from_spec(tokenizer)?,
        )?)))
    }

    /// The `requests` measured prompts (the trial's `LoadConfig::requests`) and the warm-up
    /// prompts of trial `trial` at point `point`: paired across variants (same seed).
    pub(super) async fn trial_prompts(
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
                let b = builders
                    .get_mut(point)
                    .ok_or_else(|| DatasetError::Unusable(format!("no sweep point {point}")))?;
                b.trial_prompts(n, warm, seed, trial, point as u32).await
            }
            PromptSource::Image { builders, shape } => {
                let b = builders
                    .get_mut(point)
                    .ok_or_else(|| DatasetError::Unusable(format!("no sweep point {point}")))?;
                let mut prompts = b.trial_prompts(n, warm, seed, trial, point as u32).await?;
                let base = prompt_seed(seed, trial, point as u32);
                attach_images(&mut prompts.measured, shape, base);
                attach_images(&mut prompts.warmup, shape, warmup_seed(base));
                Ok(prompts)
            }
            PromptSource::File(f) => f.trial_prompts(n, warm, seed, trial, point as u32).await,
            PromptSource::MultiTurn { builders } => {
                let b = builders
                    .get_mut(point)
                    .ok_or_else(|| DatasetError::Unusable(format!("no sweep point {point}")))?;
                let convs = b
                    .trial_conversations(warm, seed, trial, point as u32)
                    .await?;
                Ok(TrialPrompts {
                    conversations: Some(convs),
                    ..TrialPrompts::default()
                })
            }
            PromptSource::Trace { builder, speeds } => {
                let speed = *speeds
                    .get(point)
                    .ok_or_else(|| DatasetError::Unusable(format!("no sweep point {point}")))?;
                builder
                    .trial_prompts(warm, speed, seed, trial, point as u32)
                    .await
            }
            PromptSource::SharedPrefix { builders } => {
                let b = builders
                    .get_mut(point)
                    .ok_or_else(|| DatasetError::Unusable(format!("no sweep point {point}")))?;
                if b.requests() != n {
                    return Err(DatasetError::Unusable(format!(
                        "a shared_prefix trial sends groups × prompts_per_group = {} \
                         requests, not {n}",
                        b.requests()
                    )));
                }
                b.trial_prompts(warm, seed, trial, point as u32).await
            }
        }
    }
}

/// Gives every prompt its images, drawn from `seed` and its position (made and encoded
/// here, before the trial). The input length becomes the server's to say: no local count
/// knows an image's tokens.
fn attach_images(prompts: &mut [crate::dataset::Prompt], shape: &ImageShape, seed: u64) {
    for (i, p) in prompts.iter_mut().enumerate() {
        p.images = data_urls(shape, crate::dataset::prompt::splitmix64(seed ^ i as u64));
        p.expected_input_tokens = None;
        p.input_tokens_exact = false;
    }
}
