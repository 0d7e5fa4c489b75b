//! The record file in a session folder: which process groups the zr
//! running the session has started and not yet ended. A later zr reads it
//! to find what a killed one left ([`leftovers`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::live::{self, OWNER_VAR};
use crate::procfs;

/// Writes the table of live groups to a file while held: at once (groups
/// started before, such as MCP servers, are in it), then after each change.
/// Dropping it deletes the file: what it listed has ended by then, or the
/// watcher kills it when this process exits.
///
/// One file at a time: a newer recording replaces an older one.
#[derive(Debug)]
pub struct Recording {
    path: PathBuf,
}

/// Starts recording to `path` (its folder must exist).
pub fn record_in(path: impl Into<PathBuf>) -> Recording {
    let path = path.into();
    live::set_record(Some(path.clone()));
    Recording { path }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if live::record().as_deref() == Some(self.path.as_path()) {
            live::set_record(None);
        }
    }
}

/// A process a dead zr left running.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Leftover {
    /// Its pid.
    pub pid: u32,
    /// Its command line (shortened).
    pub command: String,
}

/// The processes still running that the zr which wrote the record at
/// `path` started (members of its recorded groups, and processes that
/// carry its `ZR_OWNER` value after leaving their group), sorted by pid.
///
/// Empty when there is no record, when the zr that wrote it still runs
/// (its processes are its own), or off Linux. A recorded group whose
/// leader's pid now names a younger process was reused and is skipped.
pub fn leftovers(path: &Path) -> Vec<Leftover> {
    // Only a regular file: reading a FIFO put in its place would block.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Vec::new();
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let Some(record) = parse(&text) else {
        tracing::debug!(path = %path.display(), "not a process record");
        return Vec::new();
    };
    let owner_alive =
        procfs::stat(record.owner.0).is_some_and(|s| s.alive() && s.start == record.owner.1);
    if owner_alive {
        return Vec::new();
    }
    let ours: BTreeSet<u32> = record
        .groups
        .iter()
        .filter(|(pgid, start)| same_group(*pgid, *start))
        .map(|(pgid, _)| *pgid)
        .collect();
    let mark = format!("{OWNER_VAR}={}.{}", record.owner.0, record.owner.1);
    let me = std::process::id();
    let mut found: Vec<Leftover> = procfs::pids()
        .into_iter()
        .filter(|&pid| pid != me)
        .filter(|&pid| {
            procfs::stat(pid).is_some_and(|s| {
                s.alive() && (ours.contains(&s.pgid) || procfs::environment_has(pid, &mark))
            })
        })
        .map(|pid| Leftover {
            pid,
            command: procfs::command_line(pid),
        })
        .collect();
    found.sort();
    found
}

/// Whether the group `pgid` whose leader started at `start` is still that
/// group (its id not reused by a younger process).
fn same_group(pgid: u32, start: u64) -> bool {
    match procfs::stat(pgid) {
        // The leader lives: the group is the same only if it is the same process.
        Some(leader) if leader.alive() => leader.start == start,
        // The leader is gone; while any member remains the id is not reused.
        _ => true,
    }
}

/// The processes still running that this process started and that left
/// the process group they were started in (`setsid`, `setpgid`): they carry
/// this process's `ZR_OWNER` value, and neither the kill of their group nor
/// the watcher reaches them. Sorted by pid.
///
/// A process still in a group this process started is not one: the group
/// is killed when its guard drops (it may be dying now), or by the watcher.
/// Empty when this process never started a child, or off Linux.
pub fn strays() -> Vec<Leftover> {
    let Some(groups) = live::started_groups() else {
        return Vec::new();
    };
    let mark = format!("{OWNER_VAR}={}", live::owner_token());
    let me = std::process::id();
    let mut found: Vec<Leftover> = procfs::pids()
        .into_iter()
        .filter(|&pid| pid != me)
        .filter(|&pid| {
            procfs::stat(pid).is_some_and(|s| {
                s.alive()
                    && !groups
                        .get(&s.pgid)
                        .is_some_and(|&start| same_group(s.pgid, start))
                    && procfs::environment_has(pid, &mark)
            })
        })
        .map(|pid| Leftover {
            pid,
            command: procfs::command_line(pid),
        })
        .collect();
    found.sort();
    found
}

/// Sends SIGKILL to each of `strays` (a process gone meanwhile is not an
/// error).
pub fn kill_strays(strays: &[Leftover]) {
    kill_all(strays);
}

/// Sends SIGKILL to each of `leftovers` (a process gone meanwhile is not an
/// error) and deletes the record at `path`.
pub fn kill_leftovers(path: &Path, leftovers: &[Leftover]) {
    kill_all(leftovers);
    let _ = std::fs::remove_file(path);
}

fn kill_all(leftovers: &[Leftover]) {
    #[cfg(unix)]
    for leftover in leftovers {
        if let Ok(raw) = i32::try_from(leftover.pid)
            && raw > 1
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(raw),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    #[cfg(not(unix))]
    let _ = leftovers;
}

/// A parsed record: the owner `(pid, start)` and the groups `(pgid, start)`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Parsed {
    pub(crate) owner: (u32, u64),
    pub(crate) groups: Vec<(u32, u64)>,
}

/// Parses a record; `None` if it is not one (no header or owner line).
pub(crate) fn parse(text: &str) -> Option<Parsed> {
    let mut lines = text.lines();
    if lines.next()? != live::HEADER {
        return None;
    }
    let mut owner = None;
    let mut groups = Vec::new();
    for line in lines {
        let mut words = line.split(' ');
        match words.next() {
            Some("owner") => {
                owner = Some((words.next()?.parse().ok()?, words.next()?.parse().ok()?));
            }
            Some("group") => {
                let (Some(Ok(pgid)), Some(Ok(start))) =
                    (words.next().map(str::parse), words.next().map(str::parse))
                else {
                    continue;
                };
                groups.push((pgid, start));
            }
            _ => {}
        }
    }
    Some(Parsed {
        owner: owner?,
        groups,
    })
}
