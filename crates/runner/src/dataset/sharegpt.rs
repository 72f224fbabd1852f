//! ShareGPT prompt files (`[{"conversations": [{"from": "human", "value": …}, {"from":
//! "gpt", "value": …}]}]`), optionally with LLaVA-style `image`/`images` per entry.

use std::path::Path;

use serde::Deserialize;

use super::DatasetError;
use super::file_images::{self, LineImages};
use super::files::FileEntry;
use super::prompt::PromptBody;

#[derive(Deserialize)]
struct ShareGptEntry {
    #[serde(default)]
    conversations: Vec<Turn>,
    /// LLaVA-style and vLLM's ShareGPT: the entry's image (or images).
    #[serde(default)]
    image: Option<serde_json::Value>,
    #[serde(default)]
    images: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Turn {
    from: String,
    value: String,
}

/// Reads a ShareGPT file: the first human turn is the prompt, the turn after it (from
/// `gpt`) is the reference answer. Entries without such a pair, or whose prompt is empty,
/// are skipped; the number skipped is returned too. Each entry keeps the line it starts on.
/// An entry's `image`/`images` go after its prompt (its text, `<image>` tags included, is
/// sent as written, as vLLM's ShareGPT reader does).
pub fn load_sharegpt(path: &Path) -> Result<(Vec<FileEntry>, usize), DatasetError> {
    let bytes = std::fs::read(path).map_err(|e| DatasetError::io(path, e))?;
    let entries: Vec<ShareGptEntry> =
        serde_json::from_slice(&bytes).map_err(|e| DatasetError::Parse {
            path: path.to_owned(),
            line: e.line(),
            message: format!(
                "{e}; a ShareGPT file is one JSON array of {{\"conversations\": [{{\"from\": \
                 \"human\", \"value\": \"…\"}}, {{\"from\": \"gpt\", \"value\": \"…\"}}]}}"
            ),
        })?;
    let lines = element_lines(&bytes);
    let total = entries.len();
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for (n, e) in entries.into_iter().enumerate() {
        let line = lines.get(n).copied().unwrap_or(1);
        let bad = |message: String| DatasetError::Parse {
            path: path.to_owned(),
            line,
            message,
        };
        let mut listed = file_images::listed(e.image.as_ref(), "image").map_err(bad)?;
        listed.extend(file_images::listed(e.images.as_ref(), "images").map_err(bad)?);
        let mut images = LineImages::default();
        file_images::append_listed(&mut images, &listed, dir).map_err(bad)?;
        let Some((prompt, answer)) = prompt_and_answer(&e.conversations) else {
            continue;
        };
        out.push(FileEntry {
            body: PromptBody::Text(prompt.to_owned()),
            output_tokens: None,
            reference_output: Some(answer.to_owned()),
            line,
            images: images.images,
            parts: None,
        });
    }
    let skipped = total - out.len();
    Ok((out, skipped))
}

/// A ShareGPT entry's first human turn with text and the answer right after it.
fn prompt_and_answer(turns: &[Turn]) -> Option<(&str, &str)> {
    let i = turns
        .iter()
        .position(|t| t.from == "human" || t.from == "user")?;
    let answer = turns
        .get(i + 1)
        .filter(|t| t.from == "gpt" || t.from == "assistant")?;
    let prompt = &turns[i].value;
    (!prompt.trim().is_empty()).then_some((prompt.as_str(), answer.value.as_str()))
}

/// The 1-based line on which each element of the top-level JSON array in `bytes` starts
/// (the text is valid JSON: serde has read it).
fn element_lines(bytes: &[u8]) -> Vec<usize> {
    let (mut line, mut depth) = (1, 0usize);
    let (mut in_string, mut escaped, mut expect_element) = (false, false, false);
    let mut out = Vec::new();
    for &b in bytes {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                b'\n' => line += 1,
                _ => {}
            }
            continue;
        }
        if b == b'\n' {
            line += 1;
            continue;
        }
        if b.is_ascii_whitespace() {
            continue;
        }
        if depth == 1 && expect_element && b != b']' {
            out.push(line);
            expect_element = false;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth == 1 {
                    expect_element = true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expect_element = true,
            _ => {}
        }
    }
    out
}

