//! `--fail-on` gates for CI pipelines (docs/compare.md, "Gates"). A gate is a set of
//! conditions ([`FailOn`]) over the *gated* cells — the gated metrics at the gated points
//! ([`GateSpec`]: the spec's `compare.gate`, with the command line's choices in its place):
//!
//! * `not-shown-non-inferior` trips on every gated cell whose interval is not wholly above
//!   −θ (mirrored for latencies): the candidate must be *shown* no worse than θ, so an
//!   undecided cell fails, and an A/A with enough trials passes
//!   (`servebench_stats::gate`). This is the question CI asks of a change that should not
//!   slow anything down.
//! * `not-shown-superior` trips on every gated cell that is not *improved*: the candidate
//!   must be shown better by more than θ (a change that claims a speed-up).
//! * `regressed` trips on a *regressed* cell: significant and the whole interval beyond −θ.
//!   Quiet on noise, and on a change whose size is unsure — it passes an undecided cell.
//! * `likely-regressed` trips on *regressed* or *likely regressed*.
//! * `inconclusive` trips on an *inconclusive* cell or one that could not be compared.
//! * `suspicious` trips on a re-baseline flag that threatens a gated cell or the whole
//!   comparison (across runs that is always so: `stale-baseline`).
//! * `output-changed` trips when a comparison's output-equivalence verdict is `changed`: the
//!   candidate's greedy outputs differ from the baseline's beyond the baseline's own
//!   variation across its server starts (docs/equivalence.md). It reads no cell.
//! * `accuracy-dropped` trips when a comparison's task accuracy on the reference answers
//!   (`spec.equivalence.reference`) is `lower`: McNemar's exact test at α on the prompts only
//!   one arm got right, the candidate's fewer (docs/equivalence.md). It reads no cell; a
//!   change of outputs that keeps the answers right does not trip it.
//!
//! Every condition reads the cells as the table shows them: the same verdicts (corrected
//! for many tests when `compare.multiplicity` is `holm`) and the same intervals. The
//! non-inferiority and superiority gates need no correction of their own: a gate that passes
//! only when *every* gated cell shows it bounds the chance of passing a truly worse
//! candidate by each cell's α/2 (an intersection–union test).
//!
//! With sequential trials ([`GateSpec::needs`]), a gated cell stops as soon as the gate's
//! question is answered on its repeated interval. A tripped gate is exit code 1
//! (docs/architecture.md, "Exit codes").

mod outputs;
mod unjudged;

use servebench_spec::SpecFile;
use servebench_stats::Direction;
use servebench_stats::flags::{FlagLevel, Threatens};
use servebench_stats::gate::{Answer, Question, answer, trials_to_show};
use servebench_stats::verdict::Scale;

use super::report::{
    CompareReport, FailOn, GateOutcome, GatedCell, MetricReport, PointReport, VerdictKind,
};
use super::text::pct;

/// What is gated: the conditions, the metrics, the points and the non-inferiority margin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateSpec {
    /// The conditions (empty: nothing is gated).
    pub fail_on: Vec<FailOn>,
    /// The gated metrics (`None`: every compared metric).
    pub metrics: Option<Vec<String>>,
    /// The gated points as `key=value` words a point's full label must all hold (`c=32`,
    /// or a full label); empty: every point.
    pub points: Vec<String>,
    /// θ of the non-inferiority and superiority conditions (`None`: each metric's threshold).
    pub margin: Option<f64>,
    /// Pass what could not be judged (`--allow-unjudged`, docs/ci.md): by default a gated
    /// cell with no verdict, a comparison with no gated cell (no sweep point in common) and
    /// an output gate with no probe recorded trip the gate ([`unjudged`]).
    pub allow_unjudged: bool,
}

/// What a sequential cell must answer before it stops (from [`GateSpec::needs`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// Whether non-inferiority must be shown either way (`not-shown-non-inferior`,
    /// `regressed`: both are settled once the interval lies on one side of −θ).
    pub non_inferiority: bool,
    /// Whether superiority must be shown either way (`not-shown-superior`).
    pub superiority: bool,
    /// Whether the verdict must be decided (`likely-regressed`, `inconclusive`: their
    /// answers are not settled by one side of a margin).
    pub decided: bool,
}

