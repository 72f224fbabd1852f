//! A local Hugging Face tokenizer.json (the `tokenizers` crate) counts exactly as the
//! reference Python `tokenizers` does, and random prompts fitted with it have exact lengths.
//! The fixture and its reference counts come from `tests/fixtures/tokenizer/make.py`.

use std::path::PathBuf;

use servebench_runner::dataset::{
    AnyCounter, LengthDist, LocalTokenizer, PromptBody, RandomDataset, RandomPromptBuilder,
    TokenCounter, TokenizerSpec,
};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizer/bpe-tokenizer.json")
}

#[tokio::test]
async fn counts_match_the_reference_python_tokenizers() {
    // printed by make.py with tokenizers 0.23.3 (BOS added by the post-processor)
    let reference = [
        ("kalomi nesu tari", 7),
        ("Hello, world! 123", 13),
        ("strdunion povering ka.", 8),
        ("", 1),
        ("émigré ünïcode", 18),
    ];
    let mut tok = LocalTokenizer::open(&fixture()).expect("fixture loads");
    for (text, n) in reference {
        assert_eq!(tok.count(text).await.expect("counts"), n, "{text:?}");
    }
    assert!(tok.is_exact());
    assert_eq!(tok.count_chat(&[]).await.expect("ok"), None);
}

#[tokio::test]
async fn random_prompts_fitted_with_a_local_tokenizer_have_exact_lengths() {
    let counter = AnyCounter::from_spec(&TokenizerSpec::Local { path: fixture() }).expect("opens");
    assert!(counter.is_exact());
    let spec = RandomDataset {
        input_tokens: LengthDist::Uniform { min: 3, max: 300 },
        output_tokens: LengthDist::Fixed { tokens: 8 },
        chat: false,
    };
    let mut b = RandomPromptBuilder::new(spec, counter).expect("valid");
    let p = b.trial_prompts(30, 2, 11, 1, 0).await.expect("builds");
    let mut check = LocalTokenizer::open(&fixture()).expect("loads");
    for pr in p.measured.iter().chain(&p.warmup) {
        let PromptBody::Text(t) = &pr.body else {
            panic!("text prompts")
        };
        assert_eq!(
            Some(check.count(t).await.expect("counts")),
            pr.expected_input_tokens
        );
        assert!(pr.input_tokens_exact);
    }
    assert_eq!(b.stats().length_misses, 0, "{:?}", b.stats());
}

#[test]
fn a_missing_or_foreign_file_is_a_clear_error() {
    let missing = LocalTokenizer::open(&PathBuf::from("/nonexistent/tokenizer.json"))
        .expect_err("missing file");
    assert!(
        missing.to_string().contains("/nonexistent/tokenizer.json"),
        "{missing}"
    );
    let not_a_tokenizer = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let err = LocalTokenizer::open(&not_a_tokenizer).expect_err("not a tokenizer.json");
    let msg = err.to_string();
    assert!(
        msg.contains("Cargo.toml") && msg.contains("tokenizer_path"),
        "{msg}"
    );
}

/// The fixture with `edit` applied to its JSON, written to a temporary file.
fn variant(edit: impl FnOnce(&mut serde_json::Value)) -> (tempfile::TempDir, PathBuf) {
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture()).expect("reads")).expect("json");
    edit(&mut json);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tokenizer.json");
    std::fs::write(&path, serde_json::to_vec(&json).expect("serializes")).expect("writes");
    (dir, path)
}

#[test]
fn only_a_tokenizer_that_splits_at_spaces_and_looks_across_nothing_sums_over_words() {
    let open = |p: &PathBuf| LocalTokenizer::open(p).expect("opens").sums_over_words();
    assert!(open(&fixture()), "byte-level regex, no normalizer");
    let (_d, lower) = variant(|j| j["normalizer"] = serde_json::json!({"type": "Lowercase"}));
    assert!(!open(&lower), "a normalizer may rewrite across words");
    let (_d, no_regex) = variant(|j| j["pre_tokenizer"]["use_regex"] = false.into());
    assert!(
        !open(&no_regex),
        "byte-level without its regex does not split"
    );
    let (_d, added) = variant(|j| {
        let tokens = j["added_tokens"].as_array_mut().expect("added tokens");
        let mut the = tokens[1].clone();
        the["id"] = 1000.into();
        the["content"] = "the".into();
        the["special"] = false.into();
        tokens.push(the);
    });
    assert!(
        !open(&added),
        "an added token made of letters is cut out of a prompt"
    );
}

#[tokio::test]
async fn prompts_predicted_from_word_sums_are_exact_with_one_count_in_sixty_four() {
    let counter = AnyCounter::from_spec(&TokenizerSpec::Local { path: fixture() }).expect("opens");
    assert!(counter.sums_over_words());
    let spec = RandomDataset {
        input_tokens: LengthDist::Uniform { min: 3, max: 300 },
        output_tokens: LengthDist::Fixed { tokens: 8 },
        chat: false,
    };
    let mut b = RandomPromptBuilder::new(spec, counter).expect("valid");
    let p = b.prompts(1280, 5).await.expect("builds");
    let mut check = LocalTokenizer::open(&fixture()).expect("loads");
    for pr in &p {
        let PromptBody::Text(t) = &pr.body else {
            panic!("text prompts")
        };
        assert_eq!(
            Some(check.count(t).await.expect("counts")),
            pr.expected_input_tokens,
            "{t:?}"
        );
        assert!(pr.input_tokens_exact);
    }
    let s = b.stats();
    // A short target that no words fit exactly is kept at its exact count (it happens once
    // here, with the search alone as well).
    assert!(s.length_misses <= 2, "{s:?}");
    // 1280 / 64 sampled checks, plus the search for the prompt no word count fits.
    assert!(s.counts <= 1280 / 64 + 16, "{s:?}");
}
