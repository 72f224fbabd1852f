//! CPU cost of preparing random prompts with a local `tokenizer.json`: builds N prompts of
//! a fixed input length (exact in tokens) and prints the process CPU time per prompt and
//! the tokenizer calls per prompt, three ways: as `run` prepares them (per-word counts
//! summed, one prompt in 64 counted whole to check), as it does for a tokenizer whose counts
//! are not sums over words (one confirming count a prompt), and by the fitting search alone
//! (the counter hides that it is local: how prompts were prepared first). bench/prompt-prep.sh runs it;
//! docs/performance.md records the figures.
//!
//!   cargo run --release -p servebench-runner --example prompt_prep -- [TOKENIZER] [N] [TOKENS]

use std::path::PathBuf;

use nix::sys::resource::{UsageWho, getrusage};
use servebench_runner::dataset::{
    ChatMessage, DatasetError, LengthDist, LocalTokenizer, RandomDataset, RandomPromptBuilder,
    TokenCounter,
};

/// The local tokenizer, not saying it is local: the builder fits by its search alone.
struct SearchOnly(LocalTokenizer);

/// The local tokenizer, not saying that its counts are sums over words: every prompt is
/// counted once to confirm the prediction.
struct ConfirmEach(LocalTokenizer);

impl TokenCounter for ConfirmEach {
    async fn count(&mut self, text: &str) -> Result<u32, DatasetError> {
        self.0.count(text).await
    }
    async fn count_chat(&mut self, m: &[ChatMessage]) -> Result<Option<u32>, DatasetError> {
        self.0.count_chat(m).await
    }
    fn is_exact(&self) -> bool {
        true
    }
    fn counts_locally(&self) -> bool {
        true
    }
}

impl TokenCounter for SearchOnly {
    async fn count(&mut self, text: &str) -> Result<u32, DatasetError> {
        self.0.count(text).await
    }
    async fn count_chat(&mut self, m: &[ChatMessage]) -> Result<Option<u32>, DatasetError> {
        self.0.count_chat(m).await
    }
    fn is_exact(&self) -> bool {
        true
    }
}

fn cpu_s() -> f64 {
    let u = getrusage(UsageWho::RUSAGE_SELF).expect("getrusage");
    let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 * 1e-6;
    t(u.user_time()) + t(u.system_time())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/tokenizer/bpe-tokenizer.json"
            ))
        },
        PathBuf::from,
    );
    let n: usize = args.next().map_or(7500, |s| s.parse().expect("N"));
    let tokens: u32 = args.next().map_or(128, |s| s.parse().expect("TOKENS"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    println!("tokenizer: {}", path.display());
    let spec = RandomDataset {
        input_tokens: LengthDist::Fixed { tokens },
        output_tokens: LengthDist::Fixed { tokens: 16 },
        chat: false,
    };
    let open = || LocalTokenizer::open(&path).expect("tokenizer");
    let now = measure(
        &rt,
        RandomPromptBuilder::new(spec, open()).expect("builder"),
        n,
        tokens,
    );
    let confirm = measure(
        &rt,
        RandomPromptBuilder::new(spec, ConfirmEach(open())).expect("builder"),
        n,
        tokens,
    );
    let before = measure(
        &rt,
        RandomPromptBuilder::new(spec, SearchOnly(open())).expect("builder"),
        n,
        tokens,
    );
    assert_eq!(now, confirm, "all three ways give the same prompts");
    assert_eq!(now, before, "all three ways give the same prompts");
}

/// Builds `n` prompts, prints the figures, returns the prompts.
fn measure<C: TokenCounter>(
    rt: &tokio::runtime::Runtime,
    mut builder: RandomPromptBuilder<C>,
    n: usize,
    tokens: u32,
) -> Vec<servebench_runner::dataset::Prompt> {
    let name = std::any::type_name::<C>();
    let label = if name.contains("SearchOnly") {
        "search only (first)"
    } else if name.contains("ConfirmEach") {
        "word counts + one confirming count a prompt (a tokenizer that does not sum over words)"
    } else {
        "word counts summed, one prompt in 64 counted (now)"
    };
    let before = cpu_s();
    let wall = std::time::Instant::now();
    let prompts = rt.block_on(builder.prompts(n, 1)).expect("prompts");
    let cpu = cpu_s() - before;
    let stats = builder.stats();
    let exact = prompts
        .iter()
        .filter(|p| p.expected_input_tokens == Some(tokens))
        .count();
    println!("{label}:");
    println!(
        "  prompts: {n} of {tokens} tokens ({exact} exact, {} misses)",
        stats.length_misses
    );
    println!(
        "  cpu: {:.3} s, {:.1} us a prompt (wall {:.3} s)",
        cpu,
        cpu * 1e6 / n as f64,
        wall.elapsed().as_secs_f64()
    );
    println!(
        "  tokenizer calls: {:.2} a prompt",
        stats.counts as f64 / n as f64
    );
    prompts
}
