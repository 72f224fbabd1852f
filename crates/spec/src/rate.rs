//! `request_rate`: a number of requests per second > 0, or `inf`.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Requests per second: a finite number > 0, or `Inf` (send as fast as the concurrency
/// limit allows). `-1`, `0` and `NaN` are refused; peers used `-1` for "unlimited" and
/// crashed on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// No pacing: every request is due at time zero.
    Inf,
    /// This many requests per second on average.
    PerSecond(f64),
}

impl Rate {
    /// The rate as a number; `f64::INFINITY` for `inf`.
    pub fn as_f64(self) -> f64 {
        match self {
            Rate::Inf => f64::INFINITY,
            Rate::PerSecond(r) => r,
        }
    }
}

/// The message given for any rate that is not a number > 0 or `inf`.
pub fn rate_error_message(got: &str) -> String {
    format!(
        "request_rate must be a number of requests per second greater than 0, or `inf`; got `{got}`. \
         To send requests as fast as the concurrency limit allows, write `request_rate: inf` (not -1 or 0)"
    )
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rate::Inf => f.write_str("inf"),
            Rate::PerSecond(r) => write!(f, "{r}"),
        }
    }
}

impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Rate::Inf => s.serialize_str("inf"),
            Rate::PerSecond(r) => s.serialize_f64(*r),
        }
    }
}

struct RateVisitor;

impl Visitor<'_> for RateVisitor {
    type Value = Rate;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number > 0 or the string `inf`")
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Rate, E> {
        if v.is_finite() && v > 0.0 {
            Ok(Rate::PerSecond(v))
        } else if v == f64::INFINITY {
            Ok(Rate::Inf)
        } else {
            Err(E::custom(rate_error_message(&v.to_string())))
        }
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Rate, E> {
        self.visit_f64(v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Rate, E> {
        self.visit_f64(v as f64)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Rate, E> {
        match v {
            "inf" => Ok(Rate::Inf),
            other => Err(E::custom(rate_error_message(other))),
        }
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RateVisitor)
    }
}

impl JsonSchema for Rate {
    fn schema_name() -> Cow<'static, str> {
        "Rate".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Requests per second: a number > 0, or `inf` for no pacing.",
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0},
                {"const": "inf"}
            ]
        })
    }
}
