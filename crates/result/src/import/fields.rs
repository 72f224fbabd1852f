//! Reading one result object field by field, remembering which fields were read and what
//! each became, so the imported result can list what it mapped and what it ignored.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use servebench_spec::Rate;

use super::lenient::number;
use super::{ImportError, PerRequest, Source};

/// A result object being read.
pub(crate) struct Fields<'a> {
    obj: &'a Map<String, Value>,
    used: BTreeSet<String>,
    /// Source field → what it became.
    pub mapped: BTreeMap<String, String>,
    /// Metrics by catalogue name.
    pub reported: BTreeMap<String, f64>,
    src: Source<'a>,
    tool: &'static str,
}

impl<'a> Fields<'a> {
    /// The object of `doc`, or an error saying what a result of `tool` looks like.
    pub(super) fn new(
        doc: &'a Value,
        src: Source<'a>,
        tool: &'static str,
    ) -> Result<Self, ImportError> {
        let obj = doc.as_object().ok_or_else(|| {
            src.field_error(format!(
                "a {tool} result is a JSON object with fields such as `completed` and \
                 `output_throughput`; this is a JSON {}",
                kind(doc)
            ))
        })?;
        Ok(Fields {
            obj,
            used: BTreeSet::new(),
            mapped: BTreeMap::new(),
            reported: BTreeMap::new(),
            src,
            tool,
        })
    }

    /// Whether the field is present (and not null).
    pub(super) fn has(&self, key: &str) -> bool {
        self.obj.get(key).is_some_and(|v| !v.is_null())
    }

