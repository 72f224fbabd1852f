//! `servebench rerun RESULT`: run the resolved spec stored inside a published result again
//! (not the file in `specs/`, which may have been edited since), then say per variant, sweep
//! point and metric whether the published value reproduces (docs/statistics-method.md, "Reproduced or
//! not"; the rule is `servebench_stats::reproduce`).
//!
//! * [`prepare`] rebuilds the spec from the result, applies host-only overrides
//!   ([`Override`]) and checks that the workload hash is still the published one.
//! * [`assess`] compares the new result with the published one ([`RerunReport`]);
//!   [`render`] prints it.

mod assess;
mod env;
mod outputs;
mod render;

pub use assess::{ClaimRow, RERUN_FORMAT, RerunReport, Summary, ValueRow, assess};
pub use outputs::{OutputClaim, OutputsAcross, OutputsReproduction};
pub use render::render;

use std::path::{Path, PathBuf};

use servebench_spec::Spec;
use servebench_spec::hash::{HOST_ONLY_FIELDS, spec_hash};
use servebench_spec::overrides::{self, OverrideError};

use servebench_result::{Origin, RunResult};

/// A host-only field set on the command line (`--set KEY=VALUE`): spec's override, limited
/// here to `server.working_dir`, `target.base_url`, `variants.<name>.base_url` and the other
/// host-only fields of the hash.
pub use servebench_spec::overrides::Override;

/// Why a published result cannot be re-run.
#[derive(Debug, thiserror::Error)]
pub enum RerunError {
    /// An imported result has no launch recipe servebench measured with.
    #[error(
        "{file} is imported from {tool}: servebench did not measure it, so there is no \
         servebench spec to re-run. Write a spec with the same workload and compare the two \
         results instead: `servebench compare {file} NEW_RESULT`"
    )]
    Imported {
        /// The file.
        file: String,
        /// The tool.
        tool: String,
    },
    /// An override of a field that is not host-only.
    #[error(
        "`--set {key}` is refused: only host-specific fields can be overridden without \
         changing the workload ({allowed}). A different server path belongs in the spec as \
         `${{env.NAME}}`; anything else is a new experiment: edit the spec and `servebench \
         run` it"
    )]
    NotHostOnly {
        /// The key given.
        key: String,
        /// The keys allowed.
        allowed: String,
    },
    /// An override that spec's override rules refuse.
    #[error(transparent)]
    Override(OverrideError),
    /// `--set` without `=`.
    #[error("`--set {0}` needs KEY=VALUE, e.g. `--set target.base_url=http://10.0.0.5:8000`")]
    Malformed(String),
    /// A variant named in an override is not in the spec.
    #[error("`--set {key}`: the spec has no variant `{name}` (its variants: {available})")]
    UnknownVariant {
        /// The key given.
        key: String,
        /// The variant name.
        name: String,
        /// The spec's variants.
        available: String,
    },
    /// A file the published run read differs now (or is gone): the re-run would measure
    /// another workload and judge it against the published values.
    #[error(
        "cannot re-run {file}: {input} is not the file the published run read (then {then}, \
         now {now}); a re-run with it would be judged against values measured on other \
         inputs. Restore the file (from the commit the result names), or run the spec anew \
         and compare the two results"
    )]
    InputChanged {
        /// The published result.
        file: String,
        /// The input file, as the spec names it.
        input: String,
        /// Its published hash.
        then: String,
        /// Its hash now, or why it cannot be read.
        now: String,
    },
    /// The stored spec no longer validates with this servebench.
    #[error("the spec stored in {file} does not validate with this servebench:\n{errors}")]
    Invalid {
        /// The file.
        file: String,
        /// The diagnostics.
        errors: String,
    },
    /// The stored spec hashes differently now.
    #[error(
        "the spec stored in {file} now hashes to {now}, but was published as {published}: \
         this servebench reads it differently (a default changed), so a re-run would not be \
         the same workload. Re-run it with the servebench that measured it ({version})"
    )]
    HashChanged {
        /// The file.
        file: String,
        /// The hash recorded.
        published: String,
        /// The hash now.
        now: String,
        /// The servebench version that measured.
        version: String,
    },
}

