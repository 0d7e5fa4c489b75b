//! Per-agent state machinery: a map from (session, agent) to one tool's own
//! state type, behind a short-held lock, emptied for an agent when it ends.
//! The state types belong to the tools that keep them (the read ledger,
//! the todo list, Bash's background commands); this module knows none.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use zr_types::{AgentId, SessionId, ToolContext};

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

/// Every agent's state of type `S` behind one lock, held only for short
/// synchronous sections (never across an `.await`).
#[derive(Debug)]
pub(crate) struct AgentStates<S> {
    inner: Mutex<HashMap<AgentKey, S>>,
}

impl<S> Default for AgentStates<S> {
    fn default() -> Self {
        Self {
            inner: Mutex::new(HashMap::new()),
        }
    }
}

impl<S> AgentStates<S> {
    /// Runs `f` on the state of `key` if there is one.
    pub(crate) fn peek<R>(&self, key: &AgentKey, f: impl FnOnce(&S) -> R) -> Option<R> {
        let map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(key).map(f)
    }

    /// Takes the whole state of `key` out. Every agent's end asks each
    /// tool's map, and most agents never used most tools: an empty map
    /// answers without hashing the key.
    pub(crate) fn remove(&self, key: &AgentKey) -> Option<S> {
        let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if map.is_empty() {
            return None;
        }
        map.remove(key)
    }
}

impl<S: Default> AgentStates<S> {
    /// Runs `f` on the state of `key`, creating it when missing.
    pub(crate) fn with<R>(&self, key: &AgentKey, f: impl FnOnce(&mut S) -> R) -> R {
        let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        f(map.entry(key.clone()).or_default())
    }
}
