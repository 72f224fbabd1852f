//! Python `repr()` of the values the Python engines log (SGLang's `server_args`, vLLM's
//! non-default args), and their log timestamps.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

/// A Python value, for its `repr()`.
#[derive(Debug, Clone, PartialEq)]
pub enum Py {
    /// A `str`: `'text'`.
    Str(String),
    /// An `int`.
    Int(i64),
    /// A `float`: `1.0`, `0.5`.
    Float(f64),
    /// `True`, `False`.
    Bool(bool),
    /// `None`.
    None,
    /// A list: `[…]`.
    List(Vec<Py>),
    /// A dict, keys (strings) in insertion order.
    Dict(Vec<(String, Py)>),
    /// A dataclass: `Name(field=value, …)`.
    Dataclass(&'static str, Vec<(String, Py)>),
}

impl Py {
    /// A `str` of `s`.
    pub fn str(s: &str) -> Py {
        Py::Str(s.to_owned())
    }

    /// Its `repr()`.
    pub fn repr(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Py::Str(s) => write_str(s, out),
            Py::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Py::Float(x) => out.push_str(&float(*x)),
            Py::Bool(true) => out.push_str("True"),
            Py::Bool(false) => out.push_str("False"),
            Py::None => out.push_str("None"),
            Py::List(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Py::Dict(items) => {
                out.push('{');
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_str(k, out);
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
            Py::Dataclass(name, fields) => {
                out.push_str(name);
                out.push('(');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(k);
                    out.push('=');
                    v.write(out);
                }
                out.push(')');
            }
        }
    }
}

/// A Python string literal: single quotes unless the text holds one and no double quote.
fn write_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's float repr for the plain values logged here: `1.0`, `0.025`, `1e-05`.
fn float(x: f64) -> String {
    if x.is_finite() && x == x.trunc() && x.abs() < 1e16 {
        return format!("{x:.1}");
    }
    let s = format!("{x}");
    if x != 0.0 && x.abs() < 1e-4 {
        // Python switches to exponent form below 1e-4: 1e-05.
        let e = format!("{x:e}");
        if let Some((m, exp)) = e.split_once('e') {
            let n: i32 = exp.parse().unwrap_or(0);
            return format!("{m}e{}{:02}", if n < 0 { '-' } else { '+' }, n.abs());
        }
    }
    s
}

/// UTC now in a strftime-like pattern of `%Y %m %d %H %M %S` (the engines print local time;
/// the simulator prints UTC).
pub fn now(pattern: &str) -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format_utc(secs, pattern)
}

/// `secs` since the epoch, UTC, in the pattern.
pub fn format_utc(secs: u64, pattern: &str) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    pattern
        .replace("%Y", &format!("{y:04}"))
        .replace("%m", &format!("{m:02}"))
        .replace("%d", &format!("{d:02}"))
        .replace("%H", &format!("{:02}", rem / 3600))
        .replace("%M", &format!("{:02}", rem % 3600 / 60))
        .replace("%S", &format!("{:02}", rem % 60))
}

/// (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_reprs() {
        let d = Py::Dict(vec![
            ("model_path".into(), Py::str("org/m")),
            ("tp_size".into(), Py::Int(8)),
            ("mem".into(), Py::Float(0.88)),
            ("ratio".into(), Py::Float(1.0)),
            ("tiny".into(), Py::Float(0.00001)),
            ("flag".into(), Py::Bool(true)),
            ("none".into(), Py::None),
            ("names".into(), Py::List(vec![Py::str("it's")])),
        ]);
        assert_eq!(
            d.repr(),
            "{'model_path': 'org/m', 'tp_size': 8, 'mem': 0.88, 'ratio': 1.0, 'tiny': 1e-05, \
             'flag': True, 'none': None, 'names': [\"it's\"]}"
        );
        let c = Py::Dataclass(
            "ServerArgs",
            vec![("moe_runner_backend".into(), Py::str("flashinfer_cutedsl"))],
        );
        assert_eq!(
            c.repr(),
            "ServerArgs(moe_runner_backend='flashinfer_cutedsl')"
        );
    }

    #[test]
    fn utc_dates() {
        assert_eq!(format_utc(0, "%Y-%m-%d %H:%M:%S"), "1970-01-01 00:00:00");
        // 2026-12-01 08:31:05 UTC
        assert_eq!(
            format_utc(1_796_113_865, "%m-%d %H:%M:%S"),
            "12-01 08:31:05"
        );
        assert_eq!(format_utc(951_782_400, "%Y-%m-%d"), "2000-02-29");
    }
}