impl GateSpec {
    /// The spec's `compare.gate`, its points turned into the full labels of the sweep points
    /// they match.
    pub fn of_spec(spec: &SpecFile) -> GateSpec {
        let Some(g) = &spec.spec.compare.gate else {
            return GateSpec::default();
        };
        let sweep = servebench_spec::plan::sweep_points(spec);
        let mut points: Vec<String> = Vec::new();
        for sel in &g.points {
            let sel = sel.as_sweep_point();
            for p in sweep.iter().filter(|p| p.matches(&sel)) {
                let label = p.to_string();
                if !points.contains(&label) {
                    points.push(label);
                }
            }
        }
        GateSpec {
            fail_on: g.fail_on.iter().map(|c| FailOn::of(*c)).collect(),
            metrics: g.metrics.clone(),
            points,
            margin: g.margin,
            allow_unjudged: false,
        }
    }

    /// This gate with the command line's choices in place of its own: conditions, metrics
    /// and points when given (non-empty), the margin when given.
    pub fn overridden(
        mut self,
        fail_on: &[FailOn],
        metrics: &[String],
        points: &[String],
        margin: Option<f64>,
    ) -> GateSpec {
        if !fail_on.is_empty() {
            self.fail_on = dedup(fail_on);
        }
        if !metrics.is_empty() {
            self.metrics = Some(metrics.to_vec());
        }
        if !points.is_empty() {
            self.points = points.to_vec();
        }
        if margin.is_some() {
            self.margin = margin;
        }
        self
    }

    /// Whether any condition is asked for.
    pub fn is_active(&self) -> bool {
        !self.fail_on.is_empty()
    }

    /// Whether `metric` is gated.
    pub fn gates_metric(&self, metric: &str) -> bool {
        self.metrics
            .as_ref()
            .is_none_or(|m| m.iter().any(|x| x == metric))
    }

    /// Whether the point with this full label is gated: some pattern's words all appear
    /// among the label's.
    pub fn gates_point(&self, point_label: &str) -> bool {
        if self.points.is_empty() {
            return true;
        }
        let words: Vec<&str> = point_label.split_whitespace().collect();
        self.points.iter().any(|pattern| {
            pattern.split_whitespace().all(|w| {
                words.contains(&w) || short_alias(w).is_some_and(|a| words.contains(&a.as_str()))
            })
        })
    }

    /// What a sequential cell at a gated point must answer before it stops.
    pub fn needs(&self) -> Needs {
        let has = |f: FailOn| self.fail_on.contains(&f);
        Needs {
            non_inferiority: has(FailOn::NotShownNonInferior) || has(FailOn::Regressed),
            superiority: has(FailOn::NotShownSuperior),
            decided: has(FailOn::LikelyRegressed) || has(FailOn::Inconclusive),
        }
    }

    /// The gate's θ for a metric whose own threshold is `threshold`.
    pub fn theta(&self, threshold: f64) -> f64 {
        self.margin.unwrap_or(threshold)
    }
}

/// `c=32`-style words also match the long key names of the spec (`max_concurrency=32`).
fn short_alias(word: &str) -> Option<String> {
    let (k, v) = word.split_once('=')?;
    let short = match k {
        "max_concurrency" | "concurrency" => "c",
        "request_rate" => "rate",
        "input_tokens" => "in",
        "output_tokens" => "out",
        _ => return None,
    };
    Some(format!("{short}={v}"))
}

fn dedup(fail_on: &[FailOn]) -> Vec<FailOn> {
    let mut out: Vec<FailOn> = Vec::new();
    for f in fail_on {
        if !out.contains(f) {
            out.push(*f);
        }
    }
    out
}

/// The margin on the analysis scale for θ at `row` of `m`: `ln(1 + θ)` (log), or the row's
/// own margin scaled by θ over the metric's threshold (arithmetic: θ × the baseline's mean,
/// or θ itself, as the verdict's margin is made).
pub(crate) fn margin_on_scale(m: &MetricReport, row: &PointReport, theta: f64) -> Option<f64> {
    match m.scale {
        Scale::Log => Some(theta.ln_1p()),
        Scale::Arithmetic => row.margin.map(|x| x * theta / m.threshold),
    }
}

/// The answer of one cell to `question` at θ, read on the row's interval. Superiority also
/// needs the verdict's significance in the better direction (which the correction for many
/// tests decides), so that a cell the table does not call improved is never shown superior.
pub(crate) fn cell_answer(
    question: Question,
    m: &MetricReport,
    row: &PointReport,
    theta: f64,
) -> Option<Answer> {
    let e = row.effect.as_ref()?;
    let margin = margin_on_scale(m, row, theta)?;
    let a = answer(question, &m.scale.interval_of(e), margin, m.direction);
    Some(match (question, a) {
        (Question::Superiority, Answer::Shown)
            if row.verdict.verdict().and_then(|v| v.is_better()) != Some(true) =>
        {
            Answer::NotShown
        }
        _ => a,
    })
}

