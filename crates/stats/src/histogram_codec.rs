//! Histograms in result files: base64 (standard alphabet, padded) of the HdrHistogram V2
//! compressed format (zlib/deflate), the format HdrHistogram's Java, C, Go and Python ports
//! read with `decodeFromCompressedByteBuffer` / `decode`.
//!
//! Method: `hdrhistogram::serialization::V2DeflateSerializer` and `Deserializer`.
//! Reference: HdrHistogram "V2 encoding" (github.com/HdrHistogram/HdrHistogram, `EncodableHistogram`).
//!
//! For a struct field, use the serde adapter:
//! `#[serde(with = "servebench_stats::histogram_codec::base64_v2")] ttft: Histogram<u64>`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};

use crate::error::StatsError;

/// Encode a histogram as base64 of its V2 deflate serialization.
pub fn encode_histogram(h: &Histogram<u64>) -> Result<String, StatsError> {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .map_err(|e| StatsError::Histogram(format!("V2 deflate serialization failed: {e:?}")))?;
    Ok(STANDARD.encode(buf))
}

/// Decode a histogram written by [`encode_histogram`] (or by another HdrHistogram port's V2
/// compressed encoder). The result auto-resizes, so merging it with others cannot overflow.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, StatsError> {
    let bytes = STANDARD
        .decode(text.trim())
        .map_err(|e| StatsError::HistogramDecode(format!("base64: {e}")))?;
    let mut h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| StatsError::HistogramDecode(format!("V2: {e:?}")))?;
    h.auto(true);
    Ok(h)
}

/// serde adapter: a `Histogram<u64>` field as a base64 V2-deflate string.
pub mod base64_v2 {
    use hdrhistogram::Histogram;
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _, ser::Error as _};

    /// Serialize as a base64 string.
    pub fn serialize<S: Serializer>(h: &Histogram<u64>, s: S) -> Result<S::Ok, S::Error> {
        let text = super::encode_histogram(h).map_err(S::Error::custom)?;
        s.serialize_str(&text)
    }

    /// Deserialize from a base64 string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Histogram<u64>, D::Error> {
        let text = String::deserialize(d)?;
        super::decode_histogram(&text).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::histogram_from_values;

    #[test]
    fn round_trip_keeps_every_count() {
        let h = histogram_from_values(&[1, 5, 5, 1000, 123_456, 9_999_999], 3).expect("valid");
        let text = encode_histogram(&h).expect("encodes");
        let back = decode_histogram(&text).expect("decodes");
        assert_eq!(back, h);
        assert_eq!(back.len(), 6);
        assert_eq!(back.sigfig(), 3);
    }

    #[test]
    fn garbage_is_a_typed_error() {
        assert!(matches!(
            decode_histogram("not base64!"),
            Err(StatsError::HistogramDecode(_))
        ));
        assert!(matches!(
            decode_histogram("AAAA"),
            Err(StatsError::HistogramDecode(_))
        ));
    }

    #[test]
    fn serde_adapter() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Trial {
            #[serde(with = "base64_v2")]
            ttft: Histogram<u64>,
        }
        let t = Trial {
            ttft: histogram_from_values(&[10, 20, 30], 3).expect("valid"),
        };
        let json = serde_json::to_string(&t).expect("serializes");
        let back: Trial = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(back.ttft, t.ttft);
    }
}
