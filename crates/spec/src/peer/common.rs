//! What both tools' translations share: the base URL, the model and tokenizer, the request
//! rate, goodput SLOs, headers, names.

use std::collections::BTreeMap;

use super::draft::Draft;
use super::table::Lines;
use super::{Line, PeerError, Translation, Values, argv, py_float};
use crate::rate::Rate;
use crate::types::TokenCount;

pub(crate) fn count_words(t: TokenCount) -> String {
    match t {
        TokenCount::Fixed(n) => n.to_string(),
        TokenCount::Range(r) => format!("{{min: {}, max: {}}}", r.min, r.max),
    }
}

/// `u32` of a flag's value, with the tool's default.
pub(crate) fn u32_of(v: &Values<'_>, name: &str, default: u32) -> Result<u32, PeerError> {
    match v.int(name)? {
        None => Ok(default),
        Some(n) if n >= 1 && n <= i64::from(u32::MAX) => Ok(n as u32),
        Some(n) => Err(PeerError::BadValue {
            flag: name.to_owned(),
            value: n.to_string(),
            why: "servebench needs a whole number of at least 1 here".into(),
        }),
    }
}

/// The base URL the tool sends to: `--base-url`, else `http://host:port`.
pub(crate) fn base_url(
    v: &Values<'_>,
    default_host: &str,
    port: u16,
    lines: &mut Lines,
    tool: &str,
) -> Result<String, PeerError> {
    if let Some(u) = v.str("--base-url") {
        let u = u.trim_end_matches('/').to_owned();
        lines.mapped("--base-url", v, format!("target.base_url: {u}"));
        return Ok(u);
    }
    let host = v.str("--host").unwrap_or(default_host);
    check_host(host)?;
    let port = match v.int("--port")? {
        Some(p) if (1..=65535).contains(&p) => p as u16,
        Some(p) => {
            return Err(PeerError::BadValue {
                flag: "--port".into(),
                value: p.to_string(),
                why: "not a port number".into(),
            });
        }
        None => port,
    };
    let (shown_host, note) = match host {
        "0.0.0.0" => (
            "127.0.0.1".to_owned(),
            " (0.0.0.0, every address, reaches this host; written as 127.0.0.1)",
        ),
        h if h.contains(':') && !h.starts_with('[') => (format!("[{h}]"), ""),
        h => (h.to_owned(), ""),
    };
    let url = format!("http://{shown_host}:{port}");
    let text = format!("target.base_url: {url}{note}");
    if v.has("--host") {
        lines.mapped("--host", v, text.clone());
    } else {
        lines.tool_default("--host", default_host, text.clone());
    }
    if v.has("--port") {
        lines.mapped("--port", v, format!("the port of target.base_url ({port})"));
    } else {
        lines.tool_default(
            "--port",
            &port.to_string(),
            format!("{tool}'s port for this backend"),
        );
    }
    Ok(url)
}

/// A `--host` is a host name or address alone: one that holds a scheme (`http://h`) or a
/// port (`h:8000`, `[::1]:8000`) is refused with what to write, where the translation would
/// have read it as an IPv6 address (`http://[h:8000]:30000`). A bare IPv6 address (`::1`)
/// is one.
fn check_host(host: &str) -> Result<(), PeerError> {
    let bad = |why: String| {
        Err(PeerError::BadValue {
            flag: "--host".into(),
            value: host.to_owned(),
            why,
        })
    };
    if host.contains("://") {
        return bad("a host, not a URL: give the URL as `--base-url`".into());
    }
    if host.parse::<std::net::Ipv6Addr>().is_ok() {
        return Ok(());
    }
    let port_of = |h: &str, p: &str| format!("it holds a port: give `--host {h} --port {p}`");
    if let Some(rest) = host.strip_prefix('[') {
        return match rest.split_once("]:") {
            Some((h, p)) => bad(port_of(h, p)),
            None if rest.ends_with(']') => Ok(()),
            None => bad("an unclosed `[`: write an IPv6 address as `::1` or `[::1]`".into()),
        };
    }
    match host.rsplit_once(':') {
        Some((h, p)) => bad(port_of(h, p)),
        None => Ok(()),
    }
}

