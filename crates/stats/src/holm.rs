//! Holm's step-down correction for many tests (metrics × sweep levels).
//!
//! Method: sort the m p-values ascending, `p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j))`;
//! reject where `p̃ < α`. Controls the family-wise error rate at α under any dependence. The
//! number of false alarms expected among m uncorrected tests when no difference is real is
//! `m·α`. Reference: S. Holm, "A simple sequentially rejective multiple test procedure",
//! Scand. J. Statist. 6, 1979; statsmodels `multipletests(method="holm")`.

use crate::error::{StatsError, check_probability};

/// Holm-adjusted p-values, in the input order. Errors on a p outside [0, 1].
pub fn holm_adjust(p_values: &[f64]) -> Result<Vec<f64>, StatsError> {
    if let Some(&p) = p_values
        .iter()
        .find(|p| !(p.is_finite() && (0.0..=1.0).contains(*p)))
    {
        return Err(StatsError::InvalidParameter {
            name: "p",
            value: p,
            why: "a p-value must lie in [0, 1]",
        });
    }
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0f64;
    for (j, &i) in order.iter().enumerate() {
        let candidate = ((m - j) as f64 * p_values[i]).min(1.0);
        running = running.max(candidate);
        adjusted[i] = running;
    }
    Ok(adjusted)
}

/// The level each test is read at under Holm's step-down procedure at `alpha`, in the input
/// order: `p_i < level_i` exactly when Holm rejects test i. Sorted ascending, the j-th test
/// (from 1) of the rejected run is read at `α/(m − j + 1)`; every test from the first one
/// not rejected on is read at that test's level, `α/(m − k + 1)`, which its p (and every
/// larger p) does not reach. A fixed-level verdict rule given `level_i` in place of `α`
/// therefore decides exactly what Holm's adjusted p-values decide. Errors on a p outside
/// [0, 1] or `alpha` outside (0, 1).
pub fn holm_levels(p_values: &[f64], alpha: f64) -> Result<Vec<f64>, StatsError> {
    check_probability("alpha", alpha)?;
    let adjusted = holm_adjust(p_values)?;
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut levels = vec![0.0; m];
    let mut stopped: Option<f64> = None;
    for (j, &i) in order.iter().enumerate() {
        let own = alpha / (m - j) as f64;
        let level = match stopped {
            Some(l) => l,
            None if adjusted[i] < alpha => own,
            None => {
                stopped = Some(own);
                own
            }
        };
        levels[i] = level;
    }
    Ok(levels)
}

/// Expected number of false alarms among `m` tests each run at level `alpha` when no
/// difference is real: `m·α`.
pub fn expected_false_alarms(m: usize, alpha: f64) -> Result<f64, StatsError> {
    check_probability("alpha", alpha)?;
    Ok(m as f64 * alpha)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_example() {
        // Holm (1979)-style: p = [0.01, 0.04, 0.03, 0.005], m = 4.
        let adj = holm_adjust(&[0.01, 0.04, 0.03, 0.005]).expect("valid");
        // sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 → max 0.06
        let want = [0.03, 0.06, 0.06, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-15, "{a} vs {w}");
        }
        assert!(holm_adjust(&[1.5]).is_err());
        assert_eq!(holm_adjust(&[]).expect("valid"), Vec::<f64>::new());
    }

    #[test]
    fn levels_decide_what_the_adjusted_p_values_decide() {
        let cases: [&[f64]; 4] = [
            &[0.01, 0.04, 0.03, 0.005],
            &[0.001, 0.012, 0.2, 0.003, 0.04, 0.0001],
            &[0.9, 0.8],
            &[0.0, 0.0, 1.0],
        ];
        for p in cases {
            let adj = holm_adjust(p).expect("valid");
            let lev = holm_levels(p, 0.05).expect("valid");
            for ((pi, a), l) in p.iter().zip(&adj).zip(&lev) {
                assert_eq!(
                    *pi < *l,
                    *a < 0.05,
                    "p {pi}, adjusted {a}, level {l} in {p:?}"
                );
                assert!(*l <= 0.05 && *l >= 0.05 / p.len() as f64);
            }
        }
        // The textbook case: 0.005 at α/4, 0.01 at α/3, then 0.03 fails α/2: 0.03 and 0.04
        // are both read at α/2.
        let lev = holm_levels(&[0.01, 0.04, 0.03, 0.005], 0.05).expect("valid");
        let want = [0.05 / 3.0, 0.025, 0.025, 0.0125];
        for (a, w) in lev.iter().zip(want) {
            assert!((a - w).abs() < 1e-15, "{a} vs {w}");
        }
    }
}
