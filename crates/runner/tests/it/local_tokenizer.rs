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
