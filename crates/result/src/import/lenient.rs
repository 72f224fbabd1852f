//! Reading the JSON Python writes: `json.dump` spells an infinite or undefined float as the
//! bare tokens `Infinity`, `-Infinity` and `NaN`, which are not JSON (RFC 8259) and which
//! serde_json rejects. Outside string literals they are rewritten to the strings
//! `"Infinity"`, `"-Infinity"` and `"NaN"` before parsing, so a field that holds one reads
//! as a string the importer can interpret (`request_rate: Infinity` is `inf`; a metric that
//! is `NaN` has no value). Nothing inside a string literal is touched.

use serde_json::Value;

/// The bare tokens rewritten, longest first so `-Infinity` wins over `Infinity`.
const TOKENS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];

/// `text` with every bare `Infinity`, `-Infinity` and `NaN` quoted.
pub fn quote_non_finite(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            rest = &rest[c.len_utf8()..];
            continue;
        }
        if c == '"' {
            in_string = true;
            out.push(c);
            rest = &rest[1..];
            continue;
        }
        if let Some(tok) = TOKENS.iter().find(|t| rest.starts_with(**t)) {
            out.push('"');
            out.push_str(tok);
            out.push('"');
            rest = &rest[tok.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Parse one JSON document that may hold Python's non-finite tokens.
pub fn parse(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str(&quote_non_finite(text))
}

/// A number read leniently: a JSON number, or one of the quoted tokens (`Infinity` →
/// +∞, `-Infinity` → −∞, `NaN` → NaN), or `"inf"` as vLLM writes an infinite rate.
pub fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "Infinity" | "inf" | "Inf" => Some(f64::INFINITY),
            "-Infinity" | "-inf" => Some(f64::NEG_INFINITY),
            "NaN" | "nan" => Some(f64::NAN),
            other => other.trim().parse::<f64>().ok(),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_tokens_are_quoted_and_strings_are_left_alone() {
        let text = r#"{"request_rate": Infinity, "low": -Infinity, "x": NaN, "s": "NaN Infinity \" Infinity", "l": [NaN, 1.5]}"#;
        let v = parse(text).expect("lenient parse");
        assert_eq!(number(&v["request_rate"]), Some(f64::INFINITY));
        assert_eq!(number(&v["low"]), Some(f64::NEG_INFINITY));
        assert!(number(&v["x"]).is_some_and(f64::is_nan));
        assert_eq!(v["s"], "NaN Infinity \" Infinity");
        assert_eq!(number(&v["l"][1]), Some(1.5));
        assert!(
            serde_json::from_str::<Value>(text).is_err(),
            "serde_json alone rejects it"
        );
    }

    #[test]
    fn vllm_inf_string_and_plain_numbers() {
        assert_eq!(number(&Value::String("inf".into())), Some(f64::INFINITY));
        assert_eq!(number(&serde_json::json!(4)), Some(4.0));
        assert_eq!(number(&Value::Null), None);
    }
}
