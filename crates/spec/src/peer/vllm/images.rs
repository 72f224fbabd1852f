//! vLLM's image datasets as servebench's `image` dataset and image prompt files: vLLM 0.33.0
//! `benchmarks/datasets/datasets.py` `RandomMultiModalDataset` (`random-mm`: random token
//! ids with random RGB images, each sent as a JPEG data URL by `process_image`, its count and
//! size drawn per request) and `CustomImageDataset` (`custom_image`: a JSONL of `prompt` with
//! `image_files`, or `content` parts — servebench's `jsonl` reads both layouts).

use crate::peer::draft::DraftImage;
use crate::peer::table::Lines;
use crate::peer::{PeerError, Values};

/// What `--dataset-name custom_image` becomes.
pub(super) const CUSTOM_IMAGE: &str = "workload.dataset.kind: jsonl — servebench reads vLLM's \
     custom_image lines ({\"prompt\": …, \"image_files\": […]} or {\"content\": […]}) and sends \
     their images as image_url parts after the text, as vLLM does; an image path is read by \
     servebench, relative to the prompt file, and sent as a data URL";

/// `--custom-ensure-client-side-data`: vLLM reads local and http(s) images itself; without
/// it, it sends a path as a `file://` URL for the server to read. servebench reads files
/// itself always and sends `http(s)` URLs as written.
pub(super) fn client_side(v: &Values<'_>, lines: &mut Lines) {
    let flag = "--custom-ensure-client-side-data";
    if v.has(flag) {
        lines.mapped(
            flag,
            v,
            "image files are read by servebench and sent as data URLs (http(s) URLs are sent \
             as written: the server fetches them)",
        );
    } else {
        lines.tool_default(
            flag,
            "off",
            "vLLM sends an image path as a file:// URL for the server to read (relative to the \
             server's folder); servebench reads it itself, relative to the prompt file",
        );
    }
}

/// vLLM's default `--random-mm-bucket-config` (`DEFAULT_MM_ITEM_BUCKET_CONFIG`).
const DEFAULT_BUCKETS: &str = "{(256, 256, 1): 0.5, (720, 1280, 1): 0.5, (720, 1280, 16): 0.0}";

/// One bucket: height, width, frames, and its weight.
type Bucket = (u32, u32, u32, f64);

/// `--random-mm-bucket-config`, `--random-mm-base-items-per-request`,
/// `--random-mm-num-mm-items-range-ratio` and `--random-mm-limit-mm-per-prompt` as the images
/// of an `image` dataset: one size and one count for every request, where vLLM's flags fix
/// them; what they draw per request is refused, written as its most likely size and its base
/// count.
pub(super) fn random_mm(v: &Values<'_>, lines: &mut Lines) -> Result<DraftImage, PeerError> {
    let flag = "--random-mm-bucket-config";
    let given = v.str(flag);
    let buckets = buckets(given.unwrap_or(DEFAULT_BUCKETS)).map_err(|why| PeerError::BadValue {
        flag: flag.into(),
        value: given.unwrap_or_default().into(),
        why,
    })?;
    let live: Vec<Bucket> = buckets.iter().copied().filter(|b| b.3 > 0.0).collect();
    let images: Vec<Bucket> = live.iter().copied().filter(|b| b.2 == 1).collect();
    let video = live.iter().any(|b| b.2 > 1);
    let (height, width, _, _) = images
        .iter()
        .copied()
        .fold(None::<Bucket>, |best, b| match best {
            Some(x) if x.3 >= b.3 => Some(x),
            _ => Some(b),
        })
        .unwrap_or((256, 256, 1, 1.0));
    let size = format!("workload.dataset.image: width {width}, height {height}");
    if video || images.len() != 1 {
        let why = if video {
            "servebench sends no video (a bucket with more than one frame)".to_owned()
        } else if images.is_empty() {
            "no image bucket has a weight above 0".to_owned()
        } else {
            format!(
                "vLLM draws each image's size from {} buckets; servebench sends one size \
                 (give one bucket, e.g. '{{({height}, {width}, 1): 1.0}}')",
                images.len()
            )
        };
        let text = format!("{why}; written as {size}");
        if given.is_some() {
            lines.refused(flag, v, text);
        } else {
            lines.refused_default(flag, DEFAULT_BUCKETS, text);
        }
    } else {
        lines.given_or_default(flag, v, DEFAULT_BUCKETS, format!("{size} (vLLM's HxW)"));
    }
    let count = count(v, lines)?;
    Ok((count, width, height))
}

