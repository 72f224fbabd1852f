//! Every transcript folder says where its files came from. A folder
//! `<engine>/transcripts/<version>/` is refused, with the folder, the file and what to write,
//! when:
//! * it has no README.md;
//! * the README's title (its first `# ` line) does not name the version or commit the folder
//!   is named after (`0.5.23`, `db931fcf`, `b11434` of `b11434-router`);
//! * a data file in the folder is not named (in backticks) in the first cell of a row of one
//!   of the README's tables, or a row names a file the folder does not hold;
//! * a script in the folder (`.sh`, `.py`: the maker that recorded or rendered the files) is
//!   not named in the README;
//! * the README neither says the files were `written by hand` nor names a maker script in the
//!   folder: a transcript is recorded or made by the engine's own code (by a script kept
//!   beside it) or written by hand;
//! * written by hand, a row of a data file names no source line (`server.cpp:151-160`,
//!   `infer/mod.rs:110`): every field's version, file and line.

use std::collections::BTreeSet;
use std::path::Path;

use super::src;

/// A file that makes transcripts rather than being one.
fn is_maker(file: &str) -> bool {
    file.ends_with(".sh") || file.ends_with(".py")
}

/// The version the folder is named after: its name up to the first `-`.
fn version_of(folder: &str) -> &str {
    folder.split('-').next().unwrap_or(folder)
}

/// The names in backticks in `text` that look like file names (hold a dot).
fn quoted_files(text: &str) -> Vec<&str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.contains('.') && !s.contains(' '))
        .collect()
}

/// Whether `text` holds a source reference `FILE.EXT:LINE` (`server-models.cpp:2082`).
fn has_line_ref(text: &str) -> bool {
    const EXTS: [&str; 9] = [
        ".py", ".rs", ".cpp", ".cc", ".c", ".h", ".hpp", ".go", ".cu",
    ];
    text.match_indices(':').any(|(i, _)| {
        let digit_after = text[i + 1..].starts_with(|c: char| c.is_ascii_digit());
        let file: String = text[..i]
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || "_./-".contains(*c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        digit_after
            && EXTS
                .iter()
                .any(|e| file.len() > e.len() && file.ends_with(e))
    })
}

/// The table rows of a README: (line number, the files its first cell names, the row).
fn rows(readme: &str) -> Vec<(usize, Vec<&str>, &str)> {
    readme
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with('|') && !l.starts_with("|-") && !l.starts_with("| -"))
        .map(|(i, l)| {
            let first = l[1..].split('|').next().unwrap_or("");
            (i + 1, quoted_files(first), l)
        })
        .filter(|(_, files, _)| !files.is_empty())
        .collect()
}

