//! The recorder on a committed result: what it is handed is saved at once (the file on disk
//! holds it) and told to the reporter, a measured trial with what its policy adds beside it
//! in the same save; an unmeasured one is saved unsaid.

use std::sync::{Arc, Mutex};

use servebench_result::{ResultStore, RunResult, TrialResult, load_result};
use servebench_spec::plan::PlannedTrial;

use super::{Recorder, Reporter};

/// A reporter that keeps what it is told.
#[derive(Default, Clone)]
struct Said(Arc<Mutex<Vec<String>>>);

impl Said {
    fn lines(&self) -> Vec<String> {
        self.0.lock().expect("lock").clone()
    }
    fn push(&self, s: String) {
        self.0.lock().expect("lock").push(s);
    }
}

impl Reporter for Said {
    fn line(&self, msg: &str) {
        self.push(format!("line {msg}"));
    }
    fn warn(&self, msg: &str) {
        self.push(format!("warn {msg}"));
    }
    fn trial_start(&self, t: &PlannedTrial, point: &str) {
        self.push(format!("start #{} {point}", t.seq));
    }
    fn trial_end(&self, t: &TrialResult) {
        self.push(format!("end #{}", t.seq));
    }
    fn add_planned(&mut self, trials: usize) {
        self.push(format!("planned +{trials}"));
    }
    fn finish(&self) {
        self.push("finish".into());
    }
}

/// The report crate's committed search result, and a store for it in a scratch folder.
fn fixture(test: &str) -> (RunResult, ResultStore) {
    let text = include_str!("../../../report/tests/fixtures/search.json");
    let result: RunResult = serde_json::from_str(text).expect("the fixture parses");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/tmp/recorder")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let store = ResultStore::new(&dir, &result.run_id);
    (result, store)
}

/// The fixture's first trial as a new one, `seq` after every recorded trial.
fn another(result: &RunResult) -> TrialResult {
    let mut t = result.trials[0].clone();
    t.seq = result.trials.iter().map(|t| t.seq + 1).max().unwrap_or(0);
    t
}

#[test]
fn a_measured_trial_is_said_and_saved_with_what_its_policy_adds() {
    let (result, store) = fixture("measured");
    let (before, said) = (result.trials.len(), Said::default());
    let trial = another(&result);
    let seq = trial.seq;
    let mut rec = Recorder::new(result, &store, Box::new(said.clone()));
    rec.trial(trial, &[], |t, r| {
        r.error = Some(format!("beside #{}", t.seq));
    })
    .expect("saved");
    let on_disk = load_result(&store.result_path).expect("the file");
    assert_eq!(on_disk.trials.len(), before + 1);
    assert_eq!(on_disk.trials.last().map(|t| t.seq), Some(seq));
    assert_eq!(on_disk.error, Some(format!("beside #{seq}")));
    assert_eq!(said.lines(), vec![format!("end #{seq}")]);
    let kept = rec.finish();
    assert_eq!(kept.trials.len(), before + 1);
    assert_eq!(said.lines().last().map(String::as_str), Some("finish"));
}

#[test]
fn an_unmeasured_trial_is_saved_unsaid_and_a_kept_change_waits_for_the_next_save() {
    let (result, store) = fixture("unmeasured");
    let said = Said::default();
    let trial = another(&result);
    let mut rec = Recorder::new(result, &store, Box::new(said.clone()));
    rec.keep(|r| r.error = Some("kept".into()));
    assert!(!store.result_path.exists(), "nothing saved by keep");
    rec.unmeasured(vec![trial]).expect("saved");
    let on_disk = load_result(&store.result_path).expect("the file");
    assert_eq!(on_disk.error.as_deref(), Some("kept"));
    assert!(said.lines().is_empty(), "{:?}", said.lines());
}

#[test]
fn every_save_stamps_the_change() {
    let (mut result, store) = fixture("stamp");
    result.updated_at = "2000-01-01T00:00:00Z".into();
    let mut rec = Recorder::new(result, &store, Box::new(Said::default()));
    rec.update(|r| r.error = None).expect("saved");
    let on_disk = load_result(&store.result_path).expect("the file");
    assert_ne!(on_disk.updated_at, "2000-01-01T00:00:00Z");
}