/// The images per request: vLLM draws it from [⌊n·(1−r)⌋, min(⌈n·(1+r)⌉, the sum of the
/// limits)] (`get_mm_item_sampling_params`); servebench sends `n` with every request.
fn count(v: &Values<'_>, lines: &mut Lines) -> Result<u32, PeerError> {
    let base_flag = "--random-mm-base-items-per-request";
    let ratio_flag = "--random-mm-num-mm-items-range-ratio";
    let limit_flag = "--random-mm-limit-mm-per-prompt";
    let n = crate::peer::common::u32_of(v, base_flag, 1)?;
    let r = v.float(ratio_flag)?.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&r) {
        return Err(PeerError::BadValue {
            flag: ratio_flag.into(),
            value: r.to_string(),
            why: "vLLM 0.33.0 stops with `num_mm_items_range_ratio must be in [0, 1]`".into(),
        });
    }
    let limit = image_limit(v.str(limit_flag)).map_err(|why| PeerError::BadValue {
        flag: limit_flag.into(),
        value: v.str(limit_flag).unwrap_or_default().into(),
        why,
    })?;
    let lo = (f64::from(n) * (1.0 - r)).floor() as u64;
    let hi = ((f64::from(n) * (1.0 + r)).ceil() as u64).min(u64::from(limit));
    let count = n.min(limit);
    if lo > hi {
        lines.refused(
            limit_flag,
            v,
            format!(
                "vLLM 0.33.0 stops with `Min num mm items is greater than max mm items: {lo} > \
                 {hi}`; written as {count} image(s) a request"
            ),
        );
    } else if v.has(limit_flag) {
        lines.mapped(limit_flag, v, format!("at most {limit} image(s) a request"));
    }
    let text = format!("workload.dataset.image.count: {count}");
    if lo < hi {
        lines.refused(
            ratio_flag,
            v,
            format!(
                "vLLM draws each request's image count from [{lo}, {hi}]; servebench sends the \
                 same number with every request; written as {text}"
            ),
        );
        lines.given_or_default(base_flag, v, "1", text);
    } else {
        lines.given_or_default(base_flag, v, "1", text);
        if v.has(ratio_flag) {
            lines.mapped(ratio_flag, v, format!("{r}: the same count every request"));
        }
    }
    Ok(count)
}

/// The image cap of `--random-mm-limit-mm-per-prompt` (JSON, e.g. `{"image": 3, "video":
/// 0}`; default 255). The video cap is not read: servebench sends no video.
fn image_limit(s: Option<&str>) -> Result<u32, String> {
    let Some(s) = s else {
        return Ok(255);
    };
    let v: serde_json::Value =
        serde_json::from_str(s).map_err(|e| format!("JSON, e.g. '{{\"image\": 3}}' ({e})"))?;
    match v.get("image") {
        None => Err(
            "vLLM needs an `image` limit for image buckets (`Modality image is not in \
                     limit_mm_per_prompt`)"
                .into(),
        ),
        Some(n) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("`image` is a count of images, not {n}")),
    }
}

/// The buckets of a `--random-mm-bucket-config` value, a Python dict literal of `(height,
/// width, frames): weight` (keys may be quoted, as vLLM's `literal_eval` of string keys
/// takes them).
fn buckets(s: &str) -> Result<Vec<Bucket>, String> {
    let shape = "a dict of (height, width, frames): weight, e.g. '{(256, 256, 1): 1.0}'";
    let body = s.trim();
    let body = body
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .ok_or_else(|| shape.to_owned())?;
    let clean: String = body.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
    let mut out = Vec::new();
    let mut rest = clean.as_str();
    while let Some(open) = rest.find('(') {
        let close = rest[open..]
            .find(')')
            .map(|c| open + c)
            .ok_or_else(|| shape.to_owned())?;
        let dims: Vec<u32> = rest[open + 1..close]
            .split(',')
            .map(|x| x.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("a key is three whole numbers: {shape}"))?;
        let [h, w, t] = dims[..] else {
            return Err(format!("a key is (height, width, frames): {shape}"));
        };
        let after = rest[close + 1..].trim_start();
        let after = after.strip_prefix(':').ok_or_else(|| shape.to_owned())?;
        let end = after.find(',').unwrap_or(after.len());
        let weight: f64 = after[..end]
            .trim()
            .parse()
            .map_err(|_| format!("a weight is a number: {shape}"))?;
        if weight < 0.0 {
            return Err(
                "vLLM 0.33.0 stops with `Bucket config values must be non-negative`".into(),
            );
        }
        if t == 0 || h == 0 || w == 0 {
            return Err(format!("({h}, {w}, {t}) is not a size vLLM draws"));
        }
        out.push((h, w, t, weight));
        rest = &after[end..];
    }
    if out.iter().all(|b| b.3 <= 0.0) {
        return Err(
            "vLLM 0.33.0 stops with `Bucket config values must be non-zero`: give one weight \
             above 0"
                .into(),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_configs_are_read_as_vllm_reads_them() {
        assert_eq!(
            buckets(DEFAULT_BUCKETS).expect("default"),
            [
                (256, 256, 1, 0.5),
                (720, 1280, 1, 0.5),
                (720, 1280, 16, 0.0)
            ]
        );
        assert_eq!(
            buckets("{\"(16, 8, 1)\": 1}").expect("quoted key"),
            [(16, 8, 1, 1.0)]
        );
        for bad in [
            "(1, 2, 1): 1",
            "{(1, 2): 1}",
            "{(1, 2, 1): -1}",
            "{(1, 2, 1): 0}",
        ] {
            assert!(buckets(bad).is_err(), "{bad}");
        }
        assert_eq!(image_limit(Some("{\"image\": 3, \"video\": 0}")), Ok(3));
        assert!(image_limit(Some("{\"video\": 1}")).is_err());
    }
}