/// The margins in words, turned for the metric's direction: a loss of throughput lies
/// *below −θ*, a loss of latency *above +θ*.
struct Edges {
    /// `below` or `above`: where a loss lies.
    side: &'static str,
    /// `−5%` (higher is better) or `+5%` (lower is better).
    edge: String,
    /// The superiority margin: `+5%` or `−5%`.
    better_edge: String,
}

impl Edges {
    fn of(direction: Direction, theta: f64) -> Edges {
        let (side, worse, better) = match direction {
            Direction::HigherIsBetter => ("below", "−", "+"),
            Direction::LowerIsBetter => ("above", "+", "−"),
        };
        Edges {
            side,
            edge: format!("{worse}{}", pct(theta)),
            better_edge: format!("{better}{}", pct(theta)),
        }
    }
}

/// `−5.2% [−11.1%, +1.1%]` (log) or `−1.5 [−3.0, 0.1]` (arithmetic).
fn change_words(m: &MetricReport, row: &PointReport) -> String {
    crate::text::change(m.scale, row.effect.as_ref())
}

/// Trials per arm that would likely show non-inferiority at this cell, from its estimate
/// and the spread its interval implies.
fn trials_words(
    m: &MetricReport,
    row: &PointReport,
    (margin, worse): (f64, &Edges),
    alpha: f64,
) -> Option<String> {
    let e = row.effect.as_ref()?;
    let d = match m.scale {
        Scale::Log => e.point.ln(),
        Scale::Arithmetic => e.point,
    };
    let better = match m.direction {
        Direction::HigherIsBetter => d,
        Direction::LowerIsBetter => -d,
    };
    if better + margin <= 0.0 {
        // Turned for the direction: a latency's estimate lies *above* +θ.
        return Some(format!(
            "its estimate itself is {} {}: more trials would more likely show it worse",
            worse.side, worse.edge
        ));
    }
    let (na, nb) = (row.n_baseline.max(1) as f64, row.n_candidate.max(1) as f64);
    let sd = e.std_err / (1.0 / na + 1.0 / nb).sqrt();
    let n = trials_to_show(
        better,
        sd,
        margin,
        alpha,
        row.n_baseline.max(row.n_candidate),
    )?;
    Some(if n <= servebench_stats::advice::PRACTICAL_TRIALS {
        format!("about {n} trials per arm would likely show it")
    } else {
        "no practical number of trials would show it at this estimate".to_owned()
    })
}

