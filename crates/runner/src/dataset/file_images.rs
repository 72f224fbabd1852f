//! Images in prompt-file lines (`jsonl` and `sharegpt`), in the layouts users already have:
//! an `images` list (vLLM's `custom_image` calls it `image_files`; LLaVA-style ShareGPT
//! entries `image`), and OpenAI-style `content` arrays whose `image_url` parts sit among the
//! text (vLLM's `{"type": "image", "image": …}` part too). Each image is a file path
//! relative to the prompt file, an `http(s)` URL (sent as written: the server fetches it)
//! or a `data:image/…;base64,` URL. Files are read and encoded as data URLs before the
//! trial ([`encode_files`]), never while sending; a line's images go in its last user
//! message, as `image_url` parts of `openai-chat`.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

use super::DatasetError;
use super::prompt::{ChatMessage, ContentPart};

/// Where to write images, said in every refusal.
const WRITE: &str = "write a file path relative to the prompt file, an http(s) URL, or a \
                     data URL (data:image/png;base64,…)";

/// Why a line with images cannot be an equivalence prompt.
pub const IMAGES_IN_PROBE: &str = "the line has images, but the equivalence probe \
     sends text prompts (it compares answers to the same text): take the images out of this \
     file, or leave the line out";

/// One image of a prompt line, as the line names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageSource {
    /// Sent as written: an `http(s)` URL, or a data URL (checked when the line is read).
    Url(String),
    /// A local file, read and encoded by [`encode_files`].
    File {
        /// The file, joined to the prompt file's folder.
        path: PathBuf,
        /// The path as the line wrote it (relative to the prompt file).
        written: String,
    },
}

/// The images of one line, and where they go among its last user message's text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineImages {
    /// Every image, in the order sent.
    pub images: Vec<ImageSource>,
    /// The last user message's parts in the line's order; `None`: its text, then `images`.
    pub parts: Option<Vec<ContentPart>>,
}

/// The image a line names with `reference` (`dir`: the prompt file's folder).
pub fn source(reference: &str, dir: &Path) -> Result<ImageSource, String> {
    let r = reference.trim();
    if r.is_empty() {
        return Err(format!("an image is an empty string: {WRITE}"));
    }
    if r.starts_with("data:") {
        check_data_url(r)?;
        return Ok(ImageSource::Url(r.to_owned()));
    }
    if r.starts_with("http://") || r.starts_with("https://") {
        return Ok(ImageSource::Url(r.to_owned()));
    }
    let path = r.strip_prefix("file://").unwrap_or(r);
    if let Some((scheme, _)) = path.split_once("://") {
        return Err(format!(
            "image `{}`: servebench does not fetch `{scheme}://` URLs; {WRITE}",
            clip(r)
        ));
    }
    Ok(ImageSource::File {
        path: dir.join(path),
        written: path.to_owned(),
    })
}

/// A data URL servebench can send: `data:image/<type>;base64,<payload>` whose payload is
/// base64 that decodes to something.
fn check_data_url(url: &str) -> Result<(), String> {
    let bad = |why: &str| format!("the data URL `{}` {why}; {WRITE}", clip(url));
    let rest = &url["data:".len()..];
    let Some((meta, payload)) = rest.split_once(',') else {
        return Err(bad("has no `,` before its bytes"));
    };
    let Some(mime) = meta.strip_suffix(";base64") else {
        return Err(bad("is not base64 (`;base64,` before the bytes)"));
    };
    if !mime.starts_with("image/") || mime.len() <= "image/".len() {
        return Err(bad("is not an image (its type must be image/…)"));
    }
    match base64::engine::general_purpose::STANDARD.decode(payload.trim()) {
        Ok(b) if b.is_empty() => Err(bad("holds no bytes")),
        Ok(_) => Ok(()),
        Err(e) => Err(bad(&format!("is not valid base64 ({e})"))),
    }
}

