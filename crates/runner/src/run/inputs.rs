//! A run's input files, read and checked before anything starts — by `servebench validate`,
//! where no server is needed, and by `servebench run` before the first server is launched:
//! a prompt file's or a trace's every line (at the file's own line numbers, with what to
//! write instead), a reference answers file (`equivalence.reference`), a trace's window and its size, the prompts a trial needs against those the
//! file holds, a `messages` entry meant for the chat API, a local tokenizer file and
//! `target.tls.ca_file`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use servebench_spec::plan::plan;
use servebench_spec::{ApiKind, DatasetKind, Severity, SpecFile, TokenizerSource};

use super::workload::{default_trace, load_config, schedule_seed, trace_layout, trace_window};
use crate::dataset::{
    DatasetError, FileEntry, PromptBody, TraceBuilder, WordCount, encode_images, load_jsonl,
    load_sharegpt, load_trace,
};

/// One problem with a file the spec names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputProblem {
    /// Error (the run cannot use the file) or warning.
    pub severity: Severity,
    /// The spec key that names the file, e.g. `workload.dataset.path`.
    pub key: String,
    /// The file, as resolved against the spec's folder.
    pub file: PathBuf,
    /// The file's own line (1-based), where the problem is on one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl InputProblem {
    fn error(key: &str, file: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
        InputProblem {
            severity: Severity::Error,
            key: key.to_owned(),
            file: file.to_owned(),
            line,
            message: message.into(),
        }
    }

    /// A dataset error, located where it says.
    fn dataset(key: &str, file: &Path, e: DatasetError) -> Self {
        match e {
            DatasetError::Parse {
                path,
                line,
                message,
            } => Self::error(key, &path, Some(line), message),
            DatasetError::Io { path, error } => {
                Self::error(key, &path, None, format!("cannot read it: {error}"))
            }
            DatasetError::Empty => Self::error(
                key,
                file,
                None,
                "the file has no usable entry (it is empty, or every line is blank)",
            ),
            e => Self::error(key, file, None, e.to_string()),
        }
    }

    /// Whether the run cannot use the file.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `file:line: error: message`, then the spec key that names the file.
    pub fn render(&self) -> String {
        let loc = match self.line {
            Some(l) => format!("{}:{l}", self.file.display()),
            None => self.file.display().to_string(),
        };
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        format!("{loc}: {sev}: {}\n  read for: {}", self.message, self.key)
    }
}

