//! Every spec under `specs/` is valid; the seed spec plans as docs/architecture.md says.

use std::path::PathBuf;

fn specs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../specs")
}

#[test]
fn every_committed_spec_is_valid() {
    let mut n = 0;
    for entry in std::fs::read_dir(specs_dir()).expect("specs/ exists") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            if let Err(e) = servebench_spec::load(&path) {
                panic!("{} is invalid:\n{e}", path.display());
            }
            n += 1;
        }
    }
    assert!(n >= 2, "expected the seed and sim-ab specs, found {n}");
}

#[test]
fn seed_spec_plans_fifty_trials_in_ten_blocks() {
    let spec = servebench_spec::load(&specs_dir().join("glm5-moe-runner-cutlass-vs-cutedsl.yaml"))
        .expect("seed spec is valid");
    let plan = servebench_spec::plan::plan(&spec.file);
    assert_eq!(plan.points.len(), 5);
    assert_eq!(plan.trial_count, 50);
    assert_eq!(plan.blocks.len(), 10);
    assert_eq!(plan.server_starts, 10);
    // Interleaved: cutlass, cutedsl, cutlass, … each block one sweep in order.
    let order: Vec<(&str, u32)> = plan
        .blocks
        .iter()
        .map(|b| (b.variant.as_str(), b.trials[0].trial))
        .collect();
    assert_eq!(
        &order[..4],
        &[
            ("cutlass", 1),
            ("cutedsl", 1),
            ("cutlass", 2),
            ("cutedsl", 2)
        ]
    );
    for b in &plan.blocks {
        let points: Vec<usize> = b.trials.iter().map(|t| t.point).collect();
        assert_eq!(points, vec![0, 1, 2, 3, 4]);
    }
    // Paired prompts: the same seed for both variants at the same (t, point).
    assert_eq!(
        plan.blocks[0].trials[2].prompt_seed,
        plan.blocks[1].trials[2].prompt_seed
    );
    assert_ne!(
        plan.blocks[0].trials[2].prompt_seed,
        plan.blocks[2].trials[2].prompt_seed
    );
    assert!(plan.spec_hash.starts_with("sha256:") && plan.spec_hash.len() == 7 + 64);
    // 20 requests at c=64…1024 cannot reach those concurrencies: warned, not fatal.
    assert!(
        spec.warnings
            .iter()
            .any(|w| w.message.contains("max_concurrency 1024"))
    );
}

/// Issue 41, item 11: the README's main job validates without a warning (it warned about
/// itself: 48 requests at c=32 are 1.5 waves, close to load-not-sustained).
#[test]
fn the_main_job_validates_without_warnings() {
    let spec = servebench_spec::load(&specs_dir().join("sim-ab.yaml")).expect("valid");
    let w: Vec<String> = spec.warnings.iter().map(|w| w.message.clone()).collect();
    assert!(w.is_empty(), "specs/sim-ab.yaml warns: {w:?}");
}