/// The start of a long reference, for messages (a data URL can be megabytes).
fn clip(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// Reads every local image of `images` (a line at `line` of `file`) and makes it a data URL,
/// so that nothing is read while sending. A file that cannot be read, or is not an image
/// servebench recognises by its first bytes, is refused at the line that names it.
pub fn encode_files(
    images: &mut [ImageSource],
    file: &Path,
    line: usize,
) -> Result<(), DatasetError> {
    for img in images.iter_mut() {
        let ImageSource::File { path, written } = img else {
            continue;
        };
        let bad = |message: String| DatasetError::Parse {
            path: file.to_owned(),
            line,
            message,
        };
        let bytes = std::fs::read(&*path).map_err(|e| {
            bad(format!(
                "image `{written}` cannot be read ({e}; looked for {}): the path is relative \
                 to the prompt file; fix it, or {WRITE}",
                path.display()
            ))
        })?;
        let Some(mime) = mime_of(&bytes) else {
            return Err(bad(format!(
                "image `{written}` is not a PNG, JPEG, GIF, WebP or BMP file (by its first \
                 bytes): convert it to one of those"
            )));
        };
        if cut_short(&bytes, mime) {
            return Err(bad(format!(
                "image `{written}` ({} bytes) is cut short: a {mime} file ends with its end \
                 marker, and this one does not (a copy or a download that stopped); copy it \
                 again",
                bytes.len()
            )));
        }
        *img = ImageSource::Url(format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&bytes)
        ));
    }
    Ok(())
}

/// Whether a PNG, JPEG or GIF lacks the marker its last bytes hold when whole (`IEND`, the
/// JPEG end of image `FF D9`, the GIF trailer `3B`; a little padding after it allowed):
/// a server refuses such a file, one request at a time.
fn cut_short(bytes: &[u8], mime: &str) -> bool {
    let tail = &bytes[bytes.len().saturating_sub(32)..];
    match mime {
        "image/png" => !tail.windows(4).any(|w| w == b"IEND"),
        "image/jpeg" => !tail.windows(2).any(|w| w == [0xff, 0xd9]),
        "image/gif" => !tail.contains(&0x3b),
        _ => false,
    }
}

/// The image type of `bytes`, by their signature.
fn mime_of(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', ..] => Some("image/gif"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("image/webp"),
        [b'B', b'M', ..] if bytes.len() > 54 => Some("image/bmp"),
        _ => None,
    }
}

/// One chat message of a prompt line as written: `content` a string or an array of parts.
#[derive(Debug, Deserialize)]
pub struct RawMessage {
    role: String,
    content: Value,
}

impl RawMessage {
    /// A user message of `content` (vLLM's `custom_image` line is one).
    pub fn user(content: Value) -> Self {
        RawMessage {
            role: "user".into(),
            content,
        }
    }
}

/// The messages of a line as servebench sends them, with their images: images may be parts
/// of the last user message only (servebench sends a line's images there); `listed` (the
/// line's `images`) go after that message's parts.
pub fn messages(
    raw: Vec<RawMessage>,
    listed: &[String],
    dir: &Path,
) -> Result<(Vec<ChatMessage>, LineImages), String> {
    let last_user = raw.iter().rposition(|m| m.role == "user");
    let mut out = Vec::with_capacity(raw.len());
    let mut images = LineImages::default();
    for (i, m) in raw.into_iter().enumerate() {
        let content = match m.content {
            Value::String(s) => s,
            Value::Array(parts) => {
                let (text, layout, found) = content_parts(&parts, i, dir)?;
                if found.is_empty() {
                    text
                } else if Some(i) != last_user {
                    return Err(format!(
                        "message {} ({}) has image parts: servebench sends a line's images \
                         with its last user message; move them there",
                        i + 1,
                        m.role
                    ));
                } else {
                    images.images = found;
                    images.parts = Some(layout);
                    text
                }
            }
            other => {
                return Err(format!(
                    "message {}'s `content` is {}: write a string, or an array of \
                     {{\"type\": \"text\", \"text\": \"…\"}} and {{\"type\": \"image_url\", \
                     \"image_url\": {{\"url\": \"…\"}}}} parts",
                    i + 1,
                    kind(&other)
                ));
            }
        };
        out.push(ChatMessage {
            role: m.role,
            content,
        });
    }
    if !listed.is_empty() && last_user.is_none() {
        return Err(
            "the line has `images` but no user message to send them with: add a \
                    {\"role\": \"user\", \"content\": \"…\"} message"
                .into(),
        );
    }
    append_listed(&mut images, listed, dir)?;
    Ok((out, images))
}