/// Every problem of the files `spec` names (relative paths against `spec_dir`), errors
/// first. Reads each file once; needs no server.
pub fn check_inputs(spec: &SpecFile, spec_dir: &Path) -> Vec<InputProblem> {
    let mut out = Vec::new();
    let d = &spec.spec.workload.dataset;
    match d.kind {
        DatasetKind::Trace => trace(spec, spec_dir, &mut out),
        DatasetKind::Jsonl | DatasetKind::Sharegpt => prompt_file(spec, spec_dir, &mut out),
        DatasetKind::Random
        | DatasetKind::SharedPrefix
        | DatasetKind::MultiTurn
        | DatasetKind::Image => {}
    }
    if let Some(file) = spec
        .spec
        .equivalence
        .as_ref()
        .and_then(|e| e.reference.as_ref())
        .filter(|f| !f.trim().is_empty())
    {
        let path = spec_dir.join(file);
        if let Err(e) = crate::reference::load_reference(&path) {
            out.push(InputProblem::error(
                "equivalence.reference",
                &path,
                (e.line > 0).then_some(e.line),
                e.message,
            ));
        }
    }
    if let Some(file) = spec
        .spec
        .equivalence
        .as_ref()
        .and_then(|e| e.prompts_file.as_ref())
        .filter(|f| !f.trim().is_empty())
    {
        let path = spec_dir.join(file);
        match load_jsonl(&path) {
            Ok(entries) if entries.is_empty() => out.push(InputProblem::dataset(
                "equivalence.prompts_file",
                &path,
                DatasetError::Empty,
            )),
            Ok(entries) => {
                if let Some(e) = entries.iter().find(|e| !e.images.is_empty()) {
                    out.push(InputProblem::error(
                        "equivalence.prompts_file",
                        &path,
                        Some(e.line),
                        crate::dataset::file_images::IMAGES_IN_PROBE,
                    ));
                }
            }
            Err(e) => out.push(InputProblem::dataset("equivalence.prompts_file", &path, e)),
        }
    }
    let target = &spec.spec.target;
    if target.tokenizer == TokenizerSource::Local
        && let Some(p) = &target.tokenizer_path
    {
        let path = spec_dir.join(p);
        if let Err(e) = std::fs::File::open(&path) {
            out.push(InputProblem::error(
                "target.tokenizer_path",
                &path,
                None,
                format!("cannot read it: {e} (a tokenizer.json, relative to the spec file)"),
            ));
        }
    }
    if let Some(ca) = target.tls.as_ref().and_then(|t| t.ca_file.as_ref()) {
        let path = spec_dir.join(ca);
        if let Err(e) = crate::tls::client_config(Some(&path)) {
            let mut message = e.to_string();
            if let Some(source) = std::error::Error::source(&e) {
                message.push_str(&format!(": {source}"));
            }
            out.push(InputProblem::error(
                "target.tls.ca_file",
                &path,
                None,
                message,
            ));
        }
    }
    if let Some(k) = spec.spec.evidence.as_ref().and_then(|e| e.kernels.as_ref())
        && !k.dir.trim().is_empty()
    {
        trace_dir(&spec_dir.join(&k.dir), &mut out);
    }
    declared_made(spec, spec_dir, &mut out);
    out.sort_by_key(|p| p.severity);
    out
}

/// `evidence.kernels.dir`: a directory servebench can read (it makes it when missing, so the
/// nearest existing folder above must be one it can write).
fn trace_dir(dir: &Path, out: &mut Vec<InputProblem>) {
    let key = "evidence.kernels.dir";
    if dir.exists() {
        if !dir.is_dir() {
            out.push(InputProblem::error(
                key,
                dir,
                None,
                "not a directory: name a folder the engine writes its traces to",
            ));
        } else if let Err(e) = std::fs::read_dir(dir) {
            out.push(InputProblem::error(key, dir, None, format!("servebench cannot read it: {e} (the engine's traces are read from here; under Slurm it must be shared storage)")));
        }
        return;
    }
    let mut up = dir.parent();
    while let Some(p) = up {
        if p.exists() {
            let probe = p.join(format!(".servebench-write-check-{}", std::process::id()));
            match std::fs::create_dir(&probe) {
                Ok(()) => {
                    let _ = std::fs::remove_dir(&probe);
                }
                Err(e) => out.push(InputProblem::error(
                    key,
                    dir,
                    None,
                    format!(
                        "servebench cannot make it: {} is not writable ({e})",
                        p.display()
                    ),
                )),
            }
            return;
        }
        up = p.parent();
    }
}

/// A file the spec declares as made by its set-up script (`spec.setup.makes`) and that is
/// not there: a warning naming the script, not an error — `validate` passes on a machine
/// that has not run it. Any other missing file stays an error.
fn declared_made(spec: &SpecFile, spec_dir: &Path, out: &mut [InputProblem]) {
    let Some(setup) = &spec.spec.setup else {
        return;
    };
    for p in out.iter_mut().filter(|p| p.is_error() && !p.file.exists()) {
        if setup.makes.iter().any(|m| spec_dir.join(m) == p.file) {
            p.severity = Severity::Warning;
            p.message = format!(
                "not here yet: made by `{}` (spec.setup), which `servebench run` needs run \
                 first on this machine",
                setup.script
            );
        }
    }
}

const PATH_KEY: &str = "workload.dataset.path";

