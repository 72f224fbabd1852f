//! Numbers in words: one formatting for the tables, the CSV-free text and the axis ticks.

/// A value with about 3–4 significant digits: `2184`, `748.1`, `17.14`, `0.125`.
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

/// A ratio as a signed change: `1.052` → `+5.2%`.
pub fn change(ratio: f64) -> String {
    format!("{:+.1}%", (ratio - 1.0) * 100.0)
}

/// A fraction as a percentage without sign: `0.02` → `2%`, `0.025` → `2.5%`.
pub fn pct(fraction: f64) -> String {
    let v = fraction * 100.0;
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}%")
    } else {
        format!("{v:.1}%")
    }
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
        assert_eq!(pct(0.025), "2.5%");
        assert_eq!(mean_ci(1.0, None, 2), "1.00 (n=2, no CI)");
    }
}