/// Parse `KEY=VALUE`.
pub fn parse_override(s: &str) -> Result<Override, RerunError> {
    Override::parse(s).map_err(|_| RerunError::Malformed(s.to_owned()))
}

fn allowed_keys() -> String {
    let mut keys: Vec<String> = HOST_ONLY_FIELDS
        .iter()
        .map(|p| p.trim_start_matches("/spec/").replace('/', "."))
        .collect();
    keys.push("variants.<name>.base_url".into());
    keys.join(", ")
}

/// Whether `key` is a host-only field (the hash leaves it out).
fn is_host_only(key: &str) -> bool {
    let variant_url = key
        .strip_prefix("variants.")
        .and_then(|r| r.strip_suffix(".base_url"))
        .is_some_and(|name| !name.is_empty() && !name.contains('.'));
    variant_url
        || HOST_ONLY_FIELDS
            .iter()
            .any(|p| p.trim_start_matches("/spec/").replace('/', ".") == key)
}

/// Apply one host-only override through spec's overrides (the same path rules as `run
/// --set`); any other key is refused.
fn apply(spec: &mut servebench_spec::SpecFile, o: &Override) -> Result<(), RerunError> {
    let not_host = || RerunError::NotHostOnly {
        key: o.key.clone(),
        allowed: allowed_keys(),
    };
    if !is_host_only(&o.key) || (o.key == "server.working_dir" && spec.spec.server.is_none()) {
        return Err(not_host());
    }
    let mut doc = serde_json::to_value(&*spec).unwrap_or(serde_json::Value::Null);
    overrides::set(&mut doc, o).map_err(|e| match e {
        OverrideError::NoSuchItem {
            item, available, ..
        } => RerunError::UnknownVariant {
            key: o.key.clone(),
            name: item,
            available,
        },
        other => RerunError::Override(other),
    })?;
    *spec = serde_json::from_value(doc).map_err(|e| {
        RerunError::Override(OverrideError::BadValue {
            arg: o.to_arg(),
            error: e.to_string(),
        })
    })?;
    Ok(())
}

/// The spec to run again: the published result's resolved spec, with `overrides` applied,
/// validated as a spec file is, and with the published hash. `spec_dir` is where relative
/// paths (datasets, provenance files, `working_dir`) resolve: by default the folder of the
/// spec path recorded in the result.
pub fn prepare(
    published: &RunResult,
    file: &str,
    overrides: &[Override],
    spec_dir: Option<&Path>,
) -> Result<Spec, RerunError> {
    if published.origin == Origin::Imported {
        return Err(RerunError::Imported {
            file: file.to_owned(),
            tool: published
                .import
                .as_ref()
                .map_or_else(|| "another tool".to_owned(), |i| i.tool.clone()),
        });
    }
    let mut spec_file = published.spec.clone();
    for o in overrides {
        apply(&mut spec_file, o)?;
    }
    let text = serde_json::to_string_pretty(&spec_file).unwrap_or_default();
    let label = format!("{file} (stored spec)");
    let mut spec = servebench_spec::parse_str(&text, &label).map_err(|e| RerunError::Invalid {
        file: file.to_owned(),
        errors: e.to_string(),
    })?;
    let now = spec_hash(&spec.file);
    if now != published.spec_hash {
        return Err(RerunError::HashChanged {
            file: file.to_owned(),
            published: published.spec_hash.clone(),
            now,
            version: published.tool.version.clone(),
        });
    }
    let recorded = published.spec_path.as_deref().map(PathBuf::from);
    spec.path = match (spec_dir, recorded) {
        (Some(dir), Some(p)) => Some(dir.join(p.file_name().unwrap_or(p.as_os_str()))),
        (Some(dir), None) => Some(dir.join("spec.yaml")),
        (None, Some(p)) => Some(p),
        (None, None) => None,
    };
    Ok(spec)
}

