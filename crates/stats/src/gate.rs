//! The questions a CI gate asks of one cell, read on its interval: is the candidate shown to
//! be **no worse than θ** (non-inferiority), or shown to be **better by more than θ**
//! (superiority)?
//!
//! Method (docs/statistics-method.md, "Gates"). On the analysis scale (`d = ln r` with
//! `L = ln(1 + θ)`, or the difference with margin `M`) and with the sign turned so that
//! positive is *better* (`d` for higher-is-better metrics, `−d` for lower-is-better ones),
//! the cell's interval `[lo, hi]` at `1 − α` answers:
//! * **non-inferiority**: *shown* when `lo > −L` (every value the data allow is better than
//!   a loss of θ); *shown inferior* when `hi < −L` (every value is a loss beyond θ); *not
//!   shown* otherwise — the interval straddles `−L`, so the data cannot tell, and a gate that
//!   must be convinced fails it;
//! * **superiority**: *shown* when `lo > L`; *shown not superior* when `hi < L`; *not shown*
//!   otherwise.
//!
//! Each is a one-sided test at `α/2` (the lower end of a two-sided `1 − α` interval), so a
//! truly inferior candidate (a loss of θ or more) is called non-inferior at one cell with
//! probability ≤ `α/2`; a gate that passes only when *every* gated cell is shown
//! non-inferior keeps that bound over all of them without a multiplicity correction (an
//! intersection–union test: Berger 1982). Read on a sequential design's repeated intervals
//! (`crate::sequential`), the same bound holds however many looks were taken, and a cell
//! may stop as soon as its answer is *shown* either way ([`Answer::is_settled`]).
//!
//! The price is on the other side: a truly equal candidate fails a cell whose interval is
//! still wider than the margin. [`trials_to_pass`] is the count per arm at which a truly
//! equal candidate passes `cells` gated cells with probability ≥ `1 − β` (each cell at
//! `1 − β/cells`): with `β = α` the gate's false-failure rate on an A/A is at most α.
//! Reference: S. Wellek, *Testing Statistical Hypotheses of Equivalence and
//! Noninferiority* (2010), ch. 2; R. L. Berger, "Multiparameter hypothesis testing and
//! acceptance sampling", Technometrics 24(4), 1982; Chow, Shao & Wang, *Sample Size
//! Calculations in Clinical Research* (2008) §3.2.

use serde::{Deserialize, Serialize};

use crate::error::{StatsError, check_probability};
use crate::estimate::ConfidenceInterval;
use crate::power::sample_size;
use crate::verdict::Direction;

/// Which question a gate asks of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Question {
    /// Is the candidate shown to be no worse than θ?
    NonInferiority,
    /// Is the candidate shown to be better by more than θ?
    Superiority,
}

/// A cell's answer to a [`Question`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// The interval lies wholly on the good side of the margin.
    Shown,
    /// The interval lies wholly on the bad side: the answer is known, and it is no.
    ShownNot,
    /// The interval straddles the margin: the data cannot tell.
    NotShown,
}

impl Answer {
    /// The question is answered either way (a sequential cell may stop).
    pub fn is_settled(self) -> bool {
        matches!(self, Answer::Shown | Answer::ShownNot)
    }

    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Shown => "shown",
            Answer::ShownNot => "shown-not",
            Answer::NotShown => "not-shown",
        }
    }
}

/// The interval turned so that positive is better: `[lo, hi]` of `d` for higher-is-better,
/// of `−d` for lower-is-better.
fn better_side(ci: &ConfidenceInterval, direction: Direction) -> (f64, f64) {
    match direction {
        Direction::HigherIsBetter => (ci.lower, ci.upper),
        Direction::LowerIsBetter => (-ci.upper, -ci.lower),
    }
}

/// The answer to `question` of a cell whose interval on the analysis scale is `ci` (the log
/// ratio, or the difference), against `margin` (`ln(1 + θ)` or `M`, > 0), for a metric that
/// is better in `direction` (module docs). A non-finite bound never shows anything.
pub fn answer(
    question: Question,
    ci: &ConfidenceInterval,
    margin: f64,
    direction: Direction,
) -> Answer {
    let (lo, hi) = better_side(ci, direction);
    let edge = match question {
        Question::NonInferiority => -margin,
        Question::Superiority => margin,
    };
    if lo.is_finite() && lo > edge {
        Answer::Shown
    } else if hi.is_finite() && hi < edge {
        Answer::ShownNot
    } else {
        Answer::NotShown
    }
}

