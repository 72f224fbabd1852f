//! Sequential runs (`trials.until_decided`): the look after the first stage and after every
//! round — each open cell's repeated confidence interval at its boundary, and whether it
//! stops — and, for `compare`, the look each cell stopped at.
//!
//! Method (docs/statistics-method.md, "Sequential trials"): every candidate × point is its
//! own group-sequential comparison with the baseline at that point
//! (`servebench_stats::sequential`). Its looks are the rounds in which it was open; the
//! information fraction of a look is the harmonic mean of the arms' trial counts (up to that
//! round) over `until_decided.max`. A cell stops once every metric `until_decided.metrics`
//! names is improved, regressed or equivalent on the repeated interval, or when the budget is
//! spent. Every compared metric is read on the same repeated interval, so `compare` reports a
//! cell's verdicts at the look it stopped at, on the trials measured up to it — later trials
//! of the baseline (run for another candidate) do not change them.

use servebench_spec::SpecFile;
use servebench_spec::metrics;
use servebench_spec::types::Spending;
use servebench_stats::flags::PointComparison;
use servebench_stats::gate::{Answer, Question, answer};
use servebench_stats::sequential::{Look, SequentialDesign, SpendingFunction};
use servebench_stats::verdict::{ArmComparison, Scale};

use super::analyze::{MetricSpec, settings_for};
use super::evidence::arm_point;
use super::gate::GateSpec;
use super::{CompareError, CompareOptions, metric_specs};
use servebench_result::{
    CellLook, LookRecord, MetricLook, RunResult, StopReason, TrialStatus, cell_is_open, cell_looks,
};

/// A sequential run's design, metrics and arms.
#[derive(Debug, Clone)]
pub struct Sequential {
    design: SequentialDesign,
    alpha: f64,
    metrics: Vec<MetricSpec>,
    required: Vec<String>,
    baseline: String,
    candidates: Vec<String>,
    gate: GateSpec,
}

impl Sequential {
    /// The design of `result`'s spec, or `None` when it has no `until_decided`.
    pub fn of(result: &RunResult) -> Result<Option<Self>, CompareError> {
        Self::for_spec(&result.spec)
    }

    /// The design of `spec`, or `None` when it has no `until_decided` (what `servebench run`
    /// hands the runner, before anything is measured).
    pub fn for_spec(spec: &SpecFile) -> Result<Option<Self>, CompareError> {
        let s = &spec.spec;
        let Some(u) = &s.trials.until_decided else {
            return Ok(None);
        };
        let (metrics, alpha, _) = metric_specs(spec, &CompareOptions::default())?;
        let spending = match u.spending {
            Spending::ObrienFleming => SpendingFunction::OBrienFleming,
            Spending::Pocock => SpendingFunction::Pocock,
        };
        let design = SequentialDesign::new(spending, alpha, u64::from(u.max)).map_err(|_| {
            CompareError::InvalidSetting {
                name: "trials.until_decided.max".into(),
                value: f64::from(u.max),
                why: "must be at least 3 trials per cell",
            }
        })?;
        let baseline = s
            .variants
            .iter()
            .find(|v| v.baseline)
            .map(|v| v.name.clone())
            .unwrap_or_default();
        Ok(Some(Sequential {
            design,
            alpha,
            required: u
                .metrics
                .clone()
                .unwrap_or_else(|| s.compare.metrics.clone()),
            metrics,
            candidates: s
                .variants
                .iter()
                .filter(|v| v.name != baseline)
                .map(|v| v.name.clone())
                .collect(),
            baseline,
            gate: GateSpec::of_spec(spec),
        }))
    }

    /// The same design with its gated cells stopping on `gate`'s question (the spec's
    /// `compare.gate` with the command line's `--fail-on` in its place): a gated cell stops
    /// as soon as every gated metric has answered it, either way, on its repeated interval
    /// (docs/compare.md, "Gates and sequential trials").
    pub fn with_gate(mut self, gate: GateSpec) -> Self {
        self.gate = gate;
        self
    }

    /// The gate whose question the gated cells stop on.
    pub fn gate(&self) -> &GateSpec {
        &self.gate
    }

    /// Trials of `variant` at `point` with a summary, up to repetition `t`.
    fn count(result: &RunResult, variant: &str, point: usize, t: u32) -> u64 {
        result
            .trials
            .iter()
            .filter(|x| {
                x.variant == variant
                    && x.point == point
                    && x.trial <= t
                    && x.status == TrialStatus::Ok
                    && x.summary.is_some()
            })
            .count() as u64
    }

    /// The look after repetition `after_trial`: every open cell with new trials since its
    /// last look, read on its repeated interval. A cell without new trials (its round's
    /// trial failed) is left out and stays open.
    pub fn look(&self, result: &RunResult, after_trial: u32) -> LookRecord {
        let mut cells = Vec::new();
        for variant in &self.candidates {
            for point in 0..result.points.len() {
                if !cell_is_open(&result.looks, variant, point) {
                    continue;
                }
                let mut history: Vec<(u64, u64)> = cell_looks(&result.looks, variant, point)
                    .map(|c| (c.n_baseline, c.n_candidate))
                    .collect();
                let now = (
                    Self::count(result, &self.baseline, point, after_trial),
                    Self::count(result, variant, point, after_trial),
                );
                if now.0 == 0 || now.1 == 0 || history.last() == Some(&now) {
                    continue;
                }
                history.push(now);
                let Ok(look) = self.design.look(&history) else {
                    continue;
                };
                cells.push(self.cell(result, variant, point, after_trial, &look));
            }
        }
        LookRecord { after_trial, cells }
    }

