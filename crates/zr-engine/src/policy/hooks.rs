//! Hooks: the host's callbacks at Claude Code's events (SessionStart,
//! UserPromptSubmit, PreToolUse, PostToolUse, Stop and SubagentStop,
//! SubagentStart, PreCompact, Notification, SessionEnd), each bounded by
//! a timeout, and what their answers ([`HookReply`]) do. `hooks/reply.rs`
//! holds the answer and event types, `hooks/calls.rs` the runners the
//! loop calls at each event (one agent's hooks: the session's, then its
//! type's own).

mod calls;
mod reply;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use zr_caps::{AgentDefinition, PermissionMode};
use zr_types::{AgentId, BoxFuture, SessionId, ToolCall, ToolOutput};

use crate::error::{catch_panic, seconds};
use crate::meta::AgentMeta;
use crate::outcome::TaskResult;

pub(crate) use calls::{AgentHooks, Halt};
pub use reply::{
    CompactTrigger, HookReply, Notice, NoticeKind, SessionEndReason, SessionSource, ToolPermission,
};

/// The agent a hook is called for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookAgent {
    /// The session it belongs to.
    pub session: SessionId,
    /// Its id, which is its path (`root`, `root.0001-worker`).
    pub agent: AgentId,
    /// `root`, `fork` or the subagent type's name.
    pub agent_type: String,
    /// Its transcript file; `None` when transcripts are off
    /// ([`AgentConfig::sessions_dir`](crate::AgentConfig::sessions_dir)).
    /// At a new subagent's SubagentStart the file does not exist yet: it is
    /// created when the agent starts running (in its worktree, if
    /// isolated).
    pub transcript_path: Option<PathBuf>,
    /// Its effective permission mode.
    pub mode: PermissionMode,
}

impl HookAgent {
    /// Whether it is the session's root (whose stop is the Stop event; a
    /// subagent's is SubagentStop).
    #[must_use]
    pub fn is_root(&self) -> bool {
        self.agent == AgentId::root()
    }
}

