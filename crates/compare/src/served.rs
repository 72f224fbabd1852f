//! What a run actually measured, beside what its spec said (issue 51): the model served and
//! the engine with its version, read from each block's preflight. Two runs of one spec with
//! `target.model: auto` against servers serving different models, or against different
//! engines, measured different things; the fingerprint ([`crate::fingerprint`]) tells them
//! apart by these leaves:
//!
//! * `target.model`: the model the blocks measured (`BlockChecks::model`; in results from
//!   before it was recorded, the `target.model: auto` check's detail) in place of the word
//!   `auto`, so that a run of `model: auto` and an import naming the model compare alike;
//! * `served.engine` and `served.engine_version`: the engines of the blocks and the versions
//!   they reported (`unknown` where one did not).
//!
//! A run whose blocks recorded none of these (imports, results from before the preflight)
//! has no `served.*` leaves, and the fingerprint notes that they could not be checked.

use std::collections::{BTreeMap, BTreeSet};

use servebench_result::RunResult;
use servebench_result::checks::{BlockChecks, Guarantee};

/// The prefix of the leaves read from the preflight alone.
pub(crate) const PREFIX: &str = "served.";

/// The model a block measured: recorded, or named by the `target.model: auto` check of a
/// result written before the model was recorded.
fn block_model(b: &BlockChecks) -> Option<String> {
    if let Some(m) = &b.model {
        return Some(m.clone());
    }
    b.checks
        .iter()
        .filter(|c| c.guarantee == Guarantee::ModelServed)
        .find_map(|c| {
            let rest = c.detail.strip_prefix("target.model: auto: `")?;
            Some(rest.split('`').next()?.to_owned())
        })
}

/// The distinct values in order, joined: one model is `m`, two are `[a, b]`.
fn joined(values: BTreeSet<String>) -> Option<String> {
    match values.len() {
        0 => None,
        1 => values.into_iter().next(),
        _ => Some(format!(
            "[{}]",
            values.into_iter().collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The model `r` measured: the blocks' models where recorded, else the spec's.
pub fn model(r: &RunResult) -> String {
    joined(r.preflight.iter().filter_map(block_model).collect())
        .unwrap_or_else(|| r.spec.spec.target.model.clone())
}

/// Add the served model (over the spec's `target.model`) and the engine leaves to `out`.
pub(crate) fn add_leaves(r: &RunResult, out: &mut BTreeMap<String, String>) {
    out.insert("target.model".into(), model(r));
    let engines: Vec<_> = r
        .preflight
        .iter()
        .filter_map(|b| b.engine.as_ref())
        .collect();
    if let Some(e) = joined(engines.iter().map(|e| e.engine.to_string()).collect()) {
        out.insert(format!("{PREFIX}engine"), e);
    }
    let versions = engines
        .iter()
        .map(|e| e.version.clone().unwrap_or_else(|| "unknown".into()))
        .collect();
    if let Some(v) = joined(versions) {
        out.insert(format!("{PREFIX}engine_version"), v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use servebench_result::checks::{CheckOutcome, CheckRecord, EngineRecord, EngineSource};

    fn block(model: Option<&str>, detail: Option<&str>) -> BlockChecks {
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
            checks: detail
                .map(|d| CheckRecord::new(Guarantee::ModelServed, CheckOutcome::Holds, d))
                .into_iter()
                .collect(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn the_block_model_is_recorded_or_read_from_the_auto_check() {
        assert_eq!(block_model(&block(Some("m"), None)).as_deref(), Some("m"));
        let old = block(
            None,
            Some("target.model: auto: `Qwen/Qwen3-8B`, the one model /v1/models lists"),
        );
        assert_eq!(block_model(&old).as_deref(), Some("Qwen/Qwen3-8B"));
        assert_eq!(block_model(&block(None, Some("`m` is served"))), None);
        let two: BTreeSet<String> = ["b", "a"].map(String::from).into();
        assert_eq!(joined(two).as_deref(), Some("[a, b]"));
    }
}
