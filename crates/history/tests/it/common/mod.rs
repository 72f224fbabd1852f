//! Synthetic histories from one real simulator result (`tests/fixtures/run.json`, one
//! variant `base`, one point, five trials): each run a copy with its own run id, start time
//! and level, written into a folder as `servebench run` would.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The fixture: a complete result of bench/history.py's spec.
pub(crate) fn fixture() -> Value {
    let text = include_str!("../../fixtures/run.json");
    serde_json::from_str(text).expect("the fixture parses")
}

/// Fixed trial-to-trial spread (about 1%), rotated per run so runs differ a little.
const NOISE: [f64; 7] = [0.99, 1.01, 1.0, 0.985, 1.015, 1.005, 0.995];

/// Output throughput of a run at level 1.
pub(crate) const BASE_TPUT: f64 = 6000.0;

/// The run id of run `i` (from 0).
pub(crate) fn run_id(i: usize) -> String {
    format!("202611{:02}T100000Z-{i:04x}", i + 1)
}

/// Run `i` (from 0) of a history at `level` (output throughput × level, TPOT ÷ level),
/// started on day `i + 1` of November 2026.
pub(crate) fn run(i: usize, level: f64) -> Value {
    let mut v = fixture();
    v["run_id"] = Value::from(run_id(i));
    v["created_at"] = Value::from(format!("2026-11-{:02}T10:00:00Z", i + 1));
    v["updated_at"] = Value::from(format!("2026-11-{:02}T10:01:00Z", i + 1));
    v["requests_file"] = Value::from(format!("{}.requests.jsonl", run_id(i)));
    let trials = v["trials"].as_array_mut().expect("trials");
    for (t, trial) in trials.iter_mut().enumerate() {
        let noise = NOISE[(3 * i + t) % NOISE.len()];
        let all = &mut trial["summary"]["all"];
        all["output_throughput"] = Value::from(BASE_TPUT * level * noise);
        all["tpot"]["p50"] = Value::from(2.0 / level / noise);
    }
    v
}

/// Set the driver version of the run's (single) accelerator, adding one when it has none.
pub(crate) fn with_driver(mut v: Value, driver: &str) -> Value {
    v["accelerators"] = serde_json::json!([{
        "index": 0,
        "name": "NVIDIA H200",
        "memory_total_mib": 143771,
        "driver_version": driver,
    }]);
    v
}

/// Write `v` as `<dir>/<run id>.json`.
pub(crate) fn write(dir: &Path, v: &Value) -> PathBuf {
    std::fs::create_dir_all(dir).expect("mkdir");
    let id = v["run_id"].as_str().expect("run id");
    let path = dir.join(format!("{id}.json"));
    std::fs::write(&path, serde_json::to_string(v).expect("serialises")).expect("write");
    path
}

/// Write one run per level into `dir`.
pub(crate) fn write_levels(dir: &Path, levels: &[f64]) -> Vec<PathBuf> {
    levels
        .iter()
        .enumerate()
        .map(|(i, &l)| write(dir, &run(i, l)))
        .collect()
}

/// `n` runs at 1.0, then the levels of `tail`.
pub(crate) fn flat_then(n: usize, tail: &[f64]) -> Vec<f64> {
    let mut v = vec![1.0; n];
    v.extend_from_slice(tail);
    v
}

/// Options: output throughput only, ages counted from 2026-12-21 10:00 UTC.
pub(crate) fn opts() -> servebench_history::HistoryOptions {
    servebench_history::HistoryOptions {
        metrics: Some(vec!["output_throughput".into()]),
        now: Some(time::macros::datetime!(2026-12-21 10:00 UTC)),
        ..Default::default()
    }
}

/// The history of the folder `dir`.
pub(crate) fn history_of(dir: &Path) -> servebench_history::History {
    let loaded = servebench_history::read_paths(&[dir.to_owned()]).expect("reads");
    servebench_history::history(loaded, vec![dir.display().to_string()], &opts()).expect("analyses")
}