    fn get(&mut self, key: &str) -> Option<&'a Value> {
        let v = self.obj.get(key)?;
        self.used.insert(key.to_owned());
        (!v.is_null()).then_some(v)
    }

    /// A number (Python's `Infinity`/`NaN` included); `None` when absent or null.
    pub(super) fn num(&mut self, key: &str) -> Result<Option<f64>, ImportError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => number(v).map(Some).ok_or_else(|| {
                self.src.field_error(format!(
                    "`{key}` should be a number in a {} result, found {}",
                    self.tool,
                    short(v)
                ))
            }),
        }
    }

    /// A number the tool always writes.
    pub(super) fn required(&mut self, key: &str, what: &str) -> Result<f64, ImportError> {
        self.num(key)?.ok_or_else(|| {
            self.src.field_error(format!(
                "`{key}` ({what}) is missing: every {} result has it, so this is not one \
                 (is it the right tool? `servebench import sglang` or `servebench import vllm`)",
                self.tool
            ))
        })
    }

    /// `completed` and `duration`, which both tools always write: (successful requests,
    /// seconds).
    pub(super) fn completed_and_duration(&mut self) -> Result<(u64, f64), ImportError> {
        let completed = self.required("completed", "successful requests")? as u64;
        let duration = self.required("duration", "benchmark duration in seconds")?;
        self.map("completed", "summary.all.completed");
        self.map("duration", "summary.all.duration_s");
        Ok((completed, duration))
    }

    /// `request_rate`: a number > 0 or infinity (`inf` when missing, both tools' default,
    /// said in `notes`).
    pub(super) fn request_rate(&mut self, notes: &mut Vec<String>) -> Result<Rate, ImportError> {
        let rate = match self.num("request_rate")? {
            None => {
                notes.push(format!(
                    "request_rate is not recorded: assumed inf ({}'s default)",
                    self.tool
                ));
                Rate::Inf
            }
            Some(r) if r.is_infinite() && r > 0.0 => Rate::Inf,
            Some(r) if r.is_finite() && r > 0.0 => Rate::PerSecond(r),
            Some(r) => {
                return Err(self.src.field_error(format!(
                    "request_rate {r} is not a rate: {} writes a number > 0 or infinity",
                    self.tool
                )));
            }
        };
        self.map("request_rate", "workload.request_rate");
        Ok(rate)
    }

    /// A non-negative whole number.
    pub(super) fn count(&mut self, key: &str) -> Result<Option<u64>, ImportError> {
        match self.num(key)? {
            None => Ok(None),
            Some(v) if v.is_finite() && v >= 0.0 && v.fract() == 0.0 => Ok(Some(v as u64)),
            Some(v) => Err(self
                .src
                .field_error(format!("`{key}` should be a whole number ≥ 0, found {v}"))),
        }
    }

    /// A string (a number is written as text).
    pub(super) fn text(&mut self, key: &str) -> Option<String> {
        match self.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// Read a finite metric `key` into `reported[name]`.
    pub(super) fn metric(&mut self, key: &str, name: &str) -> Result<(), ImportError> {
        if let Some(v) = self.num(key)?
            && v.is_finite()
        {
            self.reported.insert(name.to_owned(), v);
            self.mapped.insert(key.to_owned(), name.to_owned());
        }
        Ok(())
    }

    /// Note that `key` became the spec or summary field `to`.
    pub(super) fn map(&mut self, key: &str, to: &str) {
        if self.obj.contains_key(key) {
            self.used.insert(key.to_owned());
            self.mapped.insert(key.to_owned(), to.to_owned());
        }
    }

    /// Mark a field as read without mapping it (it informed a note).
    pub(super) fn touch(&mut self, key: &str) {
        if self.obj.contains_key(key) {
            self.used.insert(key.to_owned());
        }
    }

    /// The per-request arrays, when the file has them all (`ttfts`, `itls`, `output_lens`,
    /// `errors`; `input_lens` optional) with one entry per request.
    pub(super) fn per_request(&mut self) -> Result<Option<PerRequest>, ImportError> {
        if !(self.has("ttfts") && self.has("itls") && self.has("output_lens")) {
            return Ok(None);
        }
        let floats = |f: &mut Self, key: &str| -> Vec<f64> {
            f.get(key)
                .and_then(Value::as_array)
                .map(|v| v.iter().map(|x| number(x).unwrap_or(f64::NAN)).collect())
                .unwrap_or_default()
        };
        // Token counts: a positive finite number, else 0 (a failed request's).
        let lens = |f: &mut Self, key: &str| -> Vec<u64> {
            floats(f, key)
                .into_iter()
                .map(|v| {
                    if v.is_finite() && v > 0.0 {
                        v as u64
                    } else {
                        0
                    }
                })
                .collect()
        };
        let ttfts = floats(self, "ttfts");
        let output_lens = lens(self, "output_lens");
        let input_lens = lens(self, "input_lens");
        let itls: Vec<Vec<f64>> = self
            .get("itls")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|r| {
                        r.as_array()
                            .map(|g| g.iter().filter_map(number).collect())
                            .unwrap_or_default()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let errors: Vec<String> = self
            .get("errors")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|e| e.as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_else(|| vec![String::new(); ttfts.len()]);
        self.touch("generated_texts");
        let n = ttfts.len();
        if itls.len() != n || output_lens.len() != n || errors.len() != n {
            return Err(self.src.field_error(format!(
                "the per-request arrays differ in length (ttfts {n}, itls {}, output_lens {}, \
                 errors {}): the file was cut or edited; import it without them or fix it",
                itls.len(),
                output_lens.len(),
                errors.len()
            )));
        }
        for k in ["ttfts", "itls", "output_lens", "input_lens", "errors"] {
            self.map(
                k,
                "per-request record (metrics recomputed with servebench's definitions)",
            );
        }
        Ok(Some(PerRequest {
            input_lens: if input_lens.len() == n {
                input_lens
            } else {
                Vec::new()
            },
            output_lens,
            ttfts,
            itls,
            errors,
        }))
    }

    /// Fields present but never read, sorted.
    pub(super) fn ignored(&self) -> Vec<String> {
        self.obj
            .keys()
            .filter(|k| !self.used.contains(*k))
            .cloned()
            .collect()
    }

    /// Fields with string values never read (vLLM's `--metadata KEY=VALUE` pairs).
    pub(super) fn unread_strings(&self) -> BTreeMap<String, String> {
        self.obj
            .iter()
            .filter(|(k, _)| !self.used.contains(*k))
            .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
            .collect()
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}