    fn cell(
        &self,
        result: &RunResult,
        variant: &str,
        point: usize,
        t: u32,
        look: &Look,
    ) -> CellLook {
        let label = result.points.get(point).map_or("", |p| p.label.as_str());
        let needs = self.gate.needs();
        let gated = self.gate.is_active()
            && self.gate.gates_point(label)
            && (needs.non_inferiority || needs.superiority || needs.decided)
            && self.metrics.iter().any(|m| self.gate.gates_metric(&m.name));
        let metrics: Vec<MetricLook> = self
            .metrics
            .iter()
            .map(|m| {
                let p = self.point_comparison(result, variant, point, t, m, look);
                let c = p.as_ref().and_then(|p| p.comparison.as_ref());
                let gated_metric = gated && self.gate.gates_metric(&m.name);
                MetricLook {
                    metric: m.name.clone(),
                    required: if gated {
                        gated_metric
                    } else {
                        self.required.contains(&m.name)
                    },
                    verdict: c.map_or("not-computed", |c| c.verdict.as_str()).to_owned(),
                    effect: c.map(|c| c.effect.point),
                    lower: c.map(|c| c.effect.ci.lower),
                    upper: c.map(|c| c.effect.ci.upper),
                    answer: gated_metric
                        .then(|| gate_answer(&self.gate, m, c))
                        .flatten()
                        .map(|a| a.as_str().to_owned()),
                }
            })
            .collect();
        let is_decided =
            |m: &MetricLook| matches!(m.verdict.as_str(), "improved" | "regressed" | "equivalent");
        let required = || metrics.iter().filter(|m| m.required);
        let decided = required().all(is_decided);
        let answered = gated
            && required().all(|m| {
                m.answer.as_deref() == Some("shown")
                    || m.answer.as_deref() == Some("shown-not")
                    || (m.answer.is_none() && is_decided(m))
            })
            && (!needs.decided || decided);
        CellLook {
            variant: variant.to_owned(),
            point,
            n_baseline: look.n_baseline,
            n_candidate: look.n_candidate,
            fraction: look.fraction,
            z_boundary: look.z_boundary,
            nominal_alpha: look.nominal_alpha,
            metrics,
            decided,
            stopped: if answered {
                Some(StopReason::Answered)
            } else if decided && !gated {
                Some(StopReason::Decided)
            } else if look.last {
                Some(StopReason::Budget)
            } else {
                None
            },
        }
    }

    /// One metric of one cell at `look`, on the trials up to repetition `t`.
    fn point_comparison(
        &self,
        result: &RunResult,
        variant: &str,
        point: usize,
        t: u32,
        m: &MetricSpec,
        look: &Look,
    ) -> Option<PointComparison> {
        let metric = metrics::metric(&m.name)?;
        let out = result.points.get(point).and_then(|p| p.output_tokens);
        let base = arm_point(result, &self.baseline, point, out, &metric, Some(t));
        let cand = arm_point(result, variant, point, out, &metric, Some(t));
        let zero = m.can_be_zero
            && !base.evidence.trial_values.is_empty()
            && base.evidence.trial_values.iter().all(|v| *v == 0.0);
        Some(PointComparison::at(
            format!("[{point}]"),
            point as f64,
            base.evidence,
            cand.evidence,
            &settings_for(m, zero),
            self.alpha,
            Some(*look),
        ))
    }

    /// The look `variant` at `point` stopped at (or its latest, if it never stopped: the run
    /// was cut short) and the repetition index of its last trials; `None` when the cell was
    /// never looked at.
    pub fn stop_of(&self, result: &RunResult, variant: &str, point: usize) -> Option<(u32, Look)> {
        let mut history = Vec::new();
        let mut last_t = None;
        for l in &result.looks {
            if let Some(c) = l
                .cells
                .iter()
                .find(|c| c.variant == variant && c.point == point)
            {
                history.push((c.n_baseline, c.n_candidate));
                last_t = Some(l.after_trial);
            }
        }
        let look = self.design.look(&history).ok()?;
        Some((last_t?, look))
    }
}

/// The gate's answer for one metric of a cell on its repeated interval: every question the
/// gate asks must be settled (non-inferiority, superiority) for `shown` or `shown-not`;
/// `not-shown` while one is not; `None` when the gate asks no question of an interval (its
/// conditions need a decided verdict). For an answer settled either way, the repeated
/// intervals keep the chance of a wrong one at α/2 however many looks are taken.
fn gate_answer(gate: &GateSpec, m: &MetricSpec, c: Option<&ArmComparison>) -> Option<Answer> {
    let needs = gate.needs();
    if !(needs.non_inferiority || needs.superiority) {
        return None;
    }
    let Some(c) = c else {
        return Some(Answer::NotShown);
    };
    // `regressed` alone asks about the verdict's own θ; the non-inferiority and superiority
    // conditions about the gate's margin.
    let theta = if gate.fail_on.contains(&crate::FailOn::NotShownNonInferior)
        || gate.fail_on.contains(&crate::FailOn::NotShownSuperior)
    {
        gate.theta(m.threshold)
    } else {
        m.threshold
    };
    let margin = match c.scale {
        Scale::Log => theta.ln_1p(),
        Scale::Arithmetic => c.margin * theta / m.threshold,
    };
    let ci = c.effect_interval_on_scale();
    let mut answers = Vec::new();
    if needs.non_inferiority {
        answers.push(answer(Question::NonInferiority, &ci, margin, c.direction));
    }
    if needs.superiority {
        let a = answer(Question::Superiority, &ci, margin, c.direction);
        answers.push(match a {
            Answer::Shown if c.verdict.is_better() != Some(true) => Answer::NotShown,
            other => other,
        });
    }
    Some(if answers.contains(&Answer::NotShown) {
        Answer::NotShown
    } else if answers.contains(&Answer::ShownNot) {
        Answer::ShownNot
    } else {
        Answer::Shown
    })
}
