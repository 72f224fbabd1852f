//! `servebench from sglang|vllm`: a peer's command line as a spec. The seed's command gives
//! a spec that validates with the lengths bench_serving really draws; every flag of the
//! tools' parsers (as committed under fixtures/peer-flags/, from `scripts/peer-flags`) has a
//! row; every flag given gets exactly one line; unknown flags are listed.

use servebench_spec::peer::{self, Outcome, Translation, argv::shell_words};
use servebench_spec::{DatasetKind, Rate, TokenCount, TokenRange, parse_str};

fn words(s: &str) -> Vec<String> {
    shell_words(s).expect("words")
}

fn spec_of(t: &Translation) -> servebench_spec::SpecFile {
    let yaml = t.to_yaml("test");
    match parse_str(&yaml, "from.yaml") {
        Ok(s) => s.file,
        Err(e) => panic!("the translated spec does not validate:\n{e}\n{yaml}"),
    }
}

fn range(min: u32, max: u32) -> Option<TokenCount> {
    Some(TokenCount::Range(TokenRange { min, max }))
}

/// The seed's command (the issue's, and the one its session ran with --host, --port, --model
/// and --tokenizer): a spec that validates, with bench_serving's ranges, `inf` for -1 and
/// the native backend's caveat.
#[test]
fn the_seeds_sglang_command_becomes_a_valid_spec() {
    for cmd in [
        "python3 -m sglang.bench_serving --backend sglang --dataset-name random \
         --random-input-len 512 --random-output-len 128 --num-prompts 20 --request-rate -1 \
         --max-concurrency 1",
        "python3 -m sglang.bench_serving --backend sglang --host 127.0.0.1 --port 8000 \
         --model glm-5 --tokenizer lukealonso/GLM-5-NVFP4 --dataset-name random \
         --random-input-len 512 --random-output-len 128 --num-prompts 20 --request-rate -1 \
         --max-concurrency 1",
    ] {
        let t = peer::sglang::translate(&words(cmd)).expect("translated");
        assert!(t.faithful(), "{:?} {:?}", t.unknown, t.lines);
        let s = spec_of(&t).spec;
        let w = &s.workload;
        assert_eq!(w.dataset.kind, DatasetKind::Random);
        // bench_serving's default --random-range-ratio 0.0: [max(⌊L·0⌋, 1), L].
        assert_eq!(w.dataset.input_tokens, range(1, 512));
        assert_eq!(w.dataset.output_tokens, range(1, 128));
        assert_eq!(w.requests, Some(20));
        assert_eq!(w.request_rate, Rate::Inf);
        assert_eq!(w.max_concurrency, Some(1));
        assert_eq!(w.warmup_requests, 1);
        assert!(w.ignore_eos);
        assert_eq!(w.seed, 42);
        assert_eq!(s.target.api, servebench_spec::ApiKind::OpenaiCompletions);
        assert_eq!(s.target.tokenizer, servebench_spec::TokenizerSource::Server);
        let line = |f: &str| {
            t.lines
                .iter()
                .find(|l| l.flag.starts_with(f))
                .unwrap_or_else(|| panic!("no line for {f}"))
        };
        assert!(
            line("--request-rate -1")
                .text
                .contains("a negative scale raises")
        );
        assert!(line("--backend sglang").text.contains("native /generate"));
        assert_eq!(line("--random-range-ratio").outcome, Outcome::Default);
        if cmd.contains("--tokenizer") {
            assert!(
                line("--tokenizer")
                    .text
                    .contains("target.tokenizer: server")
            );
            assert_eq!(s.target.model, "glm-5");
            assert_eq!(s.target.base_url.as_deref(), Some("http://127.0.0.1:8000"));
            assert!(t.needs.is_empty());
        } else {
            assert_eq!(s.target.base_url.as_deref(), Some("http://127.0.0.1:30000"));
            // No --model: `auto`, the one model /v1/models lists, as the tool asks it.
            assert_eq!(s.target.model, "auto");
            assert!(t.needs.is_empty(), "{:?}", t.needs);
        }
    }
}

