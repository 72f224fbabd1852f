//! Numbers, percentages and aligned columns, as `compare` and `rerun` print them (the report
//! uses the percentages too).

use servebench_stats::Estimate;
use servebench_stats::verdict::Scale;

/// Rows of cells (the first is the header) as lines with aligned columns: two spaces in
/// front, one between columns, trailing blanks trimmed.
pub fn aligned<const N: usize>(rows: &[[String; N]]) -> Vec<String> {
    let mut width = [0usize; N];
    for row in rows {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let mut s = String::from(" ");
            for (c, w) in row.iter().zip(width) {
                s.push(' ');
                s.push_str(c);
                s.extend(std::iter::repeat_n(
                    ' ',
                    w.saturating_sub(c.chars().count()),
                ));
            }
            s.trim_end().to_owned()
        })
        .collect()
}

/// A number with 4 significant figures at most, no exponent for ordinary magnitudes.
pub fn num(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "—".into()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.001 || a == 0.0 {
        format!("{v:.4}")
    } else {
        format!("{v:.2e}")
    }
}

/// `0.0213` → `"+2.1%"`.
pub fn signed_pct(fraction: f64) -> String {
    format!("{:+.1}%", fraction * 100.0)
}

/// `0.05` → `"5%"`, `0.025` → `"2.5%"`.
pub fn pct(fraction: f64) -> String {
    let v = fraction * 100.0;
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}%")
    } else {
        format!("{v:.1}%")
    }
}

/// A p-value: 3 decimals, scientific below 0.001.
pub fn p_value(p: f64) -> String {
    if p < 1e-15 {
        "<1e-15".into()
    } else if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// An effect with its CI: `+2.1% [+0.4%, +3.9%]` on the log scale (the ratio − 1),
/// `+1.50 [−0.20, +3.20]` on the arithmetic scale; `—` without one.
pub(crate) fn change(scale: Scale, e: Option<&Estimate>) -> String {
    let Some(e) = e else {
        return "—".into();
    };
    match scale {
        Scale::Log => format!(
            "{} [{}, {}]",
            signed_pct(e.point - 1.0),
            signed_pct(e.ci.lower - 1.0),
            signed_pct(e.ci.upper - 1.0)
        ),
        Scale::Arithmetic => format!(
            "{} [{}, {}]",
            signed_num(e.point),
            signed_num(e.ci.lower),
            signed_num(e.ci.upper)
        ),
    }
}

fn signed_num(v: f64) -> String {
    if v >= 0.0 {
        format!("+{}", num(v))
    } else {
        num(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_percentages() {
        assert_eq!(num(3071.9), "3072");
        assert_eq!(num(452.94), "452.9");
        assert_eq!(num(3.384), "3.38");
        assert_eq!(num(0.0), "0.0000");
        assert_eq!(signed_pct(-0.213), "-21.3%");
        assert_eq!(pct(0.02), "2%");
        assert_eq!(pct(0.025), "2.5%");
        assert_eq!(p_value(0.0004), "4.0e-4");
    }

    #[test]
    fn columns_are_aligned() {
        let rows = [
            ["a".to_owned(), "bb".to_owned()],
            ["ccc".to_owned(), "d".to_owned()],
        ];
        assert_eq!(aligned(&rows), ["  a   bb", "  ccc d"]);
    }
}
