//! Issue 51: the fingerprint holds what was served (the model `target.model: auto` resolved
//! to, the engine and its version from the preflight), and a contended host's probe change
//! is a note of its size, not a difference.

use servebench_compare::fingerprint;
use servebench_result::checks::{
    BlockChecks, CheckOutcome, CheckRecord, EngineRecord, EngineSource, Guarantee,
};
use servebench_result::{HostLoad, HostProbe, RunResult};

fn block(model: Option<&str>) -> BlockChecks {
    BlockChecks {
        block: 0,
        variant: "a".into(),
        engine: Some(EngineRecord {
            engine: servebench_engines::Engine::Sglang,
            version: Some("0.5.2".into()),
            source: EngineSource::Detected,
            evidence: "owned_by".into(),
        }),
        model: model.map(str::to_owned),
        checks: vec![CheckRecord::new(
            Guarantee::ModelServed,
            CheckOutcome::Holds,
            "the spec's model is listed",
        )],
        warnings: Vec::new(),
    }
}

fn aa() -> RunResult {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../results/gpu-llamacpp-aa/20261130T153438Z-3469.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("result")
}

fn serving(model: &str, version: &str) -> RunResult {
    let mut r = aa();
    r.spec.spec.target.model = "auto".into();
    let mut b = block(Some(model));
    if let Some(e) = b.engine.as_mut() {
        e.version = Some(version.into());
    }
    r.preflight = vec![b];
    r
}

/// Issue 51: two `model: auto` runs against servers serving different models compared
/// as comparable (the fingerprint read the word `auto`); now `target.model` differs,
/// naming both models, and so does the engine's version.
#[test]
fn auto_runs_of_different_served_models_or_engines_differ() {
    let fields = |a: &RunResult, b: &RunResult| -> Vec<String> {
        fingerprint::compare(a, b)
            .0
            .into_iter()
            .map(|d| format!("{}: {} -> {}", d.field, d.baseline, d.candidate))
            .collect()
    };
    let sim = serving("sim-model", "0.5.2");
    assert_eq!(
        fields(&sim, &serving("Qwen/Qwen3-8B", "0.5.2")),
        ["target.model: sim-model -> Qwen/Qwen3-8B"]
    );
    assert_eq!(
        fields(&sim, &serving("sim-model", "0.5.3")),
        ["served.engine_version: 0.5.2 -> 0.5.3"]
    );
    assert!(fields(&sim, &serving("sim-model", "0.5.2")).is_empty());
    // `auto` resolved is the model named: a spec naming it compares alike.
    let mut named = serving("sim-model", "0.5.2");
    named.spec.spec.target.model = "sim-model".into();
    assert!(fields(&sim, &named).is_empty());
    // A run without the preflight (older, imported) is not a difference by it: a note.
    let mut old = named.clone();
    old.preflight.clear();
    let (d, notes) = fingerprint::compare(&old, &sim);
    assert!(d.is_empty(), "{d:?}");
    assert!(
        notes.iter().any(|n| n.contains("served.engine")),
        "{notes:?}"
    );
}

fn run(all_core: f64, other_cpus: f64) -> RunResult {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../results/gpu-llamacpp-aa/20261130T153438Z-3469.json"
    );
    let mut r: RunResult =
        serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("result");
    r.host_probe = Some(HostProbe {
        version: 1,
        scope: "server-host".into(),
        single_thread: 40.0,
        all_core,
        threads: 2,
        memory_gbps: 1.0,
        cpu_mhz: None,
        steal_share: None,
        took_s: 1.0,
    });
    for s in &mut r.servers {
        s.host_probe = None;
    }
    for t in &mut r.trials {
        t.host_load = Some(HostLoad {
            wall_s: 2.0,
            cpus: 2,
            steal_share: 0.0,
            other_cpus,
            server_cpus: None,
            servebench_cpus: 0.3,
        });
    }
    r
}

/// Issue 51: two runs 20 s apart on one loaded 2-core VM read all-core −7.7% and were
/// NOT COMPARABLE. Where a trial's host was contended, a change is a note with its size
/// (on the loaded VM back-to-back A/A runs moved by up to 20×, and a CPU hog was not
/// told apart from them); on a quiet host the quiet floor still decides.
#[test]
fn a_contended_hosts_probe_change_is_a_note() {
    let (d, notes) = fingerprint::compare(&run(45.0, 1.4), &run(41.5, 1.4));
    assert!(d.is_empty(), "{d:?}");
    assert!(
        notes
            .iter()
            .any(|n| n.contains("host_probe.all_core -7.8%") && n.contains("loaded")),
        "{notes:?}"
    );
    let (d, notes) = fingerprint::compare(&run(45.0, 1.4), &run(2.2, 1.9));
    assert!(d.is_empty(), "{d:?}");
    assert!(
        notes
            .iter()
            .any(|n| n.contains("host_probe.all_core -95.1%")),
        "{notes:?}"
    );
    // One contended run is enough: its probes say little of the machine.
    assert!(
        fingerprint::compare(&run(45.0, 0.1), &run(41.5, 1.9))
            .0
            .is_empty()
    );
    let (d, _) = fingerprint::compare(&run(45.0, 0.1), &run(41.5, 0.1));
    assert_eq!(d.len(), 1, "a quiet host's floor decides: {d:?}");
}
