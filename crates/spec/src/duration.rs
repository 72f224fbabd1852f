//! Human-written durations: `500ms`, `10s`, `2m`, `1h`, `1.5s`.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Regular expression every duration string matches (also used by the JSON Schema).
pub const DURATION_PATTERN: &str = r"^[0-9]+(\.[0-9]+)?(ms|s|m|h)$";

/// A duration written as a number and a unit (`ms`, `s`, `m`, `h`), e.g. `10s`.
///
/// Serialised back in a canonical form (the unit as written is kept, the number is
/// normalised), so the spec hash does not depend on `10s` vs `10.0s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HumanDuration(Duration);

impl HumanDuration {
    /// Wrap a duration.
    pub const fn new(d: Duration) -> Self {
        Self(d)
    }
    /// From whole seconds.
    pub const fn from_secs(s: u64) -> Self {
        Self(Duration::from_secs(s))
    }
    /// From whole milliseconds.
    pub const fn from_millis(ms: u64) -> Self {
        Self(Duration::from_millis(ms))
    }
    /// The wrapped duration.
    pub const fn get(self) -> Duration {
        self.0
    }
    /// Whether the duration is zero.
    pub fn is_zero(self) -> bool {
        self.0.is_zero()
    }
}

/// Why a duration string was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurationError(pub String);

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a duration: write a number followed by a unit, e.g. `500ms`, `10s`, `2m` or `1h`",
            self.0
        )
    }
}

impl std::error::Error for DurationError {}

impl FromStr for HumanDuration {
    type Err = DurationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || DurationError(s.to_owned());
        let t = s.trim();
        let (num, unit_ms) = if let Some(n) = t.strip_suffix("ms") {
            (n, 1e-3)
        } else if let Some(n) = t.strip_suffix('s') {
            (n, 1.0)
        } else if let Some(n) = t.strip_suffix('m') {
            (n, 60.0)
        } else if let Some(n) = t.strip_suffix('h') {
            (n, 3600.0)
        } else {
            return Err(err());
        };
        if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return Err(err());
        }
        let v: f64 = num.parse().map_err(|_| err())?;
        let secs = v * unit_ms;
        if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
            return Err(err());
        }
        Ok(Self(Duration::from_secs_f64(secs)))
    }
}

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        let sub_ms = !self.0.subsec_nanos().is_multiple_of(1_000_000);
        if sub_ms {
            write!(f, "{}ms", self.0.as_secs_f64() * 1e3)
        } else if ms.is_multiple_of(3_600_000) && ms > 0 {
            write!(f, "{}h", ms / 3_600_000)
        } else if ms.is_multiple_of(60_000) && ms > 0 {
            write!(f, "{}m", ms / 60_000)
        } else if ms.is_multiple_of(1000) {
            write!(f, "{}s", ms / 1000)
        } else {
            write!(f, "{ms}ms")
        }
    }
}

impl Serialize for HumanDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for HumanDuration {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": DURATION_PATTERN,
            "description": "A duration: a number and a unit (ms, s, m, h), e.g. `500ms`, `10s`, `2m`.",
            "examples": ["500ms", "10s", "15m"]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        let cases = [
            ("10s", 10_000),
            ("500ms", 500),
            ("2m", 120_000),
            ("1h", 3_600_000),
            ("1.5s", 1500),
        ];
        for (s, ms) in cases {
            let d: HumanDuration = s.parse().expect(s);
            assert_eq!(d.get().as_millis(), ms, "{s}");
        }
        assert_eq!(HumanDuration::from_millis(1500).to_string(), "1500ms");
        assert_eq!(HumanDuration::from_secs(900).to_string(), "15m");
        assert_eq!(HumanDuration::from_secs(0).to_string(), "0s");
        for bad in ["10", "s", "-1s", "10 sec", "1e3s", ""] {
            assert!(bad.parse::<HumanDuration>().is_err(), "{bad}");
        }
    }
}
