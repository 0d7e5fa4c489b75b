//! The `max_concurrent` slots of a session's whole tree of agents, and the
//! rule that keeps them free of deadlock at any depth.
//!
//! **The rule.** A foreground subagent runs in a slot of the session's
//! one semaphore ([`TreeSlots`]), taken when it starts (after its
//! SubagentStart hooks, while its call's deadline runs) and given back
//! when it ends. A subagent that delegates gives its slot back while one
//! of its Task or MultiTask calls is open ([`SlotHold::lend`]) and takes
//! one again, queueing like any other, when the last of them ends
//! ([`Lent::back`]), before it goes on. So at most `max_concurrent`
//! subagents of the whole tree are *working* (asking their model or
//! running tools) at once, however deep it is; a parent only waiting on
//! its children does not count. The root and background agents hold no
//! slot (as before); a background agent's own subagents do.
//!
//! **No deadlock.** Every holder of a slot either works (a model request,
//! a tool: both end, the call's deadline at the latest) or ends, and one
//! that starts to wait on children gives its slot back first. Nothing
//! that holds a slot waits for a slot, so every queued task (a child, or
//! a parent whose children ended) gets one; tokio's semaphore is
//! first-come first-served, so none waits forever behind later arrivals.
//! `tests/it/tree_slots.rs` checks this over random trees.

use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::sync::lock;

/// The slots of a session's tree: `max_concurrent` of them.
#[derive(Debug)]
pub(crate) struct TreeSlots(Arc<Semaphore>);

impl TreeSlots {
    pub(crate) fn new(max_concurrent: usize) -> Self {
        Self(Arc::new(Semaphore::new(max_concurrent.max(1))))
    }

    /// Waits for a slot and gives it to `hold` (until [`SlotHold::end`]).
    pub(crate) async fn take(&self, hold: &SlotHold) {
        // A closed semaphore cannot happen (it is never closed); run
        // without a slot rather than fail the task.
        let permit = Arc::clone(&self.0).acquire_owned().await.ok();
        let mut state = lock(&hold.state);
        state.slots = Some(Arc::clone(&self.0));
        if state.open == 0 {
            state.permit = permit;
        }
    }
}

/// The slot one agent holds, if any (the root and background agents: none).
#[derive(Debug, Default)]
pub(crate) struct SlotHold {
    state: Mutex<HoldState>,
}

#[derive(Debug, Default)]
struct HoldState {
    /// The slot, while the agent works.
    permit: Option<OwnedSemaphorePermit>,
    /// Its open Task and MultiTask calls.
    open: usize,
    /// Where its slot came from (set once it took one).
    slots: Option<Arc<Semaphore>>,
}

impl SlotHold {
    /// Gives the slot back for good: the agent ended.
    pub(crate) fn end(&self) {
        let mut state = lock(&self.state);
        state.permit = None;
        state.slots = None;
    }

    /// Gives the slot back while a delegation call is open (its children
    /// need it); [`Lent::back`] takes one again.
    pub(crate) fn lend(&self) -> Lent<'_> {
        let mut state = lock(&self.state);
        state.open += 1;
        state.permit = None;
        Lent {
            hold: self,
            closed: false,
        }
    }

    /// Whether it holds a slot now.
    #[cfg(test)]
    pub(crate) fn holds(&self) -> bool {
        lock(&self.state).permit.is_some()
    }
}

/// A delegation call's loan of its agent's slot.
#[derive(Debug)]
pub(crate) struct Lent<'a> {
    hold: &'a SlotHold,
    closed: bool,
}

impl Lent<'_> {
    /// The call ended: when it was the agent's last open one, waits for a
    /// slot again (in the queue, like any task) before the agent goes on.
    pub(crate) async fn back(mut self) {
        self.closed = true;
        let slots = {
            let mut state = lock(&self.hold.state);
            state.open -= 1;
            if state.open > 0 || state.permit.is_some() {
                return;
            }
            match &state.slots {
                Some(slots) => Arc::clone(slots),
                None => return,
            }
        };
        let permit = slots.acquire_owned().await.ok();
        let mut state = lock(&self.hold.state);
        // Another call opened meanwhile: it lends the slot at once.
        if state.open == 0 && state.permit.is_none() && state.slots.is_some() {
            state.permit = permit;
        }
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if !self.closed {
            lock(&self.hold.state).open -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_lent_slot_frees_the_semaphore_and_comes_back_after_the_last_call() {
        let slots = TreeSlots::new(1);
        let hold = SlotHold::default();
        slots.take(&hold).await;
        assert!(hold.holds());
        assert_eq!(slots.0.available_permits(), 0);
        let first = hold.lend();
        let second = hold.lend();
        assert!(!hold.holds());
        assert_eq!(slots.0.available_permits(), 1);
        first.back().await;
        assert!(!hold.holds(), "one call is still open");
        second.back().await;
        assert!(hold.holds());
        assert_eq!(slots.0.available_permits(), 0);
        hold.end();
        assert_eq!(slots.0.available_permits(), 1);
    }

    #[tokio::test]
    async fn a_root_without_a_slot_lends_nothing() {
        let hold = SlotHold::default();
        hold.lend().back().await;
        assert!(!hold.holds());
    }

    #[tokio::test]
    async fn a_dropped_loan_closes_its_call() {
        let slots = TreeSlots::new(1);
        let hold = SlotHold::default();
        slots.take(&hold).await;
        drop(hold.lend());
        hold.lend().back().await;
        assert!(hold.holds());
    }
}
