//! `servebench from sglang|vllm -- ARGV…` as a user runs it: the seed's command becomes a
//! spec on stdout that `validate` accepts; a refused or unknown flag makes the exit status 1
//! with the flag named; a command line argparse could not read is a usage error.

use crate::common::sb;

const SEED: &str = "python3 -m sglang.bench_serving --backend sglang --dataset-name random \
                    --random-input-len 512 --random-output-len 128 --num-prompts 20 \
                    --request-rate -1 --max-concurrency 1";

#[test]
fn the_seeds_command_becomes_a_spec_that_validates() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut args = vec!["from", "sglang", "--"];
    args.extend(SEED.split_whitespace());
    let out = sb(dir.path()).args(&args).assert().code(0);
    let spec = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("0 refused, 0 unknown"), "{err}");
    assert!(spec.contains("input_tokens: {min: 1, max: 512}"), "{spec}");
    assert!(spec.contains("request_rate: inf"), "{spec}");
    let path = dir.path().join("seed.yaml");
    std::fs::write(&path, &spec).expect("write");
    sb(dir.path()).arg("validate").arg(&path).assert().code(0);
    // The same command as one quoted string reads the same.
    let one = sb(dir.path())
        .args(["from", "sglang", "--", SEED])
        .assert()
        .code(0);
    assert_eq!(one.get_output().stdout, out.get_output().stdout);
}

#[test]
fn refused_and_unknown_flags_exit_1_and_bad_lines_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = sb(dir.path())
        .args([
            "from",
            "vllm",
            "--",
            "vllm bench serve --model m --top-k 5 --not-a-vllm-flag x",
        ])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("refused: --top-k 5"), "{err}");
    assert!(err.contains("unknown to vLLM 0.33.0"), "{err}");
    assert!(err.contains("--not-a-vllm-flag x"), "{err}");
    let spec = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(spec.contains("apiVersion: servebench/v1alpha1"), "{spec}");
    let out = sb(dir.path())
        .args(["from", "sglang", "--", "--num-prompts"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("`--num-prompts` needs a value"), "{err}");
}