/// Adds a line's `images` list after what its messages already hold.
pub fn append_listed(images: &mut LineImages, listed: &[String], dir: &Path) -> Result<(), String> {
    for r in listed {
        let n = images.images.len();
        images.images.push(source(r, dir)?);
        if let Some(layout) = &mut images.parts {
            layout.push(ContentPart::Image(n));
        }
    }
    Ok(())
}

/// The parts of message `index`: its text (the text parts joined), the layout, and the
/// images. A text-only array must be one part (it is sent as a string).
fn content_parts(
    parts: &[Value],
    index: usize,
    dir: &Path,
) -> Result<(String, Vec<ContentPart>, Vec<ImageSource>), String> {
    let mut text = String::new();
    let mut layout = Vec::with_capacity(parts.len());
    let mut images = Vec::new();
    for (k, p) in parts.iter().enumerate() {
        let at = || format!("message {}'s content part {}", index + 1, k + 1);
        let url = match p.get("type").and_then(Value::as_str) {
            Some("text") => {
                let Some(t) = p.get("text").and_then(Value::as_str) else {
                    return Err(format!("{} has no string `text`", at()));
                };
                text.push_str(t);
                layout.push(ContentPart::Text(t.to_owned()));
                continue;
            }
            Some("image_url") => match p.get("image_url") {
                Some(Value::String(u)) => u,
                Some(v) => match v.get("url").and_then(Value::as_str) {
                    Some(u) => u,
                    None => return Err(format!("{} has no `image_url.url`: {WRITE}", at())),
                },
                None => return Err(format!("{} has no `image_url`: {WRITE}", at())),
            },
            Some("image") => match p.get("image").and_then(Value::as_str) {
                Some(u) => u,
                None => return Err(format!("{} has no string `image`: {WRITE}", at())),
            },
            other => {
                return Err(format!(
                    "{} has type {}: servebench sends `text` and `image_url` parts",
                    at(),
                    other.map_or("(none)".into(), |t| format!("`{t}`"))
                ));
            }
        };
        layout.push(ContentPart::Image(images.len()));
        images.push(source(url, dir).map_err(|e| format!("{}: {e}", at()))?);
    }
    if images.is_empty() && layout.len() > 1 {
        return Err(format!(
            "message {}'s `content` has {} text parts and no image: write its text as one \
             string",
            index + 1,
            layout.len()
        ));
    }
    Ok((text, layout, images))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The images a line lists under `key` (`"image": "a.png"` or `["a.png", …]`), in order.
pub fn listed(v: Option<&Value>, key: &str) -> Result<Vec<String>, String> {
    let bad = |what: &str| {
        format!(
            "`{key}` is {what}: write one image or a list of them (a file path relative to the \
             prompt file, an http(s) URL, or a data URL)"
        )
    };
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.clone()),
                other => Err(bad(&format!("a list holding {}", kind(other)))),
            })
            .collect(),
        Some(other) => Err(bad(kind(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_files_urls_or_checked_data_urls() {
        let dir = Path::new("/p");
        assert_eq!(
            source("img/a.png", dir),
            Ok(ImageSource::File {
                path: "/p/img/a.png".into(),
                written: "img/a.png".into()
            })
        );
        assert_eq!(
            source("file://b.jpg", dir),
            Ok(ImageSource::File {
                path: "/p/b.jpg".into(),
                written: "b.jpg".into()
            })
        );
        assert_eq!(
            source("https://x/y.png", dir),
            Ok(ImageSource::Url("https://x/y.png".into()))
        );
        assert!(source("data:image/png;base64,iVBORw0KGgo=", dir).is_ok());
        for (bad, want) in [
            ("data:image/png;base64,@@@", "is not valid base64"),
            ("data:text/plain;base64,aGk=", "is not an image"),
            ("data:image/png,abc", "is not base64"),
            ("data:image/png;base64", "has no `,`"),
            ("data:image/png;base64,", "holds no bytes"),
            ("s3://bucket/a.png", "does not fetch `s3://` URLs"),
            (" ", "an image is an empty string"),
        ] {
            let err = source(bad, dir).expect_err(bad);
            assert!(err.contains(want), "{bad}: {err}");
        }
    }

    #[test]
    fn content_arrays_keep_their_order_and_images_belong_to_the_last_user_message() {
        let raw: Vec<RawMessage> = serde_json::from_str(
            r#"[{"role": "system", "content": [{"type": "text", "text": "be brief"}]},
                {"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
                    {"type": "text", "text": "compare with "},
                    {"type": "image", "image": "b.png"}]}]"#,
        )
        .expect("json");
        let (m, img) = messages(raw, &["https://x/c.png".into()], Path::new("/d")).expect("ok");
        assert_eq!(m[0].content, "be brief");
        assert_eq!(m[1].content, "compare with ");
        assert_eq!(img.images.len(), 3);
        assert_eq!(
            img.parts,
            Some(vec![
                ContentPart::Image(0),
                ContentPart::Text("compare with ".into()),
                ContentPart::Image(1),
                ContentPart::Image(2),
            ])
        );
        let early: Vec<RawMessage> = serde_json::from_str(
            r#"[{"role": "user", "content": [{"type": "image_url", "image_url": "a.png"}]},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "and?"}]"#,
        )
        .expect("json");
        let err = messages(early, &[], Path::new("/d")).unwrap_err();
        assert!(err.contains("message 1 (user) has image parts"), "{err}");
        let audio: Vec<RawMessage> =
            serde_json::from_str(r#"[{"role": "user", "content": [{"type": "input_audio"}]}]"#)
                .expect("json");
        let err = messages(audio, &[], Path::new("/d")).unwrap_err();
        assert!(err.contains("part 1 has type `input_audio`"), "{err}");
    }

    #[test]
    fn image_lists_are_one_string_or_strings() {
        let v = serde_json::json!(["a.png", "b.png"]);
        assert_eq!(
            listed(Some(&v), "images"),
            Ok(vec!["a.png".into(), "b.png".into()])
        );
        let v = serde_json::json!("a.png");
        assert_eq!(listed(Some(&v), "image"), Ok(vec!["a.png".into()]));
        let v = serde_json::json!([3]);
        let err = listed(Some(&v), "images").unwrap_err();
        assert!(
            err.starts_with("`images` is a list holding a number"),
            "{err}"
        );
    }

    #[test]
    fn files_are_encoded_by_their_bytes_or_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let png = super::super::image::png(1, 1, &[1, 2, 3]);
        std::fs::write(dir.path().join("a.png"), &png).expect("write");
        std::fs::write(dir.path().join("b.png"), b"not an image").expect("write");
        let mut imgs = vec![source("a.png", dir.path()).expect("ok")];
        encode_files(&mut imgs, Path::new("p.jsonl"), 4).expect("encodes");
        let ImageSource::Url(u) = &imgs[0] else {
            panic!("{imgs:?}")
        };
        assert!(u.starts_with("data:image/png;base64,iVBORw0KGgo"), "{u}");
        for (name, want) in [
            ("b.png", "p.jsonl:4: image `b.png` is not a PNG, JPEG"),
            ("gone.png", "p.jsonl:4: image `gone.png` cannot be read"),
        ] {
            let mut imgs = vec![source(name, dir.path()).expect("ok")];
            let err = encode_files(&mut imgs, Path::new("p.jsonl"), 4)
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{err}");
        }
    }
}
