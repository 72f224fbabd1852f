//! Redaction of the argv and environment that are recorded anywhere (log header, result file).

use std::collections::BTreeMap;

use servebench_spec::is_secret_name;

/// What a secret is replaced with.
pub const REDACTED: &str = "***";

/// `argv` with its secrets replaced by [`REDACTED`]:
///
/// * the value of a flag whose name holds a secret word (`KEY`, `TOKEN`, `SECRET`, `PASSWORD`,
///   `AUTH`): `--api-key X` → `--api-key ***`, `--api-key=X` → `--api-key=***`;
/// * a `NAME=value` argument whose name is secret (`env HF_TOKEN=x cmd`) → `HF_TOKEN=***`;
/// * any argument equal to or containing one of `secret_values` → `***`.
///
/// Flag names are judged word by word (words split at `-`, `_`, `.`), and the counting words
/// `TOKENS` and `TOKENIZER…` are not secret: `--max-tokens 128` and `--tokenizer path` are
/// recorded as they are, since they are part of the experiment's fingerprint. A flag value that
/// is a plain number (`--prefill-ms-per-token 0.02`) is a setting, not a credential, and is
/// kept too.
pub fn redact_argv(argv: &[String], secret_values: &[String]) -> Vec<String> {
    let secrets: Vec<&str> = secret_values
        .iter()
        .map(String::as_str)
        .filter(|s| !s.is_empty())
        .collect();
    let holds_secret = |a: &str| secrets.iter().any(|s| a.contains(s));
    let mut out = Vec::with_capacity(argv.len());
    let mut value_is_secret = false;
    for arg in argv {
        if std::mem::take(&mut value_is_secret) && !arg.starts_with("--") && !is_number(arg) {
            out.push(REDACTED.to_owned());
            continue;
        }
        if let Some((name, value)) = arg.split_once('=')
            && !is_number(value)
            && ((is_flag(name) && is_secret_flag(name))
                || (is_env_name(name) && is_secret_name(name)))
        {
            out.push(format!("{name}={REDACTED}"));
            continue;
        }
        if holds_secret(arg) {
            out.push(REDACTED.to_owned());
            continue;
        }
        if is_flag(arg) && !arg.contains('=') && is_secret_flag(arg) {
            value_is_secret = true;
        }
        out.push(arg.clone());
    }
    out
}

/// A plain number (`128`, `0.02`, `-1`): never a credential.
fn is_number(s: &str) -> bool {
    !s.is_empty() && s.parse::<f64>().is_ok_and(f64::is_finite)
}

/// `env` with the value of every secret-named variable (`HF_TOKEN`, `OPENAI_API_KEY`…)
/// replaced by [`REDACTED`]. The name rule is [`servebench_spec::is_secret_name`].
pub fn redact_env(env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    env.iter()
        .map(|(k, v)| {
            let v = if is_secret_name(k) {
                REDACTED.to_owned()
            } else {
                v.clone()
            };
            (k.clone(), v)
        })
        .collect()
}

/// The `${env.NAME}` values `spec` reads, as a result records them (`provenance.env`): each
/// set name with its value, a secret-named one's ([`servebench_spec::is_secret_name`]) as
/// [`REDACTED`] — the rule of the recorded server env.
pub fn recorded_env(spec: &servebench_spec::SpecFile) -> BTreeMap<String, String> {
    let read: BTreeMap<String, String> = servebench_spec::env_references(spec)
        .into_iter()
        .filter_map(|(_, name)| {
            let v = servebench_spec::substitute::env_value(&name)?;
            Some((name, v))
        })
        .collect();
    redact_env(&read)
}

/// The values of `env`'s secret-named variables (non-empty ones), to redact wherever they
/// appear in an argv.
pub fn secret_values_of_env(env: &BTreeMap<String, String>) -> Vec<String> {
    env.iter()
        .filter(|(k, v)| is_secret_name(k) && !v.is_empty())
        .map(|(_, v)| v.clone())
        .collect()
}

/// `-x`, `--name`: a dash followed by a letter.
fn is_flag(s: &str) -> bool {
    s.trim_start_matches('-')
        .starts_with(|c: char| c.is_ascii_alphabetic())
        && s.starts_with('-')
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// Whether a flag's value is a secret: one of its words is secret by
/// [`servebench_spec::is_secret_name`] and is not a counting word (`tokens`, `tokenizer`).
fn is_secret_flag(flag: &str) -> bool {
    flag.trim_start_matches('-')
        .split(['-', '_', '.'])
        .map(str::to_ascii_uppercase)
        .any(|w| is_secret_name(&w) && w != "TOKENS" && !w.starts_with("TOKENIZ"))
}

/// Quotes `argv` for a shell-like, readable log line.
pub(crate) fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%*${}".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