/// A host's hooks. Every method has a default that does nothing, so a
/// hook implements only what it needs.
///
/// Hooks run for every agent, the root included, and are awaited: a slow
/// hook slows its agent, up to its timeout ([`Hooks::DEFAULT_TIMEOUT`],
/// 60 s, unless added with [`Hooks::with_timeout`]). A hook that panics or
/// does not answer in time never stops the engine: a
/// [`Hook::pre_tool_use`] that panics or times out refuses the call with
/// a message saying so (its future is dropped, which is how a hook that
/// runs a process must stop it); a panic or timeout in any other hook is
/// logged and taken as [`HookReply::proceed`].
///
/// What each answer does at each event is [`HookReply`]'s table. Several
/// hooks of one event run one after the other, in the order they were
/// added (the session's, then those of the agent's type,
/// [`TypeHooks`]): at PreToolUse the first block wins, rewritten inputs
/// chain (each hook sees the input the one before it gave) and an `ask`
/// wins over an `allow`; at PostToolUse and Stop every hook runs and
/// their reasons are joined.
///
/// Order of one call: [`Hook::pre_tool_use`], then the permission check,
/// then the tool, then [`Hook::post_tool_use`]. A call that did not run
/// (refused) gets no PostToolUse; a call of a tool the agent does not have
/// gets neither (it is refused before any hook). Calls of the engine's own
/// tools (`Task`, `MultiTask`, `FindTool`) get both.
///
/// ```
/// use zr_engine::{Hook, HookAgent, HookReply, Hooks};
/// use zr_types::{BoxFuture, ToolCall};
///
/// /// Keeps every agent's Bash commands out of `/etc`.
/// #[derive(Debug)]
/// struct NoEtc;
///
/// impl Hook for NoEtc {
///     fn pre_tool_use<'a>(&'a self, _: &'a HookAgent, call: &'a ToolCall) -> BoxFuture<'a, HookReply> {
///         let touches_etc = call.name == "Bash"
///             && call.input["command"].as_str().is_some_and(|c| c.contains("/etc"));
///         Box::pin(async move {
///             if touches_etc {
///                 HookReply::block("commands may not touch /etc")
///             } else {
///                 HookReply::proceed()
///             }
///         })
///     }
/// }
///
/// let mut config = zr_engine::AgentConfig::new("You are helpful.");
/// config.hooks = Hooks::new().with(std::sync::Arc::new(NoEtc));
/// assert!(!config.hooks.is_empty());
/// ```
pub trait Hook: Send + Sync + fmt::Debug {
    /// The session's first query is about to start (`source`: a new
    /// session or a resumed one); called for the root. Its `context` is
    /// added before the prompt; its `halt` keeps the prompt from being
    /// sent.
    fn session_start<'a>(
        &'a self,
        agent: &'a HookAgent,
        source: SessionSource,
    ) -> BoxFuture<'a, HookReply> {
        let _ = (agent, source);
        Box::pin(async { HookReply::proceed() })
    }

    /// The user sent `prompt` to the root (a query's prompt). Its `block`
    /// or `halt` refuses the prompt before the model sees it; its
    /// `context` is added after it.
    fn user_prompt_submit<'a>(
        &'a self,
        agent: &'a HookAgent,
        prompt: &'a str,
    ) -> BoxFuture<'a, HookReply> {
        let _ = (agent, prompt);
        Box::pin(async { HookReply::proceed() })
    }

    /// `agent` is about to run `call` (its input possibly rewritten by an
    /// earlier hook).
    fn pre_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        let _ = (agent, call);
        Box::pin(async { HookReply::proceed() })
    }

    /// `call` ran and produced `output` (also called when the tool itself
    /// failed: `output.is_error`). The output cannot be changed; a `block`
    /// reason or a `context` goes to the model with it.
    fn post_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
        output: &'a ToolOutput,
    ) -> BoxFuture<'a, HookReply> {
        let _ = (agent, call, output);
        Box::pin(async { HookReply::proceed() })
    }

    /// `agent` ended its turn with `answer` and is about to stop: the Stop
    /// event for the root, SubagentStop for a subagent
    /// ([`HookAgent::is_root`]). A `block` keeps it working: the reason is
    /// its next user message, and `active` is `true` at every stop after
    /// that (Claude Code's `stop_hook_active`). At most
    /// [`Hooks::max_stop_blocks`] blocks in a row are followed; then the
    /// agent stops anyway, with a warning. Not called when the agent
    /// stopped otherwise (its turn limit, a budget, a failure).
    fn stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        answer: &'a str,
        active: bool,
    ) -> BoxFuture<'a, HookReply> {
        let _ = (agent, answer, active);
        Box::pin(async { HookReply::proceed() })
    }

    /// A subagent was created by `parent` (before it waits for a slot).
    fn subagent_start<'a>(
        &'a self,
        agent: &'a HookAgent,
        parent: &'a AgentId,
    ) -> BoxFuture<'a, ()> {
        let _ = (agent, parent);
        Box::pin(async {})
    }

    /// A subagent ended, however (completed, failed, timed out, denied,
    /// ...), with the result its parent gets. For a subagent the call
    /// waits for, not called when the query is cancelled or dropped; a
    /// background agent stopped by the host or by the end of the session
    /// gets it with status `cancelled`. It runs after the subagent's
    /// cleanup and worktree are settled and before its result is published
    /// (`SubagentFinished`, and for a background agent its parent's
    /// notification). Only the session's hooks get it (not those of the
    /// agent's type). See [`Hook::stop`] for the subagent's stop, which
    /// may keep it working.
    fn subagent_stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        result: &'a TaskResult,
    ) -> BoxFuture<'a, ()> {
        let _ = (agent, result);
        Box::pin(async {})
    }

    /// `agent`'s history is about to be compacted.
    fn pre_compact<'a>(
        &'a self,
        agent: &'a HookAgent,
        trigger: CompactTrigger,
    ) -> BoxFuture<'a, ()> {
        let _ = (agent, trigger);
        Box::pin(async {})
    }

    /// Something about `agent` the user should hear (a person is about to
    /// be asked whether one of its calls may run).
    fn notification<'a>(&'a self, agent: &'a HookAgent, notice: &'a Notice) -> BoxFuture<'a, ()> {
        let _ = (agent, notice);
        Box::pin(async {})
    }

    /// The session ends ([`Agent::end`](crate::Agent::end)); called for the
    /// root, once, if the session started.
    fn session_end<'a>(
        &'a self,
        agent: &'a HookAgent,
        reason: SessionEndReason,
    ) -> BoxFuture<'a, ()> {
        let _ = (agent, reason);
        Box::pin(async {})
    }
}

