//! Hooks: the host's callbacks at SubagentStart, SubagentStop, PreToolUse
//! (which may deny a call, allow it or rewrite its input), PostToolUse and
//! Stop, each bounded by a timeout.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use zr_caps::PermissionMode;
use zr_types::{AgentId, BoxFuture, SessionId, ToolCall, ToolOutput};

use crate::error::catch_panic;
use crate::meta::AgentMeta;
use crate::outcome::TaskResult;
use crate::permission;

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

/// What a PreToolUse hook says about a call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PreToolUse {
    /// Go on with the call as it is.
    Continue,
    /// Go on with this input instead. The rewritten input is what the
    /// permission check sees, what the tool runs with, what later hooks and
    /// the host's events see; the model's own `tool_use` block in its
    /// history keeps the input it wrote.
    Rewrite(Value),
    /// Run the call without asking, with this input if one is given (as
    /// [`PreToolUse::Rewrite`]): the permission handler and the user are
    /// not asked about it (the mode's own rules still hold: in `plan` mode
    /// only read-only tools run). Later hooks still run, and a later
    /// `Deny` still wins.
    Allow(Option<Value>),
    /// Do not run the call; the reason is what the model is told (a blank
    /// one: "the hook gave no reason"). Counts as a permission denial of
    /// the agent.
    Deny(String),
}

/// A host's hooks. Every method has a default that does nothing, so a
/// hook implements only what it needs.
///
/// Hooks run for every agent, the root included (the `Subagent*` ones only
/// for subagents; [`Hook::stop`] only for the root), and are awaited: a
/// slow hook slows its agent, up to its timeout ([`Hooks::DEFAULT_TIMEOUT`],
/// 60 s, unless added with [`Hooks::with_timeout`]). A hook that panics or
/// does not answer in time never stops the engine: a
/// [`Hook::pre_tool_use`] that panics or times out denies the call with a
/// message saying so (its future is dropped, which is how a hook that runs
/// a process must stop it); a panic or timeout in any other hook is logged
/// and ignored.
///
/// Order of one call: [`Hook::pre_tool_use`] (every hook, in order: the
/// first `Deny` wins, rewrites chain, an `Allow` skips the question of the
/// permission check), then the permission check, then the
/// tool, then [`Hook::post_tool_use`]. A call that did not run (denied)
/// gets no PostToolUse; a call of a tool the agent does not have gets
/// neither (it is refused before any hook). Calls of the engine's own
/// tools (`Task`, `MultiTask`, `FindTool`) get both.
///
/// ```
/// use zr_engine::{Hook, HookAgent, Hooks, PreToolUse};
/// use zr_types::{BoxFuture, ToolCall};
///
/// /// Keeps every agent's Bash commands out of `/etc`.
/// #[derive(Debug)]
/// struct NoEtc;
///
/// impl Hook for NoEtc {
///     fn pre_tool_use<'a>(&'a self, _: &'a HookAgent, call: &'a ToolCall) -> BoxFuture<'a, PreToolUse> {
///         let touches_etc = call.name == "Bash"
///             && call.input["command"].as_str().is_some_and(|c| c.contains("/etc"));
///         Box::pin(async move {
///             if touches_etc {
///                 PreToolUse::Deny("commands may not touch /etc".to_owned())
///             } else {
///                 PreToolUse::Continue
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
    /// notification).
    fn subagent_stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        result: &'a TaskResult,
    ) -> BoxFuture<'a, ()> {
        let _ = (agent, result);
        Box::pin(async {})
    }

    /// `agent` is about to run `call` (its input possibly rewritten by an
    /// earlier hook).
    fn pre_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, PreToolUse> {
        let _ = (agent, call);
        Box::pin(async { PreToolUse::Continue })
    }

    /// `call` ran and produced `output` (which the model gets as it is;
    /// hooks cannot change it). Also called when the tool itself failed
    /// (`output.is_error`).
    fn post_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
        output: &'a ToolOutput,
    ) -> BoxFuture<'a, ()> {
        let _ = (agent, call, output);
        Box::pin(async {})
    }

    /// The root finished its turn with `answer` (a query's end: completed,
    /// at its turn limit or stopped by denials; not when it failed or was
    /// cancelled).
    fn stop<'a>(&'a self, agent: &'a HookAgent, answer: &'a str) -> BoxFuture<'a, ()> {
        let _ = (agent, answer);
        Box::pin(async {})
    }
}