/// A ShareGPT file for tests: two usable entries (lines 2 and 5), two skipped.
#[cfg(test)]
pub(crate) const SHAREGPT: &str = r#"[
    {"id": "a", "conversations": [{"from": "human", "value": "hello there friend"},
                                  {"from": "gpt", "value": "one two three four five"}]},
    {"id": "b", "conversations": [{"from": "gpt", "value": "no question"}]},
    {"id": "c", "conversations": [{"from": "system", "value": "be nice"},
                                  {"from": "human", "value": "why"},
                                  {"from": "gpt", "value": "because"}]},
    {"id": "d", "conversations": []}
]"#;

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::dataset::FileDataset;
    use crate::dataset::file_images::ImageSource;
    use crate::dataset::tokenize::WordCount;

    fn file(content: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        f.write_all(content.as_bytes()).expect("write");
        f
    }

    #[test]
    fn sharegpt_entries_keep_the_line_they_start_on() {
        let f = file(SHAREGPT);
        let (e, _) = load_sharegpt(f.path()).expect("loads");
        assert_eq!(e.iter().map(|e| e.line).collect::<Vec<_>>(), [2, 5]);
        assert_eq!(
            element_lines(b"[1, \"a,]\\\"\",\n {\"x\": [2, 3]}\n , []]"),
            [1, 1, 2, 3]
        );
        let f = file(
            r#"[{"conversations": [{"from": "human", "value": " "}, {"from": "gpt", "value": "a"}]}]"#,
        );
        assert_eq!(
            load_sharegpt(f.path()).expect("loads").1,
            1,
            "an empty prompt is skipped"
        );
    }

    #[test]
    fn sharegpt_pairs_and_skips() {
        let f = file(SHAREGPT);
        let (e, skipped) = load_sharegpt(f.path()).expect("loads");
        assert_eq!((e.len(), skipped), (2, 2));
        assert_eq!(e[1].body, PromptBody::Text("why".into()));
        assert_eq!(
            e[0].reference_output.as_deref(),
            Some("one two three four five")
        );
    }

    #[test]
    fn an_entrys_image_or_images_go_after_its_prompt() {
        // LLaVA-style `image` (vLLM's ShareGPT reader reads it) and an `images` list; fails
        // before: both were ignored.
        let f = file(
            r#"[{"image": "coco/1.jpg", "conversations": [{"from": "human", "value": "<image>\nwhat"},
                                                       {"from": "gpt", "value": "a cat"}]},
               {"images": ["https://x/a.png", "b.png"],
                "conversations": [{"from": "human", "value": "and"}, {"from": "gpt", "value": "b"}]},
               {"image": "data:image/png;base64,%%", "conversations": []}]"#,
        );
        let err = load_sharegpt(f.path()).unwrap_err().to_string();
        assert!(
            err.contains(":5: the data URL"),
            "checked even when skipped: {err}"
        );
        let f = file(
            r#"[{"image": "coco/1.jpg", "conversations": [{"from": "human", "value": "<image>\nwhat"},
                                                       {"from": "gpt", "value": "a cat"}]},
               {"images": ["https://x/a.png", "b.png"],
                "conversations": [{"from": "human", "value": "and"}, {"from": "gpt", "value": "b"}]}]"#,
        );
        let (e, _) = load_sharegpt(f.path()).expect("loads");
        let dir = f.path().parent().expect("folder");
        assert_eq!(
            e[0].body,
            PromptBody::Text("<image>\nwhat".into()),
            "sent as written"
        );
        assert_eq!(
            e[0].images,
            [ImageSource::File {
                path: dir.join("coco/1.jpg"),
                written: "coco/1.jpg".into()
            }]
        );
        assert_eq!(e[1].images.len(), 2);
        assert_eq!(e[1].images[0], ImageSource::Url("https://x/a.png".into()));
    }

    #[tokio::test]
    async fn file_trials_are_seeded_and_lengths_come_from_the_reference_answer() {
        let f = file(SHAREGPT);
        let (entries, _) = load_sharegpt(f.path()).expect("loads");
        let mut ds = FileDataset::new(entries.clone(), None, WordCount).expect("valid");
        let p = ds.trial_prompts(2, 1, 5, 1, 0).await.expect("prompts");
        let mut lens: Vec<u32> = p.measured.iter().map(|p| p.max_tokens).collect();
        lens.sort_unstable();
        assert_eq!(lens, [1, 5], "gpt turn word counts");
        assert!(p.measured.iter().all(|p| !p.input_tokens_exact));
        let again = FileDataset::new(entries.clone(), None, WordCount)
            .expect("valid")
            .trial_prompts(2, 1, 5, 1, 0)
            .await
            .expect("prompts");
        assert_eq!(again, p, "paired: same seed, same prompts");
        let mut fixed = FileDataset::new(entries, Some(64), WordCount).expect("valid");
        let p = fixed.trial_prompts(1, 0, 5, 2, 0).await.expect("prompts");
        assert_eq!(p.measured[0].max_tokens, 64);
        assert!(
            fixed.trial_prompts(3, 0, 5, 1, 0).await.is_err(),
            "more than the file holds"
        );
    }
}
