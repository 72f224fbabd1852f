//! The canonical spec hash: sha256 of the resolved spec (defaults filled in) as compact
//! JSON with keys sorted, before `${port}` / `${env.*}` substitution, without host-only
//! fields. Insensitive to key order, comments, formatting and spelled-out defaults.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::types::SpecFile;

/// Fields that describe the host, not the experiment (JSON pointers into the spec).
pub const HOST_ONLY_FIELDS: [&str; 3] = [
    "/spec/server/working_dir",
    "/spec/target/base_url",
    "/spec/target/tls/ca_file",
];

/// Fields that say how a run is observed, not what it measures (JSON pointers into the
/// spec): turning telemetry on, or giving the model's figures, keeps the hash.
pub const OBSERVATION_FIELDS: [&str; 2] = ["/spec/telemetry", "/spec/model_facts"];

/// Fields that say how a host is prepared for the run, not what it measures: the set-up
/// script and the files it makes (`spec.setup`); declaring them keeps a spec's hash.
pub const PREPARATION_FIELDS: [&str; 1] = ["/spec/setup"];

/// The canonical JSON the hash is taken over.
pub fn canonical_json(spec: &SpecFile) -> String {
    let mut v = serde_json::to_value(spec).unwrap_or(Value::Null);
    strip_host_only(&mut v);
    sort_keys(&mut v).to_string()
}

/// `sha256:<hex>` of [`canonical_json`].
pub fn spec_hash(spec: &SpecFile) -> String {
    let digest = Sha256::digest(canonical_json(spec).as_bytes());
    format!("sha256:{}", hex::encode(digest))
}

fn strip_host_only(v: &mut Value) {
    for ptr in HOST_ONLY_FIELDS
        .iter()
        .chain(&OBSERVATION_FIELDS)
        .chain(&PREPARATION_FIELDS)
    {
        let (parent, key) = ptr.rsplit_once('/').unwrap_or(("", ptr));
        if let Some(Value::Object(m)) = v.pointer_mut(parent) {
            m.remove(key);
        }
    }
    if let Some(Value::Array(vs)) = v.pointer_mut("/spec/variants") {
        for variant in vs {
            if let Value::Object(m) = variant {
                m.remove("base_url");
            }
        }
    }
}

fn sort_keys(v: &mut Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<String> = m.keys().cloned().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                if let Some(mut child) = m.remove(&k) {
                    out.insert(k, sort_keys(&mut child));
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter_mut().map(sort_keys).collect()),
        other => other.clone(),
    }
}
