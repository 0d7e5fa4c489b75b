//! The read ledger of Read, Write and Edit: what each file looked like when
//! the agent last read or wrote it, and the read-first rule that an
//! existing file is overwritten only when it is unchanged since.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::state::{AgentKey, AgentStates};

/// What a file looked like when the agent last read or wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStamp {
    modified: Option<SystemTime>,
    len: u64,
}

impl FileStamp {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        Self {
            modified: meta.modified().ok(),
            len: meta.len(),
        }
    }
}

/// One agent's ledger: the files read (or written) in this session, with
/// their stamp then.
#[derive(Debug, Default)]
pub(crate) struct ReadLedger {
    reads: HashMap<PathBuf, FileStamp>,
}

impl AgentStates<ReadLedger> {
    /// Records that the agent has seen `path` as `stamp`.
    pub(crate) fn record_read(&self, key: &AgentKey, path: &Path, stamp: FileStamp) {
        self.with(key, |s| {
            s.reads.insert(path.to_path_buf(), stamp);
        });
    }

    /// The stamp recorded for `path`, if the agent has read it.
    pub(crate) fn read_stamp(&self, key: &AgentKey, path: &Path) -> Option<FileStamp> {
        self.peek(key, |s| s.reads.get(path).copied()).flatten()
    }
}

/// Whether an existing file may be overwritten by an agent, given its
/// ledger entry: `Err` holds the message for the model.
pub(crate) fn check_fresh(
    tool: &str,
    path: &Path,
    recorded: Option<FileStamp>,
    now: &std::fs::Metadata,
) -> Result<(), String> {
    match recorded {
        None => Err(format!(
            "{tool}: {} exists and you have not read it in this session. Read it first (so you do not overwrite changes you have not seen), then call {tool} again.",
            path.display()
        )),
        Some(stamp) if stamp != FileStamp::of(now) => Err(format!(
            "{tool}: {} was changed since you last read it (by the user or another process). Read it again, then call {tool} again.",
            path.display()
        )),
        Some(_) => Ok(()),
    }
}
