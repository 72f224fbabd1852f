//! Space kept in reserve beside a running result, so that a disk that fills during a run
//! still takes the trial just measured: when a write of the result or its sidecar fails
//! because the disk is full, the reserve is deleted and the write tried once more, into the
//! space it freed. The run then stops, saying how to free space and resume.
//!
//! The reserve is `.<run id>.reserve` in the result's folder (the same filesystem), grown
//! after each write to hold the next one: twice the result file and the largest sidecar
//! frame written, plus [`FLOOR`]. Its bytes are a pseudo-random stream, so a filesystem that
//! compresses or deduplicates still allocates them. A finished run deletes it; a killed run
//! leaves it for its resume, which uses it again.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The least space kept: a result of a few trials and a sidecar frame of a few thousand
/// requests fit with room to spare.
pub(super) const FLOOR: u64 = 8 << 20;

/// `.<stem>.reserve` beside `result_path`.
pub(super) fn path_of(result_path: &Path) -> PathBuf {
    let stem = result_path
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.trim_end_matches(".json").to_owned())
        .unwrap_or_default();
    result_path
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!(".{stem}.reserve"))
}

/// Whether a write failed because the disk (or the user's quota on it) is full.
pub(super) fn is_full(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}

/// The reserve that holds the next write of a result of `result_len` bytes and a sidecar
/// frame of `frame_len` bytes: each twice, plus the floor.
pub(super) fn wanted(result_len: u64, frame_len: u64) -> u64 {
    FLOOR
        .saturating_add(result_len.saturating_mul(2))
        .saturating_add(frame_len.saturating_mul(2))
}

/// Grows the reserve at `path` to at least `want` bytes (never shrinks it). A failure is
/// left as it is: the disk is filling, and the next write that fails releases what is there.
pub(super) fn keep(path: &Path, want: u64) {
    let have = fs::metadata(path).map_or(0, |m| m.len());
    if have >= want {
        return;
    }
    let _ = grow(path, have, want);
}

fn grow(path: &Path, from: u64, to: u64) -> io::Result<()> {
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ from;
    let mut buf = vec![0u8; 1 << 16];
    let mut left = to - from;
    while left > 0 {
        for chunk in buf.chunks_exact_mut(8) {
            // xorshift64: incompressible enough that compression or dedup cannot elide it.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            chunk.copy_from_slice(&state.to_le_bytes());
        }
        let n = left.min(buf.len() as u64) as usize;
        f.write_all(&buf[..n])?;
        left -= n as u64;
    }
    f.sync_all()
}

/// Deletes the reserve; its size when there was one to free.
pub(super) fn release(path: &Path) -> Option<u64> {
    let len = fs::metadata(path).ok()?.len();
    fs::remove_file(path).ok()?;
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_grows_to_what_the_next_write_needs_and_is_freed_once() {
        let dir = tempfile::tempdir().expect("tmp");
        let result = dir.path().join("20261207T000000Z-ab12.json");
        let p = path_of(&result);
        assert_eq!(
            p.file_name().and_then(|n| n.to_str()),
            Some(".20261207T000000Z-ab12.reserve")
        );
        keep(&p, wanted(1000, 500));
        assert_eq!(fs::metadata(&p).expect("kept").len(), FLOOR + 3000);
        keep(&p, 10);
        assert_eq!(
            fs::metadata(&p).expect("kept").len(),
            FLOOR + 3000,
            "never shrinks"
        );
        // Not a run of one repeated byte: a compressing filesystem must allocate it.
        let bytes = fs::read(&p).expect("read");
        assert!(bytes[..4096].windows(2).filter(|w| w[0] == w[1]).count() < 100);
        assert_eq!(release(&p), Some(FLOOR + 3000));
        assert_eq!(release(&p), None, "freed once");
        assert!(is_full(&io::Error::from_raw_os_error(28)), "ENOSPC");
        assert!(
            !is_full(&io::Error::from_raw_os_error(27)),
            "EFBIG is a limit, not a full disk"
        );
    }
}