/// The hooks of an agent type, for the agents of that type
/// ([`AgentConfig::type_hooks`](crate::AgentConfig::type_hooks)): a host
/// turns a definition's [`AgentDefinition::hooks`] (Claude Code's `hooks`
/// of an agent file's front matter) into hooks that run for that agent's
/// lifetime only, after the session's. Asked each time an agent of the
/// type is built (a new subagent, a resumed one).
pub trait TypeHooks: Send + Sync + fmt::Debug {
    /// The hooks of the agents of `definition`'s type (none:
    /// [`Hooks::new`]).
    fn hooks(&self, definition: &AgentDefinition) -> Hooks;
}

/// The hooks of a session, called in the order they were added
/// ([`AgentConfig::hooks`](crate::AgentConfig::hooks)), and how far a
/// Stop hook may keep an agent going.
#[derive(Debug, Clone)]
pub struct Hooks {
    hooks: Vec<(Arc<dyn Hook>, Duration)>,
    max_stop_blocks: u32,
}

impl Default for Hooks {
    fn default() -> Self {
        Self {
            hooks: Vec::new(),
            max_stop_blocks: Self::DEFAULT_MAX_STOP_BLOCKS,
        }
    }
}

impl Hooks {
    /// How long one call of a hook may take unless it was added with
    /// [`Hooks::with_timeout`]: 60 s, as Claude Code's command hooks.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

    /// How many Stop (or SubagentStop) blocks in a row keep an agent
    /// working by default: 8, as Claude Code.
    pub const DEFAULT_MAX_STOP_BLOCKS: u32 = 8;

    /// No hooks.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `hook` after the others, with [`Hooks::DEFAULT_TIMEOUT`].
    #[must_use]
    pub fn with(self, hook: Arc<dyn Hook>) -> Self {
        self.with_timeout(hook, Self::DEFAULT_TIMEOUT)
    }

    /// Adds `hook` after the others; each of its calls may take `timeout`.
    #[must_use]
    pub fn with_timeout(mut self, hook: Arc<dyn Hook>, timeout: Duration) -> Self {
        self.hooks.push((hook, timeout));
        self
    }

    /// With at most `n` Stop (or SubagentStop) blocks in a row followed
    /// for one agent (default [`Hooks::DEFAULT_MAX_STOP_BLOCKS`]); the
    /// next block is ignored with a warning and the agent stops. `0`: a
    /// Stop hook never keeps an agent working. Read from the session's
    /// hooks (those of [`TypeHooks`] do not change it).
    #[must_use]
    pub fn with_max_stop_blocks(mut self, n: u32) -> Self {
        self.max_stop_blocks = n;
        self
    }

    /// How many Stop blocks in a row are followed.
    #[must_use]
    pub fn max_stop_blocks(&self) -> u32 {
        self.max_stop_blocks
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }
}

impl HookAgent {
    /// The hooks' view of `agent`, whose transcript is `transcript_path`.
    pub(crate) fn of(
        session: &SessionId,
        agent: &AgentMeta,
        transcript_path: Option<PathBuf>,
    ) -> Self {
        Self {
            session: session.clone(),
            agent: agent.id.clone(),
            agent_type: agent.agent_type.to_string(),
            transcript_path,
            mode: agent.mode,
        }
    }
}

/// Runs the hook call `work` within `timeout`; a panic (while it makes its
/// future or while that runs) or the timeout is logged and returned as
/// the message of what went wrong with the hook `what`.
async fn guarded<'a, T>(
    what: &str,
    timeout: Duration,
    work: impl FnOnce() -> BoxFuture<'a, T>,
) -> Result<T, String> {
    let message =
        match tokio::time::timeout(timeout, catch_panic(async move { work().await })).await {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(panic)) => format!("the {what} hook panicked: {panic}"),
            Err(_) => format!(
                "the {what} hook did not answer within {} (its timeout)",
                seconds(timeout)
            ),
        };
    tracing::warn!(hook = what, error = %message, "hook failed");
    Err(message)
}
