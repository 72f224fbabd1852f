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

/// The local tokenizer with less said about it: never that its counts are sums over words,
/// and that it counts locally only when `local` (without, the builder fits by its search
/// alone, as it did first).
struct Hiding {
    tok: LocalTokenizer,
    local: bool,
}

impl TokenCounter for Hiding {
    async fn count(&mut self, text: &str) -> Result<u32, DatasetError> {
        self.tok.count(text).await
    }
    async fn count_chat(&mut self, m: &[ChatMessage]) -> Result<Option<u32>, DatasetError> {
        self.tok.count_chat(m).await
    }
    fn is_exact(&self) -> bool {
        true
    }
    fn counts_locally(&self) -> bool {
        self.local
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
    let hiding = |local| Hiding { tok: open(), local };
    let now = measure(
        &rt,
        RandomPromptBuilder::new(spec, open()).expect("builder"),
        "word counts summed, one prompt in 64 counted (now)",
        n,
        tokens,
    );
    let confirm = measure(
        &rt,
        RandomPromptBuilder::new(spec, hiding(true)).expect("builder"),
        "word counts + one confirming count a prompt (a tokenizer that does not sum over words)",
        n,
        tokens,
    );
    let before = measure(
        &rt,
        RandomPromptBuilder::new(spec, hiding(false)).expect("builder"),
        "search only (first)",
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
    label: &str,
    n: usize,
    tokens: u32,
) -> Vec<servebench_runner::dataset::Prompt> {
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
