//! [`AgentMeta`]: what an agent is (its id, type, parent, mode, folder,
//! model, prompt), the narrow view that hooks, permissions, transcripts,
//! worktrees, compaction and events take instead of the whole run.

use std::path::Path;
use std::sync::Arc;

use zr_caps::{AgentDefinition, PermissionMode};
use zr_protocol::transcript::TaskRef;
use zr_providers::Effort;
use zr_resolve::Depth;
use zr_types::AgentId;

use crate::model::structured::Structured;

/// One agent as the stores and policies see it: set when the agent is
/// built, changed only by its worktree (`cwd`).
#[derive(Debug, Clone)]
pub(crate) struct AgentMeta {
    /// Its id, which is its path (`root`, `root.0001-explore`).
    pub(crate) id: AgentId,
    /// `root`, `fork` or the subagent type's name.
    pub(crate) agent_type: Arc<str>,
    /// The delegating agent; `None` for the root.
    pub(crate) parent: Option<AgentId>,
    /// The agent's effective permission mode (C4: never wider than its
    /// parent's).
    pub(crate) mode: PermissionMode,
    /// Whether the agent runs in the background (nobody can be asked).
    pub(crate) background: bool,
    /// The folder the agent's tools work in (a worktree for isolated
    /// subagents, else the runtime's).
    pub(crate) cwd: Arc<Path>,
    /// The top of its worktree when it is isolated: its one writable root
    /// (`boundary.rs`).
    pub(crate) worktree: Option<Arc<Path>>,
    /// Its type's memory folder (`agent_memory.rs`), one of its writable
    /// roots; `None` without memory.
    pub(crate) memory: Option<Arc<Path>>,
    /// Whether its kind only reads (Explore, Plan, a fork of one): its
    /// processes get a read-only file system.
    pub(crate) reads_only: bool,
    /// Whether its pool holds a file-writing builtin (`Write`, `Edit`):
    /// an agent without one gets a read-only sandbox for its commands.
    pub(crate) writes: bool,
    /// Its type's definition, when the type narrows its tools with rules
    /// (`tools: Bash(git diff:*)`) or denies some of their uses.
    pub(crate) narrowing: Option<Arc<AgentDefinition>>,
    /// The model its requests name.
    pub(crate) model: Arc<str>,
    /// Its system prompt.
    pub(crate) system: Arc<str>,
    /// Its turn limit.
    pub(crate) max_turns: u32,
    /// The schema its final answer must match; `None`: free text.
    pub(crate) output: Option<Arc<Structured>>,
    /// How much its model should reason; `None`: the API's default.
    pub(crate) effort: Option<Effort>,
    /// The task of its parent's call that it carries out (`None` for the
    /// root): a resumed call finds its tasks' transcripts by it.
    pub(crate) task: Option<TaskRef>,
    /// Where it stands in the delegation tree: its level, and the deepest
    /// level its subtree may reach (R4).
    pub(crate) depth: Depth,
}

impl AgentMeta {
    /// A stand-in for `agent` in `mode` working in `cwd`, for what the
    /// boundary would make of it before it runs (`preview.rs`).
    pub(crate) fn preview(agent: &str, mode: PermissionMode, cwd: &Path) -> Self {
        Self {
            id: AgentId::root(),
            agent_type: Arc::from(agent),
            parent: None,
            mode,
            background: false,
            cwd: Arc::from(cwd),
            worktree: None,
            memory: None,
            reads_only: false,
            writes: true,
            narrowing: None,
            model: Arc::from(""),
            system: Arc::from(""),
            max_turns: 1,
            output: None,
            effort: None,
            task: None,
            depth: Depth::root(1),
        }
    }
}
