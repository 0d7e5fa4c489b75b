//! What the hub's connections ask of the host: the elicitor, the roots, and who has a call in flight.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use zr_types::AgentId;

use crate::elicit::Elicitor;

/// The host's side, shared by every connection of a hub and read at the
/// moment a server asks (so a change reaches live connections too).
#[derive(Debug)]
pub(crate) struct Host {
    elicitor: RwLock<Option<Arc<dyn Elicitor>>>,
    roots: RwLock<Vec<PathBuf>>,
}

impl Host {
    pub(crate) fn new(roots: Vec<PathBuf>) -> Self {
        Self {
            elicitor: RwLock::new(None),
            roots: RwLock::new(roots),
        }
    }

    pub(crate) fn elicitor(&self) -> Option<Arc<dyn Elicitor>> {
        self.elicitor
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_elicitor(&self, elicitor: Option<Arc<dyn Elicitor>>) {
        *self
            .elicitor
            .write()
            .unwrap_or_else(PoisonError::into_inner) = elicitor;
    }

    pub(crate) fn roots(&self) -> Vec<PathBuf> {
        self.roots
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the roots; `true` when they changed.
    pub(crate) fn set_roots(&self, roots: Vec<PathBuf>) -> bool {
        let mut current = self.roots.write().unwrap_or_else(PoisonError::into_inner);
        if *current == roots {
            return false;
        }
        *current = roots;
        true
    }
}

/// The agent a call comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    pub(crate) agent: AgentId,
    pub(crate) background: bool,
}

/// The calls in flight on one connection, by who made them.
#[derive(Debug, Default, Clone)]
pub(crate) struct InFlight {
    calls: Arc<Mutex<BTreeMap<u64, Option<Caller>>>>,
    next: Arc<AtomicU64>,
}

impl InFlight {
    /// Counts a call until the guard is dropped.
    pub(crate) fn enter(&self, caller: Option<Caller>) -> InFlightGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, caller);
        InFlightGuard {
            calls: self.clone(),
            id,
        }
    }

    /// The callers now: `None` for a call no agent made.
    pub(crate) fn callers(&self) -> Vec<Option<Caller>> {
        self.lock().values().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Option<Caller>>> {
        // One insert or remove at a time: consistent even after a panic.
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One call in flight; dropping it ends the count.
#[derive(Debug)]
pub(crate) struct InFlightGuard {
    calls: InFlight,
    id: u64,
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.calls.lock().remove(&self.id);
    }
}
