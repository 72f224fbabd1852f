//! The server log: one file per server start holding the server's stdout and stderr, framed
//! by servebench's own timeline lines (`[servebench <UTC time>] …`).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Lines of the log shown in an error.
pub const TAIL_LINES: usize = 40;

/// How servebench's own lines start.
const TIMELINE_PREFIX: &str = "[servebench ";

/// Most bytes read from the end of the log for a tail.
const TAIL_BYTES: u64 = 256 * 1024;

/// Now, in UTC, RFC 3339 (e.g. `2025-06-01T12:00:00.123456Z`).
pub(crate) fn utc_now() -> String {
    OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_else(|_| "unknown-time".to_owned())
}

/// A server log file; reads see only what was written since this start's header.
#[derive(Debug, Clone)]
pub(crate) struct ServerLog {
    path: PathBuf,
    /// Where this start's header begins (earlier content, if the file existed, is ignored).
    start: u64,
}

impl ServerLog {
    /// Opens `path` for appending (creating it and its folders), writes `header` as timeline
    /// lines, and returns two handles the child writes its stdout and stderr to.
    pub(crate) fn create(path: &Path, header: &[String]) -> io::Result<(Self, File, File)> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir)?;
        }
        let mut f = OpenOptions::new().create(true).append(true).open(path)?;
        let start = f.seek(SeekFrom::End(0))?;
        let now = utc_now();
        let mut text = String::new();
        for line in header {
            text.push_str(&format!("{TIMELINE_PREFIX}{now}] {line}\n"));
        }
        f.write_all(text.as_bytes())?;
        let err = f.try_clone()?;
        let log = ServerLog {
            path: path.to_owned(),
            start,
        };
        Ok((log, f, err))
    }

    /// A log that already exists (an orphan's): timeline lines are appended after its end.
    pub(crate) fn existing(path: &Path) -> Self {
        let start = fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        ServerLog {
            path: path.to_owned(),
            start,
        }
    }

    /// A whole file read from its start (a rank's log, which the rank itself writes).
    pub(crate) fn whole(path: &Path) -> Self {
        ServerLog {
            path: path.to_owned(),
            start: 0,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one timeline line. Best effort: a log that cannot be written must not stop a
    /// server from being stopped.
    pub(crate) fn event(&self, msg: &str) {
        let line = format!("{TIMELINE_PREFIX}{}] {msg}\n", utc_now());
        if let Ok(mut f) = OpenOptions::new().append(true).open(&self.path) {
            let _ = f.write_all(line.as_bytes());
        }
    }

    /// Everything written since this start (lossy UTF-8).
    pub(crate) fn read(&self) -> io::Result<String> {
        let mut f = File::open(&self.path)?;
        f.seek(SeekFrom::Start(self.start))?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// The last `n` lines written since this start, or a note saying why there are none.
    pub(crate) fn tail(&self, n: usize) -> String {
        match self.read_tail(n) {
            Ok(t) if t.trim().is_empty() => "(the log is empty)".to_owned(),
            Ok(t) => t,
            Err(e) => format!("(cannot read the log: {e})"),
        }
    }

    fn read_tail(&self, n: usize) -> io::Result<String> {
        let mut f = File::open(&self.path)?;
        let len = f.metadata()?.len();
        let from = len.saturating_sub(TAIL_BYTES).max(self.start);
        f.seek(SeekFrom::Start(from))?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)?;
        let text = String::from_utf8_lossy(&buf);
        let lines: Vec<&str> = text.lines().collect();
        // A cut-off first line is dropped unless it is all there is.
        let skip_partial = usize::from(from > self.start && lines.len() > 1);
        let first = lines.len().saturating_sub(n).max(skip_partial);
        Ok(lines[first..].join("\n"))
    }
}

/// Whether a log line is one of servebench's own (`[servebench <time>] …`).
pub(crate) fn is_timeline_line(line: &str) -> bool {
    line.starts_with(TIMELINE_PREFIX)
}

/// `text` with every line indented by `  | `, for showing a log tail inside a message.
pub(crate) fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