/// The model and tokenizer lines shared by both tools; the model the requests carry is
/// `served` (else `model`).
pub(crate) fn model_and_tokenizer(
    v: &Values<'_>,
    served_flag: &'static str,
    lines: &mut Lines,
) -> (Option<String>, Option<String>) {
    let model = v.str(served_flag).or(v.str("--model")).map(str::to_owned);
    if v.has("--model") {
        lines.mapped(
            "--model",
            v,
            if v.has(served_flag) {
                format!("the tokenizer's default only: requests carry {served_flag}")
            } else {
                format!("target.model: {}", v.str("--model").unwrap_or(""))
            },
        );
    }
    if v.has(served_flag) {
        lines.mapped(
            served_flag,
            v,
            format!("target.model: {}", v.str(served_flag).unwrap_or("")),
        );
    }
    // Without a model the draft says `target.model: auto`: servebench reads /v1/models as
    // the tool does, and refuses a server that lists several, naming them.
    let given = v.str("--tokenizer");
    let (_, path) = crate::types::TokenizerSource::of_peer(given);
    let tokenizer = match (given, path) {
        (Some(_), Some(t)) => {
            lines.mapped(
                "--tokenizer",
                v,
                "target.tokenizer: local with this tokenizer_path (prompt lengths counted with \
                 this file)",
            );
            Some(t)
        }
        (Some(_), None) => {
            lines.mapped(
                "--tokenizer",
                v,
                "target.tokenizer: server — a hub id or a model folder has no counterpart in a \
                 spec (servebench reads a local tokenizer.json, or asks the server); the \
                 server's /tokenize counts prompt lengths exactly as the served model does",
            );
            None
        }
        (None, _) => None,
    };
    (model, tokenizer)
}

/// `--request-rate`: a rate, `inf`, or a value that means "as fast as possible" to a person
/// but not to the tool.
pub(crate) fn request_rate(
    v: &Values<'_>,
    lines: &mut Lines,
    why_not_negative: &str,
) -> Result<Rate, PeerError> {
    let Some(r) = v.float("--request-rate")? else {
        lines.tool_default(
            "--request-rate",
            "inf",
            "workload.request_rate: inf (every request due at once; the concurrency limit paces them)",
        );
        return Ok(Rate::Inf);
    };
    if r.is_infinite() && r > 0.0 {
        lines.mapped("--request-rate", v, "workload.request_rate: inf");
        Ok(Rate::Inf)
    } else if r > 0.0 && r.is_finite() {
        lines.mapped(
            "--request-rate",
            v,
            format!("workload.request_rate: {r} (Poisson arrivals, as the tool's)"),
        );
        Ok(Rate::PerSecond(r))
    } else {
        lines.mapped(
            "--request-rate",
            v,
            format!("workload.request_rate: inf, what {r} is meant to say — {why_not_negative}"),
        );
        Ok(Rate::Inf)
    }
}

/// `--goodput KEY:VALUE…` (ms) as `slo`.
pub(crate) fn goodput(
    v: &Values<'_>,
    lines: &mut Lines,
    keys: [&str; 3],
) -> Result<[Option<f64>; 3], PeerError> {
    let mut slo = [None; 3];
    if !v.has("--goodput") {
        return Ok(slo);
    }
    for item in v.list("--goodput") {
        let bad = || PeerError::BadValue {
            flag: "--goodput".into(),
            value: item.clone(),
            why: format!("write KEY:VALUE in ms with KEY one of {}", keys.join(", ")),
        };
        let (k, val) = item.split_once(':').ok_or_else(bad)?;
        let ms = py_float("--goodput", val).map_err(|_| bad())?;
        let i = keys.iter().position(|x| *x == k).ok_or_else(bad)?;
        slo[i] = Some(ms);
    }
    lines.mapped(
        "--goodput",
        v,
        "slo (ttft, tpot, e2e in ms): goodput counts the requests meeting every one",
    );
    Ok(slo)
}