#[test]
fn vllm_ranges_rates_and_forced_ignore_eos() {
    let t = peer::vllm::translate(&words(
        "vllm bench serve --backend openai-chat --endpoint /v1/chat/completions \
         --model meta-llama/Llama-3.1-8B-Instruct --dataset-name random --random-input-len 1024 \
         --random-output-len 128 --random-range-ratio 0.1 --num-prompts 200 --request-rate 4 \
         --burstiness 0.5 --max_concurrency 16 --goodput ttft:500 e2el:3000 --save-result",
    ))
    .expect("translated");
    assert!(t.faithful(), "{:?}", t.lines);
    let s = spec_of(&t).spec;
    let w = &s.workload;
    // [⌊1024·0.9⌋, ⌈1024·1.1⌉] and [⌊128·0.9⌋, ⌈128·1.1⌉].
    assert_eq!(w.dataset.input_tokens, range(921, 1127));
    assert_eq!(w.dataset.output_tokens, range(115, 141));
    assert_eq!(w.request_rate, Rate::PerSecond(4.0));
    assert_eq!(w.burstiness, Some(0.5));
    assert_eq!(
        w.max_concurrency,
        Some(16),
        "vLLM's parser takes `_` for `-`"
    );
    // vLLM sets ignore_eos for the random dataset with an OpenAI backend.
    assert!(w.ignore_eos);
    assert_eq!(s.target.api, servebench_spec::ApiKind::OpenaiChat);
    let slo = s.slo.expect("slo");
    assert_eq!(slo.ttft.map(|d| d.get().as_millis()), Some(500));
    assert_eq!(slo.e2e.map(|d| d.get().as_millis()), Some(3000));
    // -1 stops vLLM before it starts; the default range ratio gives fixed lengths.
    let t = peer::vllm::translate(&words("vllm bench serve --request-rate -1")).expect("ok");
    let s = spec_of(&t).spec;
    assert_eq!(s.workload.request_rate, Rate::Inf);
    assert_eq!(
        s.workload.dataset.input_tokens,
        Some(TokenCount::Fixed(1024))
    );
    assert!(
        t.lines
            .iter()
            .any(|l| l.text.contains("non-positive request rate"))
    );
}

#[test]
fn refused_and_unknown_flags_are_named() {
    let t = peer::sglang::translate(&words(
        "python3 -m sglang.bench_serving --dataset-name random --disable-stream --lora-name a b \
         --bogus 3 --random-input-len 64",
    ))
    .expect("translated");
    assert!(!t.faithful());
    assert_eq!(t.unknown, ["--bogus 3"]);
    let refused: Vec<&str> = t
        .lines
        .iter()
        .filter(|l| l.outcome == Outcome::Refused)
        .map(|l| l.flag.as_str())
        .collect();
    assert_eq!(refused, ["--disable-stream", "--lora-name a b"]);
    let yaml = t.to_yaml("cmd");
    assert!(
        yaml.contains("# UNKNOWN to SGLang 0.5.23 bench_serving"),
        "{yaml}"
    );
    assert!(yaml.contains("REFUSED"), "{yaml}");
    // A value the tool's parser would refuse is an error, not a guess.
    let e = peer::sglang::translate(&words("--num-prompts many")).expect_err("bad value");
    assert!(e.to_string().contains("not a whole number"), "{e}");
    let e = peer::vllm::translate(&words("--random-range-ratio 1.5")).expect_err("bad ratio");
    assert!(e.to_string().contains("[0, 1)"), "{e}");
}

