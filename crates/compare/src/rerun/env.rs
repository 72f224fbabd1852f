//! The `${env.NAME}` values a published run and its re-run read (`provenance.env`): each
//! name whose value differs is said, with both values, so that a re-run that measured
//! another setting (an engine flag read from the environment) says so before its numbers.
//! A secret's value is never recorded (`***` on both sides): only that it was read.

use servebench_result::RunResult;

/// The value a result records for a secret's name (`servebench_runner::server::REDACTED`,
/// which this crate may not depend on).
const REDACTED: &str = "***";

/// One sentence per name whose recorded value differs between `published` and `new`, or
/// that only one of them read.
pub(crate) fn differences(published: &RunResult, new: &RunResult) -> Vec<String> {
    let (a, b) = (&published.provenance.env, &new.provenance.env);
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        match (a.get(name), b.get(name)) {
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) if x == REDACTED || y == REDACTED => {}
            (Some(x), Some(y)) => out.push(format!(
                "`${{env.{name}}}` differs: the published run read `{x}`, the re-run `{y}` \
                 (this environment's value is used)"
            )),
            (Some(x), None) => out.push(format!(
                "`${{env.{name}}}`: the published run read `{x}`; the re-run recorded none"
            )),
            (None, Some(y)) => out.push(format!(
                "`${{env.{name}}}`: the re-run read `{y}`; the published run recorded none \
                 (written before servebench recorded `${{env.…}}` values)"
            )),
            (None, None) => {}
        }
    }
    out
}