/// What is wrong with the transcript folder `folder` (a path for messages; its last part is
/// the version), its README's text (`None`: no README.md) and the names of its other files.
pub(super) fn problems(folder: &str, readme: Option<&str>, files: &[String]) -> Vec<String> {
    let Some(readme) = readme else {
        return vec![format!(
            "{folder}: no README.md. Write one: a title naming the engine version or commit \
             (`# SGLang 0.5.23: …`), and a table with a row per file saying where it came \
             from (recorded from the engine, made by its own code, or written by hand with \
             the file and line of every field)"
        )];
    };
    let mut out = Vec::new();
    let name = folder.rsplit('/').next().unwrap_or(folder);
    let version = version_of(name);
    let title = readme.lines().find(|l| l.starts_with("# ")).unwrap_or("");
    if !title.contains(version) || !version.contains(|c: char| c.is_ascii_digit()) {
        out.push(format!(
            "{folder}/README.md: the title `{title}` does not name the version or commit \
             `{version}` the folder is named after: write it in the first `# ` line (and name \
             the folder after the engine's version or commit)"
        ));
    }
    let rows = rows(readme);
    let named: BTreeSet<&str> = rows
        .iter()
        .flat_map(|(_, f, _)| f.iter().copied())
        .collect();
    for f in files.iter().filter(|f| !is_maker(f)) {
        if !named.contains(f.as_str()) {
            out.push(format!(
                "{folder}/{f}: not named in a table of README.md: add a row \
                 `| \\`{f}\\` | what it is, and where it came from |`"
            ));
        }
    }
    for (line, fs, _) in &rows {
        for f in fs.iter().filter(|f| !files.iter().any(|x| x == *f)) {
            out.push(format!(
                "{folder}/README.md:{line}: names `{f}`, which the folder does not hold: \
                 remove the row or add the file"
            ));
        }
    }
    let makers: Vec<&String> = files.iter().filter(|f| is_maker(f)).collect();
    for m in &makers {
        if !readme.contains(&format!("`{m}`")) {
            out.push(format!(
                "{folder}/{m}: a maker of the transcripts not named in README.md: say which \
                 files it made and how it was run (`{m}` in backticks)"
            ));
        }
    }
    let by_hand = readme.to_lowercase().contains("written by hand");
    if !by_hand && makers.is_empty() {
        out.push(format!(
            "{folder}/README.md: says neither `written by hand` nor how the files were made: \
             keep the script that recorded them from the engine (or rendered them with the \
             engine's own code) in the folder and name it, or write them by hand and say so, \
             with the file and line of every field"
        ));
    }
    if by_hand {
        for (line, fs, row) in &rows {
            if fs.iter().any(|f| !is_maker(f)) && !has_line_ref(row) {
                out.push(format!(
                    "{folder}/README.md:{line}: written by hand, the row of `{}` names no \
                     source line: write the engine file and line each field comes from \
                     (`server-models.cpp:2082-2142`)",
                    fs.join("`, `")
                ));
            }
        }
    }
    out
}

/// One transcript folder as read.
#[derive(Debug)]
struct Folder {
    /// `<engine>/transcripts/<version>`.
    label: String,
    /// Its README.md, where it has one.
    readme: Option<String>,
    /// The names of its other files.
    files: Vec<String>,
}

/// The transcript folders `src/<engine>/transcripts/<version>/`, sorted; plus what is
/// misplaced under a `transcripts/` folder (a file beside the version folders).
fn folders(src: &Path) -> (Vec<Folder>, Vec<String>) {
    let (mut found, mut misplaced) = (Vec::new(), Vec::new());
    let list = |p: &Path| -> Vec<std::fs::DirEntry> {
        let mut v: Vec<_> = std::fs::read_dir(p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .map(|e| e.unwrap_or_else(|e| panic!("{}: {e}", p.display())))
            .collect();
        v.sort_by_key(std::fs::DirEntry::file_name);
        v
    };
    for engine in list(src).into_iter().filter(|e| e.path().is_dir()) {
        let dir = engine.path().join("transcripts");
        if !dir.is_dir() {
            continue;
        }
        let e = engine.file_name().to_string_lossy().into_owned();
        for v in list(&dir) {
            let label = format!("{e}/transcripts/{}", v.file_name().to_string_lossy());
            if !v.path().is_dir() {
                misplaced.push(format!(
                    "{label}: a file beside the version folders: move it into \
                     `{e}/transcripts/<version>/`"
                ));
                continue;
            }
            let mut readme = None;
            let mut files = Vec::new();
            for f in list(&v.path()) {
                let n = f.file_name().to_string_lossy().into_owned();
                if n == "README.md" {
                    readme = Some(std::fs::read_to_string(f.path()).unwrap_or_default());
                } else {
                    files.push(n);
                }
            }
            found.push(Folder {
                label,
                readme,
                files,
            });
        }
    }
    (found, misplaced)
}

#[test]
fn every_transcript_folder_says_where_each_file_came_from() {
    let (found, mut bad) = folders(&src());
    for f in &found {
        bad.extend(problems(&f.label, f.readme.as_deref(), &f.files));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let engines: BTreeSet<&str> = found
        .iter()
        .filter_map(|f| f.label.split('/').next())
        .collect();
    for e in ["llamacpp", "sglang", "tgi", "transformers", "trtllm"] {
        assert!(
            engines.contains(e),
            "no transcripts found for {e}: {found:?}"
        );
    }
}

const HAND: &str = "# TGI at git db931fcf: written by hand\n\n\
| file | what, and where |\n|---|---|\n\
| `info.json` | `GET /info`: `Info` (lib.rs:261-299) |\n\
| `stream.sse` | the error event (infer/mod.rs:445-452) |\n";

fn files(names: &[&str]) -> Vec<String> {
    names.iter().map(|&s| s.to_owned()).collect()
}

#[test]
fn a_hand_written_folder_with_a_row_and_a_line_per_file_passes() {
    let p = problems(
        "tgi/transcripts/db931fcf",
        Some(HAND),
        &files(&["info.json", "stream.sse"]),
    );
    assert!(p.is_empty(), "{p:?}");
}

#[test]
fn a_folder_without_a_readme_is_refused() {
    let p = problems("tgi/transcripts/db931fcf", None, &files(&["info.json"]));
    assert_eq!(p.len(), 1);
    assert!(p[0].contains("no README.md"), "{p:?}");
}

#[test]
fn a_file_without_a_row_is_refused_by_name() {
    let readme = HAND.replace(
        "| `stream.sse` | the error event (infer/mod.rs:445-452) |\n",
        "",
    );
    let p = problems(
        "tgi/transcripts/db931fcf",
        Some(&readme),
        &files(&["info.json", "stream.sse"]),
    );
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("tgi/transcripts/db931fcf/stream.sse: not named"),
        "{p:?}"
    );
}

#[test]
fn a_row_of_a_file_the_folder_lacks_is_refused() {
    let p = problems(
        "tgi/transcripts/db931fcf",
        Some(HAND),
        &files(&["info.json"]),
    );
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("README.md:6: names `stream.sse`"), "{p:?}");
}

