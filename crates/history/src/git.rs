//! The result files of a git range: every commit of the range that touched the paths (and
//! the range's newest commit) is listed with `git ls-tree`, and each distinct file content
//! read once with `git cat-file --batch`. A path that several commits hold is read at the
//! newest of them (a run written again, e.g. resumed, counts once) and named by the first
//! commit that holds it. git runs in the folder given (`git -C DIR`): the range is that
//! repository's, and the paths are relative to that folder.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::HistoryError;
use crate::load::{Loaded, add, finish};
use crate::model::Skipped;

fn git(dir: &Path, args: &[String]) -> Result<Vec<u8>, HistoryError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|source| HistoryError::GitSpawn { source })?;
    if !out.status.success() {
        return Err(HistoryError::Git {
            command: format!("git {}", args.join(" ")),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(out.stdout)
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Read the blobs `oids` with one `git cat-file --batch`.
fn blobs(dir: &Path, oids: &[String]) -> Result<BTreeMap<String, Vec<u8>>, HistoryError> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| HistoryError::GitSpawn { source })?;
    let mut stdin = child.stdin.take().ok_or(HistoryError::GitSpawn {
        source: std::io::Error::other("no stdin"),
    })?;
    let input: String = oids.iter().map(|o| format!("{o}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut raw = Vec::new();
    child
        .stdout
        .take()
        .ok_or(HistoryError::GitSpawn {
            source: std::io::Error::other("no stdout"),
        })?
        .read_to_end(&mut raw)
        .map_err(|source| HistoryError::GitSpawn { source })?;
    let _ = writer.join();
    let status = child
        .wait()
        .map_err(|source| HistoryError::GitSpawn { source })?;
    if !status.success() {
        return Err(HistoryError::Git {
            command: "git cat-file --batch".into(),
            stderr: format!("exit {status}"),
        });
    }
    let mut out = BTreeMap::new();
    let mut at = 0;
    while at < raw.len() {
        let Some(nl) = raw[at..].iter().position(|b| *b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&raw[at..at + nl]).into_owned();
        at += nl + 1;
        let parts: Vec<&str> = header.split(' ').collect();
        let (Some(oid), Some(size)) = (parts.first(), parts.get(2)) else {
            continue; // `<oid> missing`
        };
        let size: usize = size.parse().unwrap_or(0);
        let end = (at + size).min(raw.len());
        out.insert((*oid).to_owned(), raw[at..end].to_vec());
        at = end + 1;
    }
    Ok(out)
}

/// The result files of `range` (`A..B`, or one revision for its whole history) under
/// `paths`, in the git repository of the folder `dir` (paths relative to it).
pub fn read_git(dir: &Path, range: &str, paths: &[PathBuf]) -> Result<Loaded, HistoryError> {
    let specs: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    if range.starts_with('-') {
        return Err(HistoryError::NotARevision {
            range: range.to_owned(),
        });
    }
    // `--end-of-options` before the revision and `--` before the paths: no value the user
    // gives can become an option of git (`--output=FILE` would write a file).
    let mut args = vec![
        "rev-list".to_owned(),
        "--reverse".into(),
        "--end-of-options".into(),
        range.to_owned(),
        "--".into(),
    ];
    args.extend(specs.iter().cloned());
    let mut commits = lines(&git(dir, &args)?);
    let newest = lines(&git(
        dir,
        &[
            "rev-list".into(),
            "-n1".into(),
            "--end-of-options".into(),
            range.to_owned(),
            "--".into(),
        ],
    )?);
    for c in newest {
        if !commits.contains(&c) {
            commits.push(c);
        }
    }
    // path → (newest oid, first commit holding it)
    let mut files: BTreeMap<String, (String, String)> = BTreeMap::new();
    for c in &commits {
        let mut args = vec![
            "ls-tree".to_owned(),
            "-r".into(),
            "-z".into(),
            "--full-name".into(),
            "--end-of-options".into(),
            c.clone(),
            "--".into(),
        ];
        args.extend(specs.iter().cloned());
        let raw = git(dir, &args)?;
        for entry in raw.split(|b| *b == 0).filter(|e| !e.is_empty()) {
            let entry = String::from_utf8_lossy(entry);
            let Some((meta, path)) = entry.split_once('\t') else {
                continue;
            };
            let meta: Vec<&str> = meta.split(' ').collect();
            if meta.get(1) != Some(&"blob") || !path.ends_with(".json") {
                continue;
            }
            let oid = meta.get(2).copied().unwrap_or_default().to_owned();
            files
                .entry(path.to_owned())
                .and_modify(|e| e.0 = oid.clone())
                .or_insert((oid, c.clone()));
        }
    }
    // A path that holds no file in the range (a typo) must not read as an empty history.
    let prefix = lines(&git(dir, &["rev-parse".into(), "--show-prefix".into()])?)
        .into_iter()
        .next()
        .unwrap_or_default();
    for p in &specs {
        let full = format!("{prefix}{}", p.trim_start_matches("./"))
            .trim_end_matches('/')
            .to_owned();
        let held = files.keys().any(|f| {
            full.is_empty() || full == "." || f == &full || f.starts_with(&format!("{full}/"))
        });
        if !held {
            return Err(HistoryError::NoRuns {
                place: format!("git {range} {p}"),
                why: "no commit of the range holds a `.json` file under that path (paths are \
                      relative to the current folder)"
                    .into(),
            });
        }
    }
    let oids: Vec<String> = files.values().map(|(o, _)| o.clone()).collect();
    let contents = blobs(dir, &oids)?;
    let mut out = Loaded::default();
    for (path, (oid, commit)) in files {
        let short: String = commit.chars().take(12).collect();
        let name = format!("{short}:{path}");
        match contents.get(&oid).map(|b| String::from_utf8(b.clone())) {
            Some(Ok(text)) => add(&mut out, name, &text, Some(commit)),
            Some(Err(_)) => out.skipped.push(Skipped {
                file: name,
                reason: "not UTF-8 text".into(),
            }),
            None => out.skipped.push(Skipped {
                file: name,
                reason: format!("git could not read blob {oid}"),
            }),
        }
    }
    if out.runs.is_empty() {
        return Err(HistoryError::NoRuns {
            place: format!("git {range} {}", specs.join(" ")),
            why: crate::load::nothing_read(out.skipped.len(), &out.skipped),
        });
    }
    Ok(finish(out))
}