/// Every file a run reads, as the spec names them (relative to its folder): the prompt file
/// or trace and the image files its lines name (relative to the prompt file; an edited
/// image is an edited input), a local tokenizer, and the equivalence probe's prompt file or
/// reference answers. Their hashes are recorded when a run begins (`provenance.inputs`)
/// and checked by `run --resume`, `rerun` and `compare` (one input-hash rule,
/// docs/reliability.md).
pub fn input_files(spec: &SpecFile, spec_dir: &Path) -> Vec<String> {
    let d = &spec.spec.workload.dataset;
    let t = &spec.spec.target;
    let mut out = Vec::new();
    if matches!(
        d.kind,
        DatasetKind::Jsonl | DatasetKind::Sharegpt | DatasetKind::Trace
    ) && let Some(p) = &d.path
    {
        out.push(p.clone());
        out.extend(image_files(spec, spec_dir));
    }
    if t.tokenizer == TokenizerSource::Local
        && let Some(p) = &t.tokenizer_path
    {
        out.push(p.clone());
    }
    if let Some(e) = &spec.spec.equivalence {
        for p in [&e.prompts_file, &e.reference].into_iter().flatten() {
            if !p.trim().is_empty() && !out.contains(p) {
                out.push(p.clone());
            }
        }
    }
    out
}

/// The local image files a prompt file's lines name, relative to the spec's folder, in the
/// order first named (none where the file cannot be read: the run refuses it anyway).
fn image_files(spec: &SpecFile, spec_dir: &Path) -> Vec<String> {
    let d = &spec.spec.workload.dataset;
    let Some(p) = &d.path else {
        return Vec::new();
    };
    let path = spec_dir.join(p);
    let entries = match d.kind {
        DatasetKind::Jsonl => load_jsonl(&path),
        DatasetKind::Sharegpt => load_sharegpt(&path).map(|(e, _)| e),
        _ => return Vec::new(),
    };
    let folder = Path::new(p).parent().unwrap_or(Path::new(""));
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for e in entries.iter().flatten() {
        for i in &e.images {
            if let crate::dataset::file_images::ImageSource::File { written, .. } = i {
                let name = folder.join(written).display().to_string();
                if seen.insert(name.clone()) {
                    out.push(name);
                }
            }
        }
    }
    out
}

fn dataset_path(spec: &SpecFile, spec_dir: &Path) -> PathBuf {
    spec_dir.join(spec.spec.workload.dataset.path.clone().unwrap_or_default())
}

/// A trace: every line, then the window and the size of a trial's prompts.
fn trace(spec: &SpecFile, spec_dir: &Path, out: &mut Vec<InputProblem>) {
    let d = &spec.spec.workload.dataset;
    let path = dataset_path(spec, spec_dir);
    let t = d.trace.clone().unwrap_or_else(default_trace);
    let (layout, unit) = trace_layout(&t);
    let entries = match load_trace(&path, layout, unit) {
        Ok(e) => e,
        Err(e) => return out.push(InputProblem::dataset(PATH_KEY, &path, e)),
    };
    if let Err(e) = TraceBuilder::new(&entries, trace_window(&t), layout, false, WordCount) {
        out.push(InputProblem::dataset("workload.dataset.trace", &path, e));
    }
}