/// vLLM 0.33.0's `random-mm` (RandomMultiModalDataset) as an `image` dataset: one bucket and
/// a fixed count are faithful; the default two-size buckets, a count range, video and a
/// completions backend are refused, and the spec still validates.
#[test]
fn vllm_random_mm_becomes_an_image_dataset() {
    let base = "vllm bench serve --backend openai-chat --endpoint /v1/chat/completions \
                --dataset-name random-mm --random-input-len 32 --random-output-len 8";
    let t = peer::vllm::translate(&words(&format!(
        "{base} --random-mm-base-items-per-request 2 --random-mm-limit-mm-per-prompt \
         '{{\"image\": 3, \"video\": 0}}' --random-mm-bucket-config '{{(64, 48, 1): 1.0}}'"
    )))
    .expect("translated");
    let refused: Vec<_> = t
        .lines
        .iter()
        .filter(|l| l.outcome == Outcome::Refused)
        .collect();
    assert!(refused.is_empty(), "{refused:?}");
    let s = spec_of(&t).spec;
    let d = &s.workload.dataset;
    assert_eq!(d.kind, DatasetKind::Image);
    let img = d.image.expect("image block");
    assert_eq!(
        (img.count, img.width, img.height),
        (2, 48, 64),
        "(H, W, 1) keys"
    );
    assert_eq!(d.input_tokens, Some(TokenCount::Fixed(32)));
    assert!(
        s.workload.ignore_eos,
        "vLLM forces ignore_eos for random-mm"
    );
    for (extra, flag, why) in [
        ("", "--random-mm-bucket-config", "servebench sends one size"),
        (
            " --random-mm-bucket-config '{(8, 8, 1): 1, (8, 8, 4): 1}'",
            "--random-mm-bucket-config",
            "servebench sends no video",
        ),
        (
            " --random-mm-bucket-config '{(8, 8, 1): 1}' --random-mm-num-mm-items-range-ratio 0.5 \
             --random-mm-base-items-per-request 2",
            "--random-mm-num-mm-items-range-ratio",
            "from [1, 3]",
        ),
    ] {
        let t = peer::vllm::translate(&words(&format!("{base}{extra}"))).expect("translated");
        let line = t
            .lines
            .iter()
            .find(|l| l.outcome == Outcome::Refused)
            .unwrap_or_else(|| panic!("{extra}: {:?}", t.lines));
        assert!(line.flag.starts_with(flag), "{extra}: {line:?}");
        assert!(line.text.contains(why), "{extra}: {line:?}");
        assert_eq!(spec_of(&t).spec.workload.dataset.kind, DatasetKind::Image);
    }
    let t = peer::vllm::translate(&words(
        "vllm bench serve --dataset-name random-mm --random-mm-bucket-config '{(8, 8, 1): 1}'",
    ))
    .expect("translated");
    assert!(!t.faithful());
    assert_eq!(spec_of(&t).spec.workload.dataset.kind, DatasetKind::Random);
    let e = peer::vllm::translate(&words(&format!(
        "{base} --random-mm-bucket-config '{{(8, 8, 1): -1}}'"
    )))
    .expect_err("a negative weight stops vLLM");
    assert!(e.to_string().contains("non-negative"), "{e}");
    // custom_image: servebench's jsonl reads its lines.
    let t = peer::vllm::translate(&words(
        "vllm bench serve --backend openai-chat --endpoint /v1/chat/completions \
         --dataset-name custom_image --dataset-path imgs.jsonl --custom-output-len 16",
    ))
    .expect("translated");
    let s = spec_of(&t).spec;
    assert_eq!(s.workload.dataset.kind, DatasetKind::Jsonl);
    assert_eq!(s.workload.dataset.path.as_deref(), Some("imgs.jsonl"));
    assert_eq!(
        s.workload.dataset.output_tokens,
        Some(TokenCount::Fixed(16))
    );
}

fn fixture(name: &str) -> Vec<String> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/peer-flags")
        .join(name);
    std::fs::read_to_string(&p)
        .expect("fixture")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The tables hold exactly the flags of the tools' parsers (scripts/peer-flags' output for
/// SGLang 0.5.23 and vLLM 0.33.0), in their order.
#[test]
fn every_flag_of_the_peers_parsers_has_a_row() {
    for (tool, file) in [("sglang", "sglang-0.5.23.txt"), ("vllm", "vllm-0.33.0.txt")] {
        let mut want = fixture(file);
        let mut have: Vec<String> = peer::flag_names(tool)
            .into_iter()
            .map(str::to_owned)
            .collect();
        want.sort();
        have.sort();
        let missing: Vec<&String> = want.iter().filter(|f| !have.contains(f)).collect();
        let extra: Vec<&String> = have.iter().filter(|f| !want.contains(f)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{tool}: flags of the parser without a row: {missing:?}; rows the parser has not: \
             {extra:?}"
        );
    }
}

/// Each flag given alone gets exactly one line (mapped, ignored or refused), never a panic,
/// and the spec still validates.
#[test]
fn each_flag_given_alone_gets_one_line() {
    for tool in ["sglang", "vllm"] {
        for flag in peer::flag_names(tool) {
            let value: &[&str] = match flag {
                "--goodput" => &["ttft:100"],
                "--header" | "--metadata" => &["k=v"],
                "--random-range-ratio" | "--gsp-range-ratio" => &["0.5"],
                "--timed-trace-sec-multiplier" => &["0.001"],
                "--base-url" => &["http://10.0.0.1:9000"],
                "--host" => &["10.0.0.1"],
                "--extra-request-body" | "--extra-body" => &["{\"top_k\": 1}"],
                _ => &["1"],
            };
            let is_switch = peer_switch(tool, flag);
            let mut argv = vec![flag.to_owned()];
            if !is_switch {
                argv.extend(value.iter().map(|s| (*s).to_owned()));
            }
            let t = match tool {
                "sglang" => peer::sglang::translate(&argv),
                _ => peer::vllm::translate(&argv),
            }
            .unwrap_or_else(|e| panic!("{tool} {argv:?}: {e}"));
            let given: Vec<_> = t
                .lines
                .iter()
                .filter(|l| l.outcome != Outcome::Default && l.flag.split(' ').next() == Some(flag))
                .collect();
            assert_eq!(given.len(), 1, "{tool} {argv:?}: {:?}", t.lines);
            assert!(
                t.unknown.is_empty() && t.stray.is_empty(),
                "{tool} {argv:?}"
            );
            let yaml = t.to_yaml("x");
            parse_str(&yaml, "x.yaml")
                .unwrap_or_else(|e| panic!("{tool} {argv:?}: invalid spec\n{e}\n{yaml}"));
        }
    }
}

