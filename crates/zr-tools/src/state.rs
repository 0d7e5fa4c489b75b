//! Per-agent state: the read ledger, the todo list and the background
//! shells, keyed by (session, agent) and dropped when the agent ends.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use zr_types::{AgentId, SessionId, ToolContext};

use crate::bash::BackgroundShell;
use crate::todo::TodoItem;

/// Which agent a piece of state belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct AgentKey {
    session: SessionId,
    agent: AgentId,
}

impl AgentKey {
    pub(crate) fn new(session: &SessionId, agent: &AgentId) -> Self {
        Self {
            session: session.clone(),
            agent: agent.clone(),
        }
    }

    pub(crate) fn of(ctx: &ToolContext) -> Self {
        Self::new(&ctx.session, &ctx.agent)
    }
}

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

/// One agent's state.
#[derive(Debug, Default)]
pub(crate) struct AgentState {
    /// Files read (or written) in this session, with their stamp then.
    pub(crate) reads: HashMap<PathBuf, FileStamp>,
    /// The todo list.
    pub(crate) todos: Vec<TodoItem>,
    /// Background commands still owned by the agent.
    pub(crate) background: Vec<BackgroundShell>,
    /// The number of background commands ever started (for ids).
    pub(crate) shells_started: u32,
}

/// Every agent's state behind one lock, held only for short synchronous
/// sections (never across an `.await`).
#[derive(Debug, Default)]
pub(crate) struct AgentStates {
    inner: Mutex<HashMap<AgentKey, AgentState>>,
}

impl AgentStates {
    /// Runs `f` on the state of `key`, creating it when missing.
    pub(crate) fn with<R>(&self, key: &AgentKey, f: impl FnOnce(&mut AgentState) -> R) -> R {
        let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        f(map.entry(key.clone()).or_default())
    }

    /// Runs `f` on the state of `key` if there is one.
    pub(crate) fn peek<R>(&self, key: &AgentKey, f: impl FnOnce(&AgentState) -> R) -> Option<R> {
        let map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(key).map(f)
    }

    /// Takes the whole state of `key` out.
    pub(crate) fn remove(&self, key: &AgentKey) -> Option<AgentState> {
        let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        map.remove(key)
    }

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