/// Evaluate `gate` over `report`.
pub fn evaluate(report: &CompareReport, gate: &GateSpec) -> GateOutcome {
    let asked = dedup(&gate.fail_on);
    let has = |f: FailOn| asked.contains(&f);
    let mut reasons = Vec::new();
    let mut cells = Vec::new();
    let mut gated_metrics: Vec<String> = Vec::new();
    for c in &report.comparisons {
        let pair = format!("{} vs {}", c.candidate.variant, c.baseline.variant);
        let mut gated: Vec<(String, String)> = Vec::new();
        for m in c.metrics.iter().filter(|m| gate.gates_metric(&m.metric)) {
            if !gated_metrics.contains(&m.metric) {
                gated_metrics.push(m.metric.clone());
            }
            let theta = gate.theta(m.threshold);
            let mut by_condition: Vec<(FailOn, Vec<String>)> = Vec::new();
            for row in m.points.iter().filter(|p| gate.gates_point(&p.point_label)) {
                gated.push((m.metric.clone(), row.label.clone()));
                let worse = Edges::of(m.direction, theta);
                let ni = cell_answer(Question::NonInferiority, m, row, theta);
                let sup = cell_answer(Question::Superiority, m, row, theta);
                let mut trips = Vec::new();
                let mut say = |f: FailOn, words: String| {
                    trips.push(f);
                    match by_condition.iter_mut().find(|(g, _)| *g == f) {
                        Some((_, list)) => list.push(words),
                        None => by_condition.push((f, vec![words])),
                    }
                };
                if has(FailOn::NotShownNonInferior) && ni != Some(Answer::Shown) {
                    let why = match ni {
                        Some(Answer::ShownNot) => format!(
                            "{} {}: wholly {} {} — shown worse",
                            row.label,
                            change_words(m, row),
                            worse.side,
                            worse.edge
                        ),
                        Some(_) => {
                            let more = margin_on_scale(m, row, theta)
                                .and_then(|l| trials_words(m, row, (l, &worse), report.alpha))
                                .map(|t| format!("; {t}"))
                                .unwrap_or_default();
                            format!(
                                "{} {}: reaches {} {} — not shown no worse{more}",
                                row.label,
                                change_words(m, row),
                                worse.side,
                                worse.edge
                            )
                        }
                        None => format!(
                            "{} ({}): no interval{}",
                            row.label,
                            row.verdict.as_str(),
                            row.error
                                .as_ref()
                                .map(|e| format!(" — {e}"))
                                .unwrap_or_default()
                        ),
                    };
                    say(FailOn::NotShownNonInferior, why);
                }
                if has(FailOn::NotShownSuperior) && sup != Some(Answer::Shown) {
                    say(
                        FailOn::NotShownSuperior,
                        format!(
                            "{} {} ({}): not shown better than {}",
                            row.label,
                            change_words(m, row),
                            row.verdict.as_str(),
                            worse.better_edge
                        ),
                    );
                }
                let regressed = row.verdict == VerdictKind::Regressed;
                let likely = regressed || row.verdict == VerdictKind::LikelyRegressed;
                if has(FailOn::Regressed) && regressed {
                    say(
                        FailOn::Regressed,
                        format!("{} ({})", row.label, row.verdict.as_str()),
                    );
                }
                if has(FailOn::LikelyRegressed) && likely {
                    say(
                        FailOn::LikelyRegressed,
                        format!("{} ({})", row.label, row.verdict.as_str()),
                    );
                }
                if has(FailOn::Inconclusive)
                    && matches!(
                        row.verdict,
                        VerdictKind::Inconclusive | VerdictKind::NotComputed
                    )
                {
                    say(
                        FailOn::Inconclusive,
                        format!("{} ({})", row.label, row.verdict.as_str()),
                    );
                }
                if asked.iter().any(|f| {
                    !matches!(
                        f,
                        FailOn::Suspicious | FailOn::OutputChanged | FailOn::AccuracyDropped
                    )
                }) {
                    cells.push(GatedCell {
                        candidate: c.candidate.variant.clone(),
                        metric: m.metric.clone(),
                        point: row.label.clone(),
                        verdict: row.verdict,
                        effect: row.effect,
                        margin: theta,
                        non_inferior: ni,
                        superior: sup,
                        trips,
                    });
                }
            }
            for (f, list) in by_condition {
                reasons.push(format!(
                    "{}: {pair}, {} at {}",
                    f.as_str(),
                    m.metric,
                    list.join("; ")
                ));
            }
        }
        reasons.extend(outputs::reasons(c, &pair, &asked));
        if !gate.allow_unjudged {
            reasons.extend(unjudged::reasons(c, &pair, &asked, gate));
        }
        if has(FailOn::Suspicious) {
            let mut ids: Vec<&str> = c
                .metrics
                .iter()
                .flat_map(|m| m.flags.iter())
                .chain(c.flags.iter())
                .filter(|f| f.level == FlagLevel::ReBaseline)
                .filter(|f| match &f.threatens {
                    Threatens::Comparison => true,
                    Threatens::Cells(_) => gated.iter().any(|(m, p)| f.threatens_cell(m, p)),
                })
                .map(|f| f.id.as_str())
                .collect();
            ids.sort_unstable();
            ids.dedup();
            if !ids.is_empty() {
                reasons.push(format!(
                    "suspicious: {pair} has re-baseline flag(s) {} on gated cells",
                    ids.join(", ")
                ));
            }
        }
    }
    if !gate.allow_unjudged && report.comparisons.is_empty() && !asked.is_empty() {
        reasons.push(unjudged::nothing_compared(&asked));
    }
    GateOutcome {
        fail_on: asked,
        tripped: !reasons.is_empty(),
        reasons,
        metrics: gated_metrics,
        points: gate.points.clone(),
        margin: gate.margin,
        cells,
    }
}

/// What a gate covers, for the text report: `output_throughput at c=32; θ = 5%`.
pub fn describe(g: &GateOutcome) -> String {
    let points = if g.points.is_empty() {
        "every point".to_owned()
    } else {
        g.points.join(", ")
    };
    let margin = g.margin.map_or_else(
        || "each metric's θ".to_owned(),
        |m| format!("θ = {}", pct(m)),
    );
    format!(
        "{} at {points}; {margin}",
        if g.metrics.is_empty() {
            "every metric".to_owned()
        } else {
            g.metrics.join(", ")
        }
    )
}