fn peer_switch(tool: &str, flag: &str) -> bool {
    // A switch given a value is a stray token; find out from the parser itself.
    let t = match tool {
        "sglang" => peer::sglang::translate(&[flag.to_owned()]),
        _ => peer::vllm::translate(&[flag.to_owned()]),
    };
    match t {
        Ok(_) => true,
        Err(e) => !e.to_string().contains("needs a value"),
    }
}

/// Issue 51: `--metric-percentiles 90,95,99` was ignored ("servebench's percentiles are
/// p50, p90 and p99"); now the levels beyond p50 and p99 of `--percentile-metrics` (default
/// ttft,tpot,itl) are written into `compare.metrics`, which the run's summary shows.
#[test]
fn vllm_metric_percentiles_reach_the_spec() {
    let t = peer::vllm::translate(&words(
        "vllm bench serve --model m --metric-percentiles 90,95,99 --goodput ttft:500",
    ))
    .expect("translated");
    let s = spec_of(&t).spec;
    let m = &s.compare.metrics;
    for want in [
        "ttft_p90",
        "tpot_p95",
        "itl_p95",
        "ttft_p95",
        "output_throughput",
    ] {
        assert!(m.iter().any(|x| x == want), "{want} missing from {m:?}");
    }
    assert!(!m.iter().any(|x| x.ends_with("_p99")), "{m:?}");
    let t = peer::vllm::translate(&words(
        "vllm bench serve --percentile-metrics e2el --metric-percentiles 95",
    ))
    .expect("translated");
    assert!(
        spec_of(&t)
            .spec
            .compare
            .metrics
            .contains(&"e2e_p95".to_owned())
    );
    let t = peer::vllm::translate(&words("vllm bench serve --model m")).expect("ok");
    assert_eq!(
        spec_of(&t).spec.compare.metrics,
        servebench_spec::types::CompareSettings::default().metrics
    );
}

/// A `--host` that holds a port or a scheme is refused with what to write (issue 50: it was
/// read as an IPv6 address, `http://[127.0.0.1:8000]:30000`); an IPv6 address is a host.
#[test]
fn a_host_holding_a_port_or_a_url_is_refused_with_the_flags_to_write() {
    for (tool, argv) in [
        (
            "sglang",
            "--host 127.0.0.1:8000 --dataset-name random --random-input-len 64",
        ),
        (
            "vllm",
            "--host 127.0.0.1:8000 --dataset-name random --random-input-len 64",
        ),
    ] {
        let r = match tool {
            "sglang" => peer::sglang::translate(&words(argv)),
            _ => peer::vllm::translate(&words(argv)),
        };
        let e = r.expect_err("a host with a port");
        assert_eq!(
            e.to_string(),
            "`--host 127.0.0.1:8000`: it holds a port: give `--host 127.0.0.1 --port 8000`",
            "{tool}"
        );
    }
    let e = peer::sglang::translate(&words("--host [::1]:9000")).expect_err("bracketed");
    assert!(
        e.to_string().contains("give `--host ::1 --port 9000`"),
        "{e}"
    );
    let e = peer::vllm::translate(&words("--host http://h:8000")).expect_err("a URL");
    assert!(
        e.to_string().contains("give the URL as `--base-url`"),
        "{e}"
    );
    for ok in ["::1", "[::1]", "gpu-node-3", "10.0.0.7"] {
        let t = peer::sglang::translate(&words(&format!(
            "--host {ok} --port 9000 --dataset-name random --random-input-len 64"
        )))
        .expect("a host alone");
        let url = if ok == "::1" { "[::1]" } else { ok };
        assert_eq!(
            spec_of(&t).spec.target.base_url.as_deref(),
            Some(format!("http://{url}:9000").as_str())
        );
    }
}
