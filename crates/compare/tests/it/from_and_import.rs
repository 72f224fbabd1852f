//! Issue 41, item 1: one rule for what is comparable. The import of a `bench_serving`
//! result and a run of the spec `servebench from` makes of the same command measure the
//! same workload, so their fingerprints must not differ in what the converters wrote: the
//! concurrency limit (import writes it as a one-value sweep, `from` in `workload`), the
//! seed and warm-up requests (the tool's defaults, filled alike) and `target.base_url`
//! (host-only, as in the spec hash). Before the fix these four were listed as
//! not-comparable.

use std::path::PathBuf;

use servebench_compare::fingerprint;
use servebench_result::Origin;
use servebench_result::import::{ImportOptions, ImportTool, import_file};

const COMMAND: &str = "python3 -m sglang.bench_serving --backend sglang --dataset-name random \
                       --random-input-len 512 --random-output-len 128 --num-prompts 20 \
                       --request-rate -1 --max-concurrency 1 --model glm-5 --port 8123";

#[test]
fn an_import_and_a_run_of_the_from_spec_of_one_command_are_comparable_in_workload() {
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sglang-seed-command.jsonl");
    let opts = ImportOptions {
        model: Some("glm-5".into()),
        variant: Some("sglang".into()),
        ..ImportOptions::default()
    };
    let imported = import_file(ImportTool::Sglang, &fixture, &opts)
        .expect("imports")
        .remove(0);

    let argv: Vec<String> = COMMAND.split_whitespace().map(String::from).collect();
    let t = servebench_spec::peer::sglang::translate(&argv).expect("translates");
    let spec = servebench_spec::load::parse_str(&t.draft.to_yaml(), "from.yaml")
        .expect("the from spec parses");
    // A servebench run of that spec: the imported run's measurements under the from spec
    // (the fingerprint reads the spec, host and tool; the values do not enter it).
    let mut run = imported.clone();
    run.origin = Origin::Measured;
    run.run_id = "20261201T000000Z-0001".into();
    run.spec = spec.file;
    run.spec.spec.variants[0].name = "sglang".into();
    run.import = None;

    let (diffs, _) = fingerprint::compare(&imported, &run);
    let fields: Vec<&str> = diffs.iter().map(|d| d.field.as_str()).collect();
    for converter_made in [
        "workload.max_concurrency",
        "workload.seed",
        "workload.warmup_requests",
        "target.base_url",
    ] {
        assert!(
            !fields.contains(&converter_made),
            "{converter_made} is made by the converters, not measured: {diffs:?}"
        );
    }
    assert!(
        fields.iter().all(|f| !f.starts_with("workload.")),
        "the measured workload is the same: {diffs:?}"
    );
}

/// Issue 51: the same without `--model` — `from` writes `target.model: auto`, the run
/// records the model the server listed, the import names it — and with the tokenizer the
/// tool records as a hub id: neither `target.model` (`auto` against the name) nor
/// `target.tokenizer` (`server` against `local`) differs any more.
#[test]
fn from_with_model_auto_and_import_naming_the_model_are_comparable_in_target() {
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sglang-seed-command.jsonl");
    let opts = ImportOptions {
        model: Some("glm-5".into()),
        variant: Some("sglang".into()),
        ..ImportOptions::default()
    };
    let mut imported = import_file(ImportTool::Sglang, &fixture, &opts)
        .expect("imports")
        .remove(0);
    let (tok, path) = servebench_spec::TokenizerSource::of_peer(Some("zai-org/GLM-5"));
    assert_eq!(imported.spec.spec.target.tokenizer, tok);
    assert_eq!(imported.spec.spec.target.tokenizer_path, path);
    imported.spec.spec.target.tokenizer_path = None;

    let command = COMMAND.replace(" --model glm-5", " --tokenizer zai-org/GLM-5");
    let argv: Vec<String> = command.split_whitespace().map(String::from).collect();
    let t = servebench_spec::peer::sglang::translate(&argv).expect("translates");
    let spec = servebench_spec::load::parse_str(&t.draft.to_yaml(), "from.yaml")
        .expect("the from spec parses");
    assert_eq!(spec.file.spec.target.model, "auto");
    let mut run = imported.clone();
    run.origin = Origin::Measured;
    run.run_id = "20261201T000000Z-0001".into();
    run.spec = spec.file;
    run.spec.spec.variants[0].name = "sglang".into();
    run.import = None;
    run.preflight = vec![servebench_result::checks::BlockChecks {
        block: 0,
        variant: "sglang".into(),
        engine: None,
        model: Some("glm-5".into()),
        checks: Vec::new(),
        warnings: Vec::new(),
    }];

    let (diffs, _) = fingerprint::compare(&imported, &run);
    assert!(
        diffs.iter().all(|d| !d.field.starts_with("target.")),
        "what the converters write is not a difference: {diffs:?}"
    );
    // A run that served another model is.
    run.preflight[0].model = Some("glm-4".into());
    let (diffs, _) = fingerprint::compare(&imported, &run);
    assert!(
        diffs
            .iter()
            .any(|d| d.field == "target.model" && d.candidate == "glm-4"),
        "{diffs:?}"
    );
}
