//! Numbers in words: one formatting for the report's tables, text and axis ticks (percentages
//! are compare's, [`servebench_compare::text`]).

use servebench_compare::text::signed_pct;

/// A value with about 3–4 significant digits: `2184`, `748.1`, `17.14`, `0.125`.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "—".to_owned();
    }
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a == 0.0 {
        "0".to_owned()
    } else {
        format!("{v:.3}")
    }
}

/// An axis tick: as short as exact (`1`, `2.5`, `1000`, `0.05`).
pub fn tick(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let r = v.round();
    if (v - r).abs() <= 1e-9_f64.max(v.abs() * 1e-9) {
        return format!("{r:.0}");
    }
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A ratio as a signed change: `1.052` → `+5.2%` (compare's [`signed_pct`] of `ratio − 1`).
pub fn change(ratio: f64) -> String {
    signed_pct(ratio - 1.0)
}

/// Mean with its interval: `748.1 [736.0, 760.4]`, or `748.1 (n=2, no CI)`.
pub fn mean_ci(mean: f64, ci: Option<(f64, f64)>, n: usize) -> String {
    match ci {
        Some((lo, hi)) => format!("{} [{}, {}]", num(mean), num(lo), num(hi)),
        None => format!("{} (n={n}, no CI)", num(mean)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(num(2184.4), "2184");
        assert_eq!(num(748.06), "748.1");
        assert_eq!(num(0.1254), "0.125");
        assert_eq!(tick(31.999_999_999_99), "32");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(0.05), "0.05");
        assert_eq!(change(1.052), "+5.2%");
        assert_eq!(change(0.9), "-10.0%");
        assert_eq!(mean_ci(1.0, None, 2), "1.00 (n=2, no CI)");
    }
}
