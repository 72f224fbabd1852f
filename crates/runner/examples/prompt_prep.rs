//! CPU cost of preparing random prompts with a local `tokenizer.json`: builds N prompts of
//! a fixed input length (exact in tokens) and prints the process CPU time per prompt and
//! the tokenizer calls per prompt. bench/prompt-prep.sh runs it; docs/performance.md
//! records the figures.
//!
//!   cargo run --release -p servebench-runner --example prompt_prep -- [TOKENIZER] [N] [TOKENS]

use std::path::PathBuf;

use nix::sys::resource::{UsageWho, getrusage};
use servebench_runner::dataset::{LengthDist, LocalTokenizer, RandomDataset, RandomPromptBuilder};

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
    let counter = LocalTokenizer::open(&path).expect("tokenizer");
    let spec = RandomDataset {
        input_tokens: LengthDist::Fixed { tokens },
        output_tokens: LengthDist::Fixed { tokens: 16 },
        chat: false,
    };
    let mut builder = RandomPromptBuilder::new(spec, counter).expect("builder");
    let before = cpu_s();
    let wall = std::time::Instant::now();
    let prompts = rt.block_on(builder.prompts(n, 1)).expect("prompts");
    let cpu = cpu_s() - before;
    let stats = builder.stats();
    let exact = prompts
        .iter()
        .filter(|p| p.expected_input_tokens == Some(tokens))
        .count();
    println!("tokenizer: {}", path.display());
    println!(
        "prompts: {n} of {tokens} tokens ({exact} exact, {} misses)",
        stats.length_misses
    );
    println!(
        "cpu: {:.3} s, {:.1} us a prompt (wall {:.3} s)",
        cpu,
        cpu * 1e6 / n as f64,
        wall.elapsed().as_secs_f64()
    );
    println!(
        "tokenizer calls: {:.2} a prompt",
        stats.counts as f64 / n as f64
    );
}