/// `--header KEY=VALUE…` as `target.headers`.
pub(crate) fn headers(
    v: &Values<'_>,
    lines: &mut Lines,
) -> Result<BTreeMap<String, String>, PeerError> {
    let mut out = BTreeMap::new();
    if !v.has("--header") {
        return Ok(out);
    }
    for h in v.list("--header") {
        let (k, val) = h.split_once('=').ok_or_else(|| PeerError::BadValue {
            flag: "--header".into(),
            value: h.clone(),
            why: "write KEY=VALUE".into(),
        })?;
        out.insert(k.to_owned(), val.to_owned());
    }
    lines.mapped(
        "--header",
        v,
        "target.headers (a header naming a secret must read it from ${env.NAME}: validate says \
         which)",
    );
    Ok(out)
}

/// `metadata.name` from the tool and the model: lower case, `[a-z0-9._-]`.
pub(crate) fn name_of(tool: &str, model: Option<&str>) -> String {
    let model = model
        .map(|m| m.rsplit('/').next().unwrap_or(m).to_lowercase())
        .unwrap_or_else(|| "bench".into());
    let raw = format!("{tool}-{model}");
    let s: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(128)
        .collect();
    s.trim_start_matches(['.', '_', '-']).to_owned()
}

/// A variant name from the backend: `[A-Za-z0-9._-]`.
pub(crate) fn variant_of(backend: &str) -> String {
    let s: String = backend
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    let s = s.trim_start_matches(['.', '_', '-']).to_owned();
    if s.is_empty() { "bench".into() } else { s }
}

/// The translation, with the parser's unknowns.
pub(crate) fn finish(
    tool: &'static str,
    draft: Draft,
    lines: Vec<Line>,
    parsed: &argv::Parsed,
    needs: Vec<String>,
) -> Translation {
    let notes = vec![format!(
        "trials.count: {} — the tool measures once; servebench repeats the measurement {} \
         times so every figure gets a 95% interval; `--set \
         trials.count=1` measures once",
        draft.trials, draft.trials
    )];
    Translation {
        tool,
        draft,
        lines,
        unknown: parsed.unknown.clone(),
        stray: parsed.stray.clone(),
        needs,
        notes,
    }
}

/// A tool's extra request fields (SGLang's `--extra-request-body`, vLLM's `--extra-body`: a
/// JSON object both merge over their request payload with `payload.update`) as
/// `workload.request_body`, with the fields servebench sets that it replaces as
/// `request_body_takes_over`.
pub(crate) fn extra_body(
    v: &Values<'_>,
    flag: &'static str,
    lines: &mut Lines,
) -> Result<(Option<crate::request_body::BodyMap>, Vec<String>), PeerError> {
    let Some(text) = v.str(flag) else {
        return Ok((None, Vec::new()));
    };
    let mut map = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(m)) => m,
        Ok(_) | Err(_) => {
            return Err(PeerError::BadValue {
                flag: flag.into(),
                value: text.to_owned(),
                why: "a JSON object, e.g. '{\"top_k\": 20}'".into(),
            });
        }
    };
    // What servebench cannot let a spec replace: the request's identity and the stream.
    let dropped: Vec<String> = ["model", "prompt", "messages", "stream"]
        .into_iter()
        .filter(|k| map.remove(*k).is_some())
        .map(str::to_owned)
        .collect();
    let takes_over: Vec<String> = map
        .keys()
        .filter(|k| crate::request_body::owned(k).is_some())
        .cloned()
        .collect();
    let also = if takes_over.is_empty() {
        String::new()
    } else {
        format!(
            ", and request_body_takes_over: [{}] (the tool's fields replace servebench's, as \
             its payload.update does)",
            takes_over.join(", ")
        )
    };
    let not_sent = if dropped.is_empty() {
        String::new()
    } else {
        format!(
            "; not carried: {} (servebench sends the target's model and the dataset's \
             prompt, streamed)",
            dropped.join(", ")
        )
    };
    lines.mapped(
        flag,
        v,
        format!(
            "workload.request_body: every generation request carries these fields{also}\
             {not_sent}"
        ),
    );
    Ok((Some(map).filter(|m| !m.is_empty()), takes_over))
}
