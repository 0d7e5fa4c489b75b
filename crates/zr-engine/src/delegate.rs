//! Delegation: Task and MultiTask ([`task`]), the one subagent lifecycle
//! ([`subagent`]), background agents, reviving from transcripts, worktree
//! isolation, and what a typed subagent starts with (memory, first turn).

pub(crate) mod agent_memory;
pub(crate) mod background;
pub(crate) mod first_turn;
pub(crate) mod revive;
pub(crate) mod subagent;
pub(crate) mod task;
pub(crate) mod worktree;