/// Trials per arm at which a truly equal candidate (true difference 0) passes a
/// non-inferiority gate of `cells` cells with probability ≥ `power` (module docs): the
/// two-sample size that resolves `margin` at spread `sd` (both on the analysis scale: the SD
/// of the logs and `ln(1 + θ)`, or the SD and `M`) with a one-sided test at `α/2` and power
/// `1 − (1 − power)/cells` per cell. Errors on parameters out of range or when more than
/// `power::MAX_TRIALS` would be needed.
pub fn trials_to_pass(
    sd: f64,
    margin: f64,
    alpha: f64,
    power: f64,
    cells: usize,
) -> Result<u64, StatsError> {
    check_probability("power", power)?;
    let per_cell = 1.0 - (1.0 - power) / cells.max(1) as f64;
    sample_size(sd, margin, alpha, per_cell)
}

/// Trials per arm that would likely show non-inferiority for a cell whose estimate (turned
/// so that positive is better, on the analysis scale) is `d` with pooled spread `sd`:
/// the two-sample size that resolves the distance `d + margin` at power 0.8 (the advice's
/// rule), at least one more than `n_now`. `None` when the estimate is at or beyond `−margin`
/// (more trials would more likely show it inferior) or the count exceeds
/// `power::MAX_TRIALS`.
pub fn trials_to_show(d: f64, sd: f64, margin: f64, alpha: f64, n_now: usize) -> Option<u64> {
    let distance = d + margin;
    if !(distance.is_finite() && distance > 0.0 && sd > 0.0) {
        return None;
    }
    sample_size(sd, distance, alpha, crate::power::DEFAULT_POWER)
        .ok()
        .map(|k| k.max(n_now as u64 + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ci(lower: f64, upper: f64) -> ConfidenceInterval {
        ConfidenceInterval {
            level: 0.95,
            lower,
            upper,
        }
    }

    #[test]
    fn the_interval_against_the_margin_answers_both_questions() {
        let l = 0.02f64.ln_1p();
        let up = Direction::HigherIsBetter;
        let ni = Question::NonInferiority;
        let sup = Question::Superiority;
        // The case: −5.2% [−11.1%, +1.1%] at θ = 2%: not shown.
        let case = ci(0.889f64.ln(), 1.011f64.ln());
        assert_eq!(answer(ni, &case, l, up), Answer::NotShown);
        assert_eq!(answer(ni, &ci(-0.01, 0.01), l, up), Answer::Shown);
        assert_eq!(answer(ni, &ci(-0.2, -0.05), l, up), Answer::ShownNot);
        assert_eq!(answer(sup, &ci(0.03, 0.2), l, up), Answer::Shown);
        assert_eq!(answer(sup, &ci(-0.01, 0.01), l, up), Answer::ShownNot);
        assert_eq!(answer(sup, &ci(0.01, 0.05), l, up), Answer::NotShown);
        // Mirrored for latencies: a 1% higher latency is no worse than 2%.
        let down = Direction::LowerIsBetter;
        assert_eq!(answer(ni, &ci(-0.01, 0.01), l, down), Answer::Shown);
        assert_eq!(answer(ni, &ci(0.05, 0.2), l, down), Answer::ShownNot);
        assert_eq!(answer(sup, &ci(-0.2, -0.05), l, down), Answer::Shown);
        // Non-finite bounds show nothing.
        assert_eq!(answer(ni, &ci(f64::NAN, f64::NAN), l, up), Answer::NotShown);
        assert!(Answer::Shown.is_settled() && Answer::ShownNot.is_settled());
        assert!(!Answer::NotShown.is_settled());
    }

    #[test]
    fn more_cells_need_more_trials_to_pass() {
        let sd = (1.0f64 + 0.08 * 0.08).ln().sqrt();
        let l = 0.05f64.ln_1p();
        let one = trials_to_pass(sd, l, 0.05, 0.95, 1).expect("valid");
        let four = trials_to_pass(sd, l, 0.05, 0.95, 4).expect("valid");
        assert!(four > one, "{four} vs {one}");
        // 2(t(.975) + t(.95))²·σ²/L² ≈ 2·3.605²·0.0064/0.00238 ≈ 70.
        assert!((68..=72).contains(&one), "{one}");
        assert_eq!(trials_to_show(-0.06, 0.05, 0.05, 0.05, 3), None);
        let n = trials_to_show(0.0, 0.05, 0.05, 0.05, 3).expect("a count");
        assert!(n >= 4, "{n}");
    }
}