#[test]
fn a_hand_written_row_without_a_source_line_is_refused() {
    let readme = HAND.replace(
        "(infer/mod.rs:445-452)",
        "(infer/mod.rs, `into_openai_event`)",
    );
    let p = problems(
        "tgi/transcripts/db931fcf",
        Some(&readme),
        &files(&["info.json", "stream.sse"]),
    );
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("README.md:6: written by hand, the row of `stream.sse` names no source"),
        "{p:?}"
    );
}

#[test]
fn a_title_without_the_version_is_refused() {
    let readme = HAND.replace("TGI at git db931fcf", "TGI");
    let p = problems(
        "tgi/transcripts/db931fcf",
        Some(&readme),
        &files(&["info.json", "stream.sse"]),
    );
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("does not name the version or commit `db931fcf`"),
        "{p:?}"
    );
    // A folder not named after a version is refused as well.
    let p = problems(
        "tgi/transcripts/latest",
        Some(HAND),
        &files(&["info.json", "stream.sse"]),
    );
    assert!(p[0].contains("`latest`"), "{p:?}");
}

#[test]
fn a_folder_neither_hand_written_nor_made_by_a_named_script_is_refused() {
    let recorded = "# transformers serve 5.24.0: captured\n\n| file | request |\n|---|---|\n\
                    | `health.http` | `GET /health` |\n";
    let p = problems(
        "transformers/transcripts/5.24.0",
        Some(recorded),
        &files(&["health.http"]),
    );
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("says neither `written by hand`"), "{p:?}");
    // With its maker in the folder, named: passes; the maker unnamed: refused.
    let named = format!("{recorded}\nEvery file was written by `capture.sh`.\n");
    let with = files(&["health.http", "capture.sh"]);
    let p = problems("transformers/transcripts/5.24.0", Some(&named), &with);
    assert!(p.is_empty(), "{p:?}");
    let p = problems("transformers/transcripts/5.24.0", Some(recorded), &with);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("transformers/transcripts/5.24.0/capture.sh: a maker"),
        "{p:?}"
    );
}

#[test]
fn source_references_are_file_colon_line() {
    assert!(has_line_ref("(server-models.cpp:2082-2142)"));
    assert!(has_line_ref("infer/mod.rs:110"));
    assert!(has_line_ref("`srt/metrics_collector.py:1361-1367`"));
    assert!(!has_line_ref("metrics/collector.py `log_iteration_stats`"));
    assert!(!has_line_ref("at 12:30"));
    assert!(!has_line_ref("server.cpp: the router"));
}
