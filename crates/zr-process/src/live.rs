//! The table of live process groups this process started: told to the
//! watcher, and written to the record file when one is set.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::watcher::Watcher;

/// The variable every child gets, `OWNER_VAR=PID.START` of the zr process
/// that started it: a process that left its group (setsid) still carries
/// it, so a later zr can find what a killed one left.
pub const OWNER_VAR: &str = "ZR_OWNER";

/// One live group.
#[derive(Debug, Clone)]
struct Entry {
    label: String,
    /// The leader's start time (`/proc/PID/stat`), 0 if unknown.
    start: u64,
}

#[derive(Debug)]
struct Live {
    groups: BTreeMap<u32, Entry>,
    /// Groups started and since ended, with their leader's start time: a
    /// process still in one was killed with it (and may not have died yet).
    ended: BTreeMap<u32, u64>,
    record: Option<PathBuf>,
    watcher: Option<Watcher>,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    groups: BTreeMap::new(),
    ended: BTreeMap::new(),
    record: None,
    watcher: None,
});

fn live() -> MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// This process as the record names it: `(pid, start)`.
pub(crate) fn owner() -> (u32, u64) {
    let pid = std::process::id();
    (pid, crate::procfs::stat(pid).map_or(0, |s| s.start))
}

/// The value of [`OWNER_VAR`] for this process.
pub(crate) fn owner_token() -> String {
    let (pid, start) = owner();
    format!("{pid}.{start}")
}

/// Adds the group `pgid` (its leader just started).
pub(crate) fn add(pgid: u32, label: &str) {
    let start = crate::procfs::stat(pgid).map_or(0, |s| s.start);
    let mut live = live();
    live.groups.insert(
        pgid,
        Entry {
            label: label.to_owned(),
            start,
        },
    );
    live.tell('+', pgid);
    live.write_record();
}

/// Removes the group `pgid` (killed, its leader gone or about to be).
pub(crate) fn remove(pgid: u32) {
    let mut live = live();
    if let Some(entry) = live.groups.remove(&pgid) {
        live.ended.insert(pgid, entry.start);
        live.tell('-', pgid);
        live.write_record();
    }
}

/// Writes the record to `path` from now on (`None`: stop, and delete the
/// file that was written).
pub(crate) fn set_record(path: Option<PathBuf>) {
    let mut live = live();
    if let Some(old) = live.record.take() {
        let _ = std::fs::remove_file(&old);
    }
    live.record = path;
    live.write_record();
}

/// The record file in use.
pub(crate) fn record() -> Option<PathBuf> {
    live().record.clone()
}

/// Every group this process started, live or ended, with its leader's
/// start time; `None` when it never started a child.
pub(crate) fn started_groups() -> Option<BTreeMap<u32, u64>> {
    let live = live();
    if live.groups.is_empty() && live.ended.is_empty() {
        return None;
    }
    let mut all = live.ended.clone();
    all.extend(live.groups.iter().map(|(pgid, entry)| (*pgid, entry.start)));
    Some(all)
}

/// The watcher's pid, once one runs (for tests and logs).
pub(crate) fn watcher_pid() -> Option<u32> {
    live().watcher.as_ref().map(Watcher::id)
}

impl Live {
    /// Tells the watcher; starts one first if none runs or it died (then it
    /// learns every live group).
    fn tell(&mut self, op: char, pgid: u32) {
        if let Some(watcher) = &mut self.watcher
            && watcher.tell(op, pgid).is_ok()
        {
            return;
        }
        if let Some(dead) = self.watcher.take() {
            tracing::warn!("the process watcher ended; starting a new one");
            dead.reap();
        }
        match Watcher::start(self.groups.keys().copied()) {
            Ok(watcher) => self.watcher = Some(watcher),
            Err(error) => {
                tracing::warn!(%error, "cannot start the process watcher: if zr is killed, processes left in their groups survive until `zr resume`");
            }
        }
    }

    /// Rewrites the record file (write, then rename: a reader never sees
    /// half of it).
    fn write_record(&self) {
        let Some(path) = &self.record else {
            return;
        };
        let (pid, start) = owner();
        let mut text = format!("{HEADER}\nowner {pid} {start}\n");
        for (pgid, entry) in &self.groups {
            text.push_str(&format!("group {pgid} {} {}\n", entry.start, entry.label));
        }
        if let Err(error) = write_atomic(path, &text) {
            tracing::debug!(path = %path.display(), %error, "cannot write the process record");
        }
    }
}

/// The first line of a record file.
pub(crate) const HEADER: &str =
    "# zr process record: the process groups a zr process started that still run";

fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}