/// A JSONL or ShareGPT prompt file: every entry, what it needs of the spec, and whether it
/// holds the prompts a trial takes.
fn prompt_file(spec: &SpecFile, spec_dir: &Path, out: &mut Vec<InputProblem>) {
    let d = &spec.spec.workload.dataset;
    let path = dataset_path(spec, spec_dir);
    let loaded = if d.kind == DatasetKind::Jsonl {
        load_jsonl(&path).map(|e| (e, 0))
    } else {
        load_sharegpt(&path)
    };
    let (mut entries, skipped) = match loaded {
        Ok(l) => l,
        Err(e) => return out.push(InputProblem::dataset(PATH_KEY, &path, e)),
    };
    // Every image file the lines name, read now (as the run does before its first trial).
    if let Err(e) = encode_images(&mut entries, &path) {
        out.push(InputProblem::dataset(PATH_KEY, &path, e));
    }
    if skipped > 0 {
        out.push(InputProblem {
            severity: Severity::Warning,
            ..InputProblem::error(
                PATH_KEY,
                &path,
                None,
                format!(
                    "{skipped} of {} entries are skipped: they have no human turn followed by \
                     an answer, or an empty prompt",
                    entries.len() + skipped
                ),
            )
        })
    }
    if entries.is_empty() {
        return out.push(InputProblem::error(
            PATH_KEY,
            &path,
            None,
            "the file has no usable entry: a ShareGPT entry needs a human turn with text \
             followed by a gpt turn",
        ));
    }
    let completions = spec.spec.target.api == ApiKind::OpenaiCompletions;
    // A prompt file's fixed output length is the dataset's (`PromptSource` reads only it).
    let fixed_output = d.output_tokens.is_some();
    if completions && let Some(e) = entries.iter().find(|e| !e.images.is_empty()) {
        out.push(InputProblem::error(
            PATH_KEY,
            &path,
            Some(e.line),
            "the entry has images, which are sent as `image_url` parts of chat messages, but \
             the spec sends to the completions API (`target.api: openai-completions`): set \
             `target.api: openai-chat`, or take the images out",
        ));
    }
    if let Some(p) = servebench_engines::profile(spec.spec.target.engine)
        && !p.request.images
        && let Some(e) = entries.iter().find(|e| !e.images.is_empty())
    {
        out.push(InputProblem {
            severity: Severity::Warning,
            ..InputProblem::error(
                PATH_KEY,
                &path,
                Some(e.line),
                format!(
                    "the entry has images, but {} takes no `image_url` parts (its engine \
                     profile): the requests will be refused",
                    p.name
                ),
            )
        });
    }
    if completions && let Some(e) = entries.iter().find(|e| is_chat(e)) {
        out.push(InputProblem::error(
            PATH_KEY,
            &path,
            Some(e.line),
            "a `messages` entry is a chat conversation, but the spec sends to the completions \
             API (`target.api: openai-completions`): set `target.api: openai-chat`, or write \
             the entry as {\"prompt\": \"…\"}",
        ));
    }
    if !fixed_output
        && let Some(e) = entries
            .iter()
            .find(|e| e.output_tokens.is_none() && e.reference_output.is_none())
    {
        out.push(InputProblem::error(
            PATH_KEY,
            &path,
            Some(e.line),
            "the entry gives no output length, and the spec fixes none: add \"max_tokens\": 128 \
             to it, or set `workload.dataset.output_tokens`",
        ));
    }
    if let Some((needed, point)) = largest_trial(spec)
        && needed > entries.len()
    {
        out.push(InputProblem::error(
            PATH_KEY,
            &path,
            None,
            format!(
                "the file has {} usable prompt(s), but a trial at {point} sends {needed}, each \
                 a prompt of its own: add prompts, or lower `workload.requests` (or the \
                 point's `requests`, or `workload.duration`)",
                entries.len()
            ),
        ));
    }
}

fn is_chat(e: &FileEntry) -> bool {
    matches!(e.body, PromptBody::Messages(_))
}

/// The most measured requests one trial of the plan sends, with its point's label. A trial by
/// `duration` counts the arrivals its schedule has before the duration ends, as the run does.
fn largest_trial(spec: &SpecFile) -> Option<(usize, String)> {
    if spec.spec.search.is_some() {
        let n = spec.spec.workload.requests?;
        return Some((n as usize, "every load of the search".into()));
    }
    let plan = plan(spec);
    // Only the request count is read: the request fields do not change it.
    let w = &spec.spec.workload;
    let body = servebench_engines::GENERIC.body_plan(w.ignore_eos, w.send_min_tokens);
    let mut best: Option<(usize, String)> = None;
    for t in plan.blocks.iter().flat_map(|b| &b.trials) {
        let Some(point) = plan.points.get(t.point) else {
            continue;
        };
        let n = load_config(spec, point, schedule_seed(t.prompt_seed), &body).requests;
        if best.as_ref().is_none_or(|(m, _)| n > *m) {
            best = Some((n, format!("point {point}")));
        }
    }
    best
}
