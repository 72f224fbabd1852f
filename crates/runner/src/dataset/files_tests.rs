use std::io::Write;

use super::*;
use crate::dataset::tokenize::WordCount;

fn file(content: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    f.write_all(content.as_bytes()).expect("write");
    f
}

#[test]
fn jsonl_prompts_messages_and_lengths() {
    let f = file(concat!(
        "{\"prompt\": \"one two three\", \"max_tokens\": 7}\n",
        "\n",
        "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"output_tokens\": 3, \"id\": 9}\n",
        "{\"prompt\": \"no length\"}\n",
    ));
    let e = load_jsonl(f.path()).expect("loads");
    assert_eq!(e.len(), 3);
    assert_eq!(e[0].body, PromptBody::Text("one two three".into()));
    assert_eq!(
        (e[0].output_tokens, e[1].output_tokens, e[2].output_tokens),
        (Some(7), Some(3), None)
    );
    assert!(matches!(&e[1].body, PromptBody::Messages(m) if m[0].content == "hi"));
}

#[test]
fn jsonl_errors_name_the_line() {
    let f = file("{\"prompt\": \"ok\"}\n{\"prompt\": 3}\n");
    let err = load_jsonl(f.path()).unwrap_err().to_string();
    assert!(err.contains(":2:"), "{err}");
    let f = file("{\"prompt\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"b\"}]}\n");
    assert!(load_jsonl(f.path()).is_err(), "both prompt and messages");
    assert!(load_jsonl(Path::new("/nonexistent/x.jsonl")).is_err());
}

#[test]
fn jsonl_problems_are_named_at_their_line_with_what_to_write() {
    let cases = [
        ("{\"prompt\": \"\"}", ":1: the prompt is empty"),
        ("{\"prompt\": \"  \"}", ":1: the prompt is empty"),
        ("{\"messages\": []}", ":1: `messages` is empty"),
        (
            "{\"messages\": [{\"role\": \"user\", \"content\": \"\"}]}",
            ":1: every message's `content` is empty",
        ),
        (
            "{\"max_tokens\": 3}",
            ":1: the line has neither `prompt` nor `messages`",
        ),
        (
            "{\"prompt\": \"x\", \"max_tokens\": 4000000000}",
            ":1: `max_tokens` 4,000,000,000 is above",
        ),
        // Issue 50: accepted silently before.
        (
            "{\"prompt\": \"x\", \"max_tokens\": 0}",
            ":1: `max_tokens` is 0",
        ),
        (
            "{\"prompt\": \"x\", \"output_tokens\": 0}",
            ":1: `output_tokens` is 0",
        ),
        (
            "{\"prompt\": \"x\", \"max_tokens\": 4, \"output_tokens\": 5}",
            ":1: the line gives `max_tokens` 4 and `output_tokens` 5: keep one",
        ),
        (
            "[1]",
            ":1: the line is a JSON array: a prompt file is JSON lines",
        ),
        ("7", ":1: invalid type"),
    ];
    for (line, want) in cases {
        let f = file(&format!("\n{{\"prompt\": \"ok\"}}\n{line}\n"));
        let err = load_jsonl(f.path()).expect_err(line).to_string();
        let want = want.replace(":1:", ":3:");
        assert!(err.contains(&want), "{line}: {err}");
    }
    let mut f = file("{\"prompt\": \"ok\"}\n");
    f.write_all(b"{\"prompt\": \"caf\xe9\"}\n")
        .expect("latin-1 byte");
    let err = load_jsonl(f.path()).expect_err("not UTF-8").to_string();
    assert!(err.contains(":2: not UTF-8 text (byte 16"), "{err}");
}

/// A 1×1 PNG as a data URL.
fn png_url() -> String {
    use base64::Engine as _;
    let png = crate::dataset::image::png(1, 1, &[9, 9, 9]);
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    )
}