/// The one input-hash rule for a re-run: every file the published run read
/// (`provenance.inputs`) must hash the same in `now` (the files as they are, or the re-run's
/// own record). Results written before inputs were recorded are not checked.
pub fn check_inputs(
    published: &RunResult,
    file: &str,
    now: &[servebench_result::FileHash],
) -> Result<(), RerunError> {
    let show = |h: &servebench_result::FileHash| match (&h.sha256, &h.error) {
        (Some(s), _) => s.clone(),
        (None, Some(e)) => format!("unreadable ({e})"),
        (None, None) => "unknown".into(),
    };
    for was in &published.provenance.inputs {
        let found = now.iter().find(|n| n.path == was.path);
        let differs = found.is_none_or(|n| n.sha256 != was.sha256);
        if differs {
            return Err(RerunError::InputChanged {
                file: file.to_owned(),
                input: was.path.clone(),
                then: show(was),
                now: found.map_or_else(|| "not read".to_owned(), show),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> servebench_spec::SpecFile {
        servebench_spec::parse_str(
            "apiVersion: servebench/v1alpha1\nkind: Experiment\nmetadata: {name: t}\nspec:\n  \
             server: {command: [x], args: [--port, \"${port}\"]}\n  target: {model: m}\n  \
             variants: [{name: a, baseline: true}]\n  workload:\n    dataset: {kind: random, \
             input_tokens: 8, output_tokens: 4}\n    requests: 4\n",
            "t.yaml",
        )
        .expect("valid spec")
        .file
    }

    #[test]
    fn host_only_overrides_keep_the_hash() {
        let mut s = spec();
        let before = spec_hash(&s);
        for o in [
            "server.working_dir=/opt/run",
            "target.base_url=http://10.0.0.5:8000",
            "variants.a.base_url=http://10.0.0.6:8000",
        ] {
            apply(&mut s, &parse_override(o).expect("well formed")).expect("host-only");
        }
        assert_eq!(spec_hash(&s), before);
        assert_eq!(
            s.spec
                .server
                .as_ref()
                .and_then(|x| x.working_dir.as_deref()),
            Some("/opt/run")
        );
        assert_eq!(
            s.spec.target.base_url.as_deref(),
            Some("http://10.0.0.5:8000")
        );
        assert_eq!(
            s.spec.variants[0].base_url.as_deref(),
            Some("http://10.0.0.6:8000")
        );
    }

    /// Every key `--set` advertises (the hash's host-only fields) is one `apply` takes.
    #[test]
    fn every_advertised_key_is_accepted() {
        for key in servebench_spec::hash::HOST_ONLY_FIELDS {
            let key = key.trim_start_matches("/spec/").replace('/', ".");
            let mut s = spec();
            let o = parse_override(&format!("{key}=x")).expect("form");
            assert!(apply(&mut s, &o).is_ok(), "{key} is advertised but refused");
        }
    }

    #[test]
    fn other_overrides_are_refused_with_the_allowed_keys() {
        let mut s = spec();
        let e = apply(
            &mut s,
            &parse_override("server.command=python3").expect("form"),
        )
        .expect_err("not host-only");
        let msg = e.to_string();
        assert!(
            msg.contains("server.working_dir") && msg.contains("${env.NAME}"),
            "{msg}"
        );
        assert!(matches!(
            apply(
                &mut s,
                &parse_override("variants.zz.base_url=x").expect("form")
            ),
            Err(RerunError::UnknownVariant { .. })
        ));
        assert!(matches!(
            parse_override("nothing"),
            Err(RerunError::Malformed(_))
        ));
    }
}
