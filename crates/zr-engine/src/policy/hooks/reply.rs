//! What hooks are told and what they answer: the one reply type of every
//! event ([`HookReply`], Claude Code's hook output typed) and the small
//! types that describe an event ([`SessionSource`], [`SessionEndReason`],
//! [`CompactTrigger`], [`Notice`]).

use serde_json::Value;

/// What a hook answers at an event: Claude Code's hook output, typed.
/// Every part is optional ([`HookReply::proceed`] says nothing), and each
/// event reads only the parts it has a use for (the others are ignored):
///
/// | event | `block` | `permission`, `input` | `context` | `halt` |
/// |---|---|---|---|---|
/// | SessionStart | – | – | added before the first prompt | the prompt is not sent |
/// | UserPromptSubmit | the prompt is refused ([`EngineError::PromptBlocked`](crate::EngineError::PromptBlocked)); the reason is the user's, not the model's | – | added after the prompt | as `block` |
/// | PreToolUse | the call is refused; the reason is the model's | allow without a question, ask whatever the mode says; the input to run with | – | the call is refused and the agent stops |
/// | PostToolUse | the reason goes to the model with the result | – | goes to the model with the result | the agent stops after this turn's calls |
/// | Stop, SubagentStop | the agent keeps working: the reason is its next user message | – | – | the agent stops (no block holds) |
///
/// The other events (SubagentStart, SubagentStop as an agent ended,
/// PreCompact, Notification, SessionEnd) take no answer.
///
/// An agent stopped by `halt` (Claude Code's `"continue": false`) ends
/// with [`TaskStatus::Stopped`](crate::TaskStatus::Stopped); the reason
/// (`stopReason`) is its result's error and an
/// [`EventKind::HookStopped`](crate::EventKind::HookStopped) event.
///
/// ```
/// use zr_engine::HookReply;
/// let deny = HookReply::block("no network commands");
/// let rewrite = HookReply::proceed().with_input(serde_json::json!({"command": "ls"}));
/// assert_ne!(deny, rewrite);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct HookReply {
    /// Blocks what the event is about, for this reason (`"decision":
    /// "block"`, PreToolUse's `"permissionDecision": "deny"`, or a command
    /// that exits with code 2 and this on its standard error).
    pub block: Option<String>,
    /// PreToolUse: how the call is to be permitted (`permissionDecision`
    /// `allow` or `ask`; `deny` is [`HookReply::block`]).
    pub permission: Option<ToolPermission>,
    /// PreToolUse: the input to run the call with (`updatedInput`).
    pub input: Option<Value>,
    /// Text for the model (`additionalContext`, or what a SessionStart or
    /// UserPromptSubmit command wrote on its standard output).
    pub context: Option<String>,
    /// Stops the agent, for this reason (`"continue": false` with its
    /// `stopReason`).
    pub halt: Option<String>,
}

/// How a PreToolUse hook wants a call permitted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolPermission {
    /// Run it without asking anybody. The deny rules, the `ask` rules,
    /// the effects boundary (paths outside the agent's roots, protected
    /// files) and plan mode still hold: a hook cannot grant what the
    /// project refuses or must ask about.
    Allow,
    /// Ask about it, whatever the mode and the allow rules say, as an
    /// `ask` rule would; the reason is shown with the question.
    Ask(String),
}

impl HookReply {
    /// Says nothing: the event goes on as it would without the hook.
    #[must_use]
    pub fn proceed() -> Self {
        Self::default()
    }

    /// Blocks what the event is about (see the table on [`HookReply`]).
    #[must_use]
    pub fn block(reason: impl Into<String>) -> Self {
        Self {
            block: Some(reason.into()),
            ..Self::default()
        }
    }

    /// PreToolUse: runs the call without a question ([`ToolPermission::Allow`]).
    #[must_use]
    pub fn allow() -> Self {
        Self {
            permission: Some(ToolPermission::Allow),
            ..Self::default()
        }
    }

    /// PreToolUse: asks about the call ([`ToolPermission::Ask`]).
    #[must_use]
    pub fn ask(reason: impl Into<String>) -> Self {
        Self {
            permission: Some(ToolPermission::Ask(reason.into())),
            ..Self::default()
        }
    }

    /// Stops the agent (see the table on [`HookReply`]).
    #[must_use]
    pub fn halt(reason: impl Into<String>) -> Self {
        Self {
            halt: Some(reason.into()),
            ..Self::default()
        }
    }

    /// PreToolUse: with the call's input replaced by `input`. The new
    /// input is what the permission check sees, what the tool runs with,
    /// what later hooks and the host's events see; the model's own
    /// `tool_use` block keeps the input it wrote.
    #[must_use]
    pub fn with_input(mut self, input: Value) -> Self {
        self.input = Some(input);
        self
    }

    /// With `text` for the model (see the table on [`HookReply`]).
    #[must_use]
    pub fn with_context(mut self, text: impl Into<String>) -> Self {
        self.context = Some(text.into());
        self
    }
}

/// Why a session starts: its first query, in a new session or in one
/// resumed from its transcripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionSource {
    /// A new session ([`Agent::new`](crate::Agent::new)).
    Startup,
    /// A session resumed from its transcripts ([`Agent::resume`](crate::Agent::resume)).
    Resume,
}

impl SessionSource {
    /// The name Claude Code gives it (`startup`, `resume`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Startup => "startup",
            Self::Resume => "resume",
        }
    }
}

/// Why a session ends ([`Agent::end`](crate::Agent::end)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionEndReason {
    /// The user left an interactive prompt.
    PromptInputExit,
    /// The conversation was cleared.
    Clear,
    /// Anything else: a one-shot run ended, the host stopped.
    Other,
}

impl SessionEndReason {
    /// The name Claude Code gives it (`prompt_input_exit`, `clear`,
    /// `other`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PromptInputExit => "prompt_input_exit",
            Self::Clear => "clear",
            Self::Other => "other",
        }
    }
}

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompactTrigger {
    /// The agent's context passed the threshold
    /// ([`CompactionConfig::threshold`](crate::CompactionConfig::threshold)).
    Auto,
    /// Somebody asked for it.
    Manual,
}

impl CompactTrigger {
    /// The name Claude Code gives it (`auto`, `manual`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Manual => "manual",
        }
    }
}

/// Something the user should hear about (the Notification event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// What it is about.
    pub kind: NoticeKind,
    /// The text, as the user reads it.
    pub message: String,
}

/// What a [`Notice`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoticeKind {
    /// A person is about to be asked whether a call may run.
    PermissionPrompt,
}

impl NoticeKind {
    /// The name Claude Code gives it (its `notification_type`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PermissionPrompt => "permission_prompt",
        }
    }
}