#[tokio::test]
async fn jsonl_lines_carry_image_files_urls_and_data_urls() {
    // Fails before file_images: `images` was ignored and a `content` array refused.
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::create_dir(dir.path().join("img")).expect("mkdir");
    let png = crate::dataset::image::png(2, 1, &[1, 2, 3, 4, 5, 6]);
    std::fs::write(dir.path().join("img/a.png"), &png).expect("write");
    let url = png_url();
    let lines = [
        r#"{"prompt": "describe", "images": ["img/a.png", "https://x/y.png"], "max_tokens": 4}"#.to_owned(),
        format!(
            r#"{{"messages": [{{"role": "user", "content": [{{"type": "image_url", "image_url": {{"url": "{url}"}}}}, {{"type": "text", "text": "what"}}]}}], "max_tokens": 5}}"#
        ),
        r#"{"content": [{"type": "text", "text": "and"}, {"type": "image", "image": "img/a.png"}], "image_files": "https://x/z.png", "output_tokens": 6}"#.to_owned(),
    ];
    let path = dir.path().join("p.jsonl");
    std::fs::write(&path, lines.join("\n")).expect("write");
    let mut e = load_jsonl(&path).expect("loads");
    assert!(matches!(&e[0].images[0], ImageSource::File { written, .. } if written == "img/a.png"));
    encode_images(&mut e, &path).expect("encodes");
    let mut ds = FileDataset::new(e, None, WordCount).expect("valid");
    let p = ds.trial_prompts(3, 0, 1, 1, 0).await.expect("prompts");
    let mut p = p.measured;
    p.sort_by_key(|p| p.max_tokens);
    let file_url = format!(
        "data:image/png;base64,{}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &png)
    );
    assert_eq!(p[0].images, [file_url.clone(), "https://x/y.png".into()]);
    assert_eq!(p[0].parts, None, "after the text");
    assert_eq!(p[1].images, [url]);
    assert_eq!(
        p[1].parts,
        Some(vec![
            ContentPart::Image(0),
            ContentPart::Text("what".into())
        ])
    );
    assert_eq!(p[2].images, [file_url, "https://x/z.png".into()]);
    assert_eq!(
        p[2].parts,
        Some(vec![
            ContentPart::Text("and".into()),
            ContentPart::Image(0),
            ContentPart::Image(1)
        ])
    );
    assert!(matches!(&p[2].body, PromptBody::Messages(m) if m[0].role == "user"));
    assert!(
        p.iter().all(|p| p.expected_input_tokens.is_none()),
        "an image's tokens are the server's"
    );
}

#[test]
fn bad_images_are_refused_at_their_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("p.jsonl");
    let ok = r#"{"prompt": "x", "max_tokens": 1}"#;
    for (line, want) in [
        (
            r#"{"prompt": "x", "images": ["data:image/png;base64,%%"]}"#,
            ":2: the data URL `data:image/png;base64,%%` is not valid base64",
        ),
        (
            r#"{"prompt": "x", "images": [3]}"#,
            ":2: `images` is a list holding a number",
        ),
        (
            r#"{"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}"#,
            ":2: message 1's content part 1 has no `image_url`",
        ),
    ] {
        std::fs::write(&path, format!("{ok}\n{line}\n")).expect("write");
        let err = load_jsonl(&path).expect_err(line).to_string();
        assert!(err.contains(want), "{line}: {err}");
    }
    std::fs::write(
        &path,
        format!("{ok}\n\n{{\"prompt\": \"x\", \"images\": [\"gone.png\"]}}\n"),
    )
    .expect("write");
    let mut e = load_jsonl(&path).expect("parses: the file is read at encoding");
    let err = encode_images(&mut e, &path).unwrap_err().to_string();
    assert!(
        err.contains("p.jsonl:3: image `gone.png` cannot be read"),
        "{err}"
    );
    // Issue 50: a PNG cut short was sent, and refused by the server request by request.
    let whole = crate::dataset::image::png(2, 2, &[9; 12]);
    std::fs::write(dir.path().join("cut.png"), &whole[..whole.len() - 20]).expect("cut");
    std::fs::write(dir.path().join("whole.png"), &whole).expect("whole");
    for (name, refused) in [("cut.png", true), ("whole.png", false)] {
        std::fs::write(
            &path,
            format!("{{\"prompt\": \"x\", \"images\": [\"{name}\"]}}\n"),
        )
        .expect("write");
        let mut e = load_jsonl(&path).expect("parses");
        let r = encode_images(&mut e, &path);
        assert_eq!(r.is_err(), refused, "{name}: {r:?}");
        if let Err(err) = r {
            assert!(
                err.to_string().contains("p.jsonl:1: image `cut.png`"),
                "{err}"
            );
            assert!(err.to_string().contains("is cut short"), "{err}");
        }
    }
}

#[tokio::test]
async fn missing_output_length_is_an_error() {
    let f = file("{\"prompt\": \"x\"}\n");
    let mut ds =
        FileDataset::new(load_jsonl(f.path()).expect("loads"), None, WordCount).expect("valid");
    let err = ds.trial_prompts(1, 0, 1, 1, 0).await.unwrap_err();
    assert!(matches!(err, DatasetError::MissingOutputLength { line: 1 }));
    assert!(FileDataset::new(vec![], None, WordCount).is_err());
}
