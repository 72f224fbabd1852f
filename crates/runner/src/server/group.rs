//! Process groups through `/proc` and `kill(2)`: who is in a group, whether any of it is
//! alive, a process's command line. A server is started as the leader of its own group
//! (pgid = pid), so the group is the server with everything it spawned.

use std::fs;
use std::io;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// What `/proc/<pid>/stat` says about a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// State letter (`R`, `S`, `D`, `Z`, …).
    pub(crate) state: char,
    /// Process group id.
    pub(crate) pgrp: i32,
}

impl ProcStat {
    pub(crate) fn is_zombie(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

/// Reads `/proc/<pid>/stat`; `None` when the process does not exist (or cannot be parsed).
pub(crate) fn stat(pid: i32) -> Option<ProcStat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// `pid (comm) S ppid pgrp …`: the command name may hold spaces and parentheses, so fields are
/// counted from the last `)`.
fn parse_stat(text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(ProcStat { state, pgrp })
}

/// Pids of the live (not zombie) members of process group `pgid`, by a scan of `/proc`.
pub(crate) fn live_members(pgid: i32) -> io::Result<Vec<i32>> {
    let mut pids = Vec::new();
    for entry in fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some(st) = stat(pid)
            && st.pgrp == pgid
            && !st.is_zombie()
        {
            pids.push(pid);
        }
    }
    pids.sort_unstable();
    Ok(pids)
}

/// Whether any process of group `pgid` is still alive. `kill(-pgid, 0)` failing with `ESRCH`
/// means none is; otherwise `/proc` decides, since zombies (which nobody may ever reap, in a
/// container whose init does not) count as gone.
pub(crate) fn group_alive(pgid: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    match killpg(Pid::from_raw(pgid), None) {
        Err(Errno::ESRCH) => false,
        _ => live_members(pgid).map_or(true, |m| !m.is_empty()),
    }
}

/// Sends `sig` to every process of group `pgid`. `Ok(false)`: the group no longer exists.
pub(crate) fn signal_group(pgid: i32, sig: Signal) -> Result<bool, Errno> {
    if pgid <= 1 {
        // Never signal "every process" (-1) or our own group (0).
        return Err(Errno::EINVAL);
    }
    match killpg(Pid::from_raw(pgid), sig) {
        Ok(()) => Ok(true),
        Err(Errno::ESRCH) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The command line of `pid` (`/proc/<pid>/cmdline`, NUL-separated); `Ok(None)` when there is
/// no such process.
pub(crate) fn cmdline(pid: i32) -> io::Result<Option<Vec<String>>> {
    match fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(bytes) => Ok(Some(split_cmdline(&bytes))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn split_cmdline(bytes: &[u8]) -> Vec<String> {
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    if bytes.is_empty() {
        return Vec::new();
    }
    bytes
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_command_name() {
        let s = parse_stat("4242 (a) b (c) S 1 4240 4240 0 -1 4194560 0").unwrap();
        assert_eq!(
            s,
            ProcStat {
                state: 'S',
                pgrp: 4240
            }
        );
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn cmdline_split() {
        assert_eq!(split_cmdline(b"python3\0-m\0x\0"), ["python3", "-m", "x"]);
        assert_eq!(split_cmdline(b"a\0\0b\0"), ["a", "", "b"]);
        assert!(split_cmdline(b"").is_empty());
    }

    #[test]
    fn own_process_is_seen() {
        let me = i32::try_from(std::process::id()).unwrap();
        let st = stat(me).unwrap();
        assert!(!st.is_zombie());
        assert!(live_members(st.pgrp).unwrap().contains(&me));
        assert!(!cmdline(me).unwrap().unwrap().is_empty());
        assert!(signal_group(0, Signal::SIGTERM).is_err());
        assert!(signal_group(1, Signal::SIGTERM).is_err());
    }
}