/// The hooks of a session, called in the order they were added
/// ([`AgentConfig::hooks`](crate::AgentConfig::hooks)).
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    hooks: Vec<(Arc<dyn Hook>, Duration)>,
}

impl Hooks {
    /// How long one call of a hook may take unless it was added with
    /// [`Hooks::with_timeout`]: 60 s, as Claude Code's command hooks.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

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

/// A call that passes PreToolUse: the call to go on with (its input
/// rewritten or not) and whether a hook allowed it without asking.
#[derive(Debug, Clone)]
pub(crate) struct Admitted<'a> {
    /// Borrowed from the model's call unless a hook changed its input.
    pub(crate) call: Cow<'a, ToolCall>,
    pub(crate) allowed: bool,
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
                permission::seconds(timeout)
            ),
        };
    tracing::warn!(hook = what, error = %message, "hook failed");
    Err(message)
}

impl Hooks {
    /// Runs the PreToolUse hooks for the agent `view` makes (made only when
    /// there are hooks): the call to go on with, or why it must not run.
    pub(crate) async fn pre_tool_use<'a>(
        &self,
        view: impl FnOnce() -> HookAgent,
        call: &'a ToolCall,
    ) -> Result<Admitted<'a>, String> {
        let mut admitted = Admitted {
            call: Cow::Borrowed(call),
            allowed: false,
        };
        if self.hooks.is_empty() {
            return Ok(admitted);
        }
        let view = view();
        for (hook, timeout) in &self.hooks {
            let call = &admitted.call;
            let verdict = guarded("PreToolUse", *timeout, || hook.pre_tool_use(&view, call)).await;
            match verdict {
                Ok(PreToolUse::Continue) => {}
                Ok(PreToolUse::Allow(input)) => {
                    admitted.allowed = true;
                    if let Some(input) = input {
                        admitted.call.to_mut().input = input;
                    }
                }
                Ok(PreToolUse::Rewrite(input)) => admitted.call.to_mut().input = input,
                Ok(PreToolUse::Deny(reason)) => {
                    return Err(format!(
                        "tool '{}' was not run: a PreToolUse hook denied it: {}",
                        call.name,
                        permission::reason_of(&reason, "hook")
                    ));
                }
                Err(failed) => {
                    return Err(format!("tool '{}' was not run: {failed}", call.name));
                }
            }
        }
        Ok(admitted)
    }

    /// Runs the PostToolUse hooks for the agent `view` makes.
    pub(crate) async fn post_tool_use(
        &self,
        view: impl FnOnce() -> HookAgent,
        call: &ToolCall,
        output: &ToolOutput,
    ) {
        if self.hooks.is_empty() {
            return;
        }
        let view = view();
        for (hook, timeout) in &self.hooks {
            let _ = guarded("PostToolUse", *timeout, || {
                hook.post_tool_use(&view, call, output)
            })
            .await;
        }
    }

    /// Runs the SubagentStart hooks.
    pub(crate) async fn subagent_start(&self, agent: &HookAgent, parent: &AgentId) {
        for (hook, timeout) in &self.hooks {
            let _ = guarded("SubagentStart", *timeout, || {
                hook.subagent_start(agent, parent)
            })
            .await;
        }
    }

    /// Runs the SubagentStop hooks.
    pub(crate) async fn subagent_stop(&self, agent: &HookAgent, result: &TaskResult) {
        for (hook, timeout) in &self.hooks {
            let _ = guarded("SubagentStop", *timeout, || {
                hook.subagent_stop(agent, result)
            })
            .await;
        }
    }

    /// Runs the Stop hooks for the agent `view` makes.
    pub(crate) async fn stop(&self, view: impl FnOnce() -> HookAgent, answer: &str) {
        if self.hooks.is_empty() {
            return;
        }
        let view = view();
        for (hook, timeout) in &self.hooks {
            let _ = guarded("Stop", *timeout, || hook.stop(&view, answer)).await;
        }
    }
}
