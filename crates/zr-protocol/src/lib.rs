//! zr's host protocol: the messages a program in another language (the
//! Python and TypeScript packages) and `zr host` exchange over zr's stdio,
//! one JSON object per line each way.
//!
//! # The exchange
//!
//! 1. The host writes [`HostMessage::Hello`] with the protocol version it
//!    speaks; zr answers [`ZrMessage::Hello`] with its own (or
//!    [`ZrMessage::Error`] and exits when it cannot speak that version).
//! 2. The host writes [`HostMessage::Query`]: the prompt and its
//!    [`QueryOptions`] (agent types, host tools, permission mode, model,
//!    turn limit, a session to resume, which callbacks it answers).
//! 3. zr streams [`ZrMessage::Event`]s; it asks the host with
//!    [`ZrMessage::CanUseTool`], [`ZrMessage::HookCall`] and
//!    [`ZrMessage::ToolCall`], each with an `id` the host echoes in its
//!    [`HostMessage::PermissionAnswer`], [`HostMessage::HookAnswer`] or
//!    [`HostMessage::ToolResult`]. Questions may overlap (subagents run at
//!    the same time); answers may come in any order.
//! 4. The query ends with one [`ZrMessage::Result`]. The host may then
//!    write [`HostMessage::Prompt`] (the same session goes on) or close
//!    zr's standard input (zr exits). [`HostMessage::Interrupt`] stops the
//!    running query: its result has status `interrupted`, and the session
//!    can be resumed.
//!
//! Every message has a `type`. Readers ignore keys and event kinds they do
//! not know; [`PROTOCOL_VERSION`] changes when a message's meaning does.
//! The JSON Schema of both directions is generated from these types
//! ([`schema`]) and committed as `schema/host-protocol.schema.json`.
//!
//! # The formats
//!
//! The crate holds every format zr writes for other programs, each
//! versioned: the host protocol's messages (this module,
//! [`PROTOCOL_VERSION`]), the events they carry ([`Event`]) and the
//! transcript records
//! ([`transcript`], [`transcript::VERSION`]). zr-engine writes them (its
//! own events convert to [`Event`] with an exhaustive match, so a new
//! engine event does not compile until the protocol carries it), and
//! `zr host`, `zr sessions`, resume and the language packages read them.
//!
//! A crate of its own, not a module of zr-types: schemars (and what it
//! pulls) stays out of the crates below, the resolver's above all. It
//! depends on zr-types and zr-caps only (a transcript header records the
//! agent type's definition and permission mode, zr-caps' types).

pub mod transcript;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the protocol this zr speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// A message from the host to zr.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum HostMessage {
    /// The first message: the version the host speaks.
    Hello {
        /// [`PROTOCOL_VERSION`] of the host's client.
        protocol: u32,
        /// The client's name and version, for logs (`zr-python 0.1.0`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<String>,
    },
    /// Start the session: the first prompt and the session's options.
    Query {
        /// What to ask the root agent.
        prompt: String,
        /// The session's options.
        #[serde(default)]
        options: QueryOptions,
    },
    /// The next prompt of the same session (after a `result`).
    Prompt {
        /// What to ask the root agent.
        prompt: String,
    },
    /// Stop the running query (its agents and their processes).
    Interrupt,
    /// The answer to a [`ZrMessage::CanUseTool`].
    PermissionAnswer {
        /// The question's id.
        id: u64,
        /// The decision.
        #[serde(flatten)]
        decision: PermissionDecision,
    },
    /// The answer to a [`ZrMessage::HookCall`].
    HookAnswer {
        /// The call's id.
        id: u64,
        /// What the hook says (only a PreToolUse answer changes anything).
        #[serde(flatten)]
        answer: HookDecision,
    },
    /// The result of a [`ZrMessage::ToolCall`].
    ToolResult {
        /// The call's id.
        id: u64,
        /// What the model reads.
        content: String,
        /// Whether the call failed (the model is told so).
        #[serde(default)]
        is_error: bool,
    },
}

/// The options of a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Agent types defined by the host, by name, added to the project's.
    pub agents: BTreeMap<String, AgentSpec>,
    /// Tools the host runs; the root gets all of them, a subagent type
    /// those its `tools` name.
    pub tools: Vec<HostTool>,
    /// The root's permission mode (`default`, `acceptEdits`, `plan`,
    /// `dontAsk`, `bypassPermissions`); zr.toml's when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// The model name; zr.toml's or the provider's default when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The root's system prompt; zr.toml's or zr's own when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The root's turn limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// A session to continue (its id, as a `result` gave it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// Whether the host answers permission questions ([`ZrMessage::CanUseTool`]);
    /// otherwise zr.toml's `[permissions]` decide alone.
    pub can_use_tool: bool,
    /// The hooks the host answers ([`ZrMessage::HookCall`]).
    pub hooks: Vec<HookSpec>,
}

/// An agent type defined by the host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
#[non_exhaustive]
pub struct AgentSpec {
    /// When to use it, for the delegating model.
    pub description: String,
    /// Its system prompt.
    pub prompt: String,
    /// The tools it gets (builtins and host tools, by name); unset: every
    /// builtin and no host tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Tools it never gets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disallowed_tools: Option<Vec<String>>,
    /// Its model (an id or an alias); the session's when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its turn limit; half the parent's when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
}

/// A tool the host runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostTool {
    /// Its name (letters, digits, `_` and `-`).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema of its input.
    pub input_schema: Value,
    /// Whether it only reads (read-only tools run without a permission
    /// question, and in plan mode).
    #[serde(default)]
    pub read_only: bool,
}

/// A hook the host answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HookSpec {
    /// The event.
    pub event: HookEvent,
    /// For the tool events: the tool names it is for (`Bash`,
    /// `Write|Edit`); every tool when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
}

/// The events a hook can be set for (Claude Code's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub enum HookEvent {
    /// Before a tool call; the answer may deny it, allow it or rewrite
    /// its input.
    PreToolUse,
    /// After a tool call.
    PostToolUse,
    /// A subagent was created.
    SubagentStart,
    /// A subagent ended.
    SubagentStop,
    /// The root answered.
    Stop,
}

/// A permission decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "behavior", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PermissionDecision {
    /// Run the call.
    Allow {
        /// Run it, and the agent's later calls of the tool, without asking.
        #[serde(default)]
        for_session: bool,
    },
    /// Refuse it; the message is what the model reads.
    Deny {
        /// Why.
        #[serde(default)]
        message: String,
    },
}

/// A hook's answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
#[non_exhaustive]
pub struct HookDecision {
    /// At PreToolUse: `allow` (no permission question), `deny` or none
    /// (go on as usual).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<HookVerdict>,
    /// Why (the model reads it when the call is denied).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// At PreToolUse: the input the call runs with instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
}

/// A PreToolUse hook's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HookVerdict {
    /// Run the call without a permission question.
    Allow,
    /// Do not run it.
    Deny,
}

/// A message from zr to the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ZrMessage {
    /// The answer to the host's hello.
    Hello {
        /// [`PROTOCOL_VERSION`].
        protocol: u32,
        /// zr's version.
        version: String,
    },
    /// Something happened in the session.
    Event(Event),
    /// May this call run? Answer with [`HostMessage::PermissionAnswer`].
    CanUseTool {
        /// Echo it in the answer.
        id: u64,
        /// The agent (`root`, `root.0001-worker`).
        agent: String,
        /// `root`, `fork` or the agent type's name.
        agent_type: String,
        /// The tool.
        tool: String,
        /// The input it would run with.
        input: Value,
        /// Why the call is asked about whatever the rules say (it crosses
        /// the effects boundary: a path outside the project, a protected
        /// file).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        crossing: Option<String>,
    },
    /// A hook the host set. Answer with [`HostMessage::HookAnswer`].
    HookCall {
        /// Echo it in the answer.
        id: u64,
        /// The event.
        event: HookEvent,
        /// The session.
        session: String,
        /// The agent.
        agent: String,
        /// `root`, `fork` or the agent type's name.
        agent_type: String,
        /// The tool (tool events).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
        /// The call's input (tool events).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input: Option<Value>,
        /// The call's result text (PostToolUse), or the subagent's answer
        /// (SubagentStop).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
    },
    /// Run a host tool. Answer with [`HostMessage::ToolResult`].
    ToolCall {
        /// Echo it in the answer.
        id: u64,
        /// The tool.
        tool: String,
        /// Its input as the model wrote it.
        input: Value,
        /// The calling agent.
        agent: String,
        /// The session.
        session: String,
    },
    /// A query ended.
    Result(QueryEnd),
    /// Something went wrong outside a query (a bad message, a project
    /// that does not load, a provider that is not set), with zr's text.
    Error {
        /// What went wrong, as the `zr` command says it.
        message: String,
        /// What to do about it, when zr knows.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        help: Option<String>,
        /// Whether zr exits after it.
        fatal: bool,
    },
}

/// How a query ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QueryEnd {
    /// The session, for resuming.
    pub session: String,
    /// `completed`, `max_turns`, `denied`, ..., `interrupted` or `error`.
    pub status: String,
    /// The root's answer.
    #[serde(default)]
    pub output: String,
    /// The root's turns.
    #[serde(default)]
    pub turns: u32,
    /// The root's usage.
    #[serde(default)]
    pub usage: Usage,
    /// Every agent's usage.
    #[serde(default)]
    pub total_usage: Usage,
    /// How long the query ran.
    #[serde(default)]
    pub duration_ms: u64,
    /// Why it failed (status `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The session budget (zr.toml's `[budget]`) that ended the query:
    /// its agents were stopped, and `status` is `budget_exhausted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ended: Option<BudgetEnded>,
}

/// A session budget that ended a query (`budget` names it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "budget", rename_all = "snake_case")]
#[non_exhaustive]
pub enum BudgetEnded {
    /// `[budget] tokens`: the tokens of every agent of the query.
    Tokens {
        /// The limit.
        limit: u64,
    },
    /// `[budget] cost_usd`: their cost.
    CostUsd {
        /// The limit, in US dollars.
        limit: f64,
    },
}

/// One event of the session: the `zr run --json` events, typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// Milliseconds since the query started.
    pub at_ms: u64,
    /// The agent (`root`, `root.0001-worker`).
    pub agent: String,
    /// `root`, `fork` or the agent type's name.
    pub agent_type: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened (`event` names the kind).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// A piece of the model's text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of the model's reasoning.
    ThinkingDelta {
        /// The text.
        text: String,
    },
    /// The provider retries; drop the agent's deltas since its last
    /// `turn_finished`.
    ModelRetry {
        /// The attempt that failed.
        attempt: u32,
        /// The wait before the next one.
        delay_ms: u64,
        /// What went wrong.
        reason: String,
    },
    /// A model request ended.
    TurnFinished {
        /// The turn, from 1.
        turn: u32,
        /// Why the model stopped (`end_turn`, `tool_use`, ...).
        stop_reason: String,
        /// The request's usage.
        usage: Usage,
    },
    /// Usage so far.
    Usage {
        /// The agent's.
        agent_usage: Usage,
        /// The whole query's.
        total_usage: Usage,
    },
    /// A tool call starts.
    ToolCallStarted {
        /// The provider's call id.
        call_id: String,
        /// The tool.
        tool: String,
        /// Its input as the model wrote it.
        input: Value,
    },
    /// A tool call ended.
    ToolCallFinished {
        /// The provider's call id.
        call_id: String,
        /// The tool.
        tool: String,
        /// Whether the model got an error result.
        is_error: bool,
        /// The result's text for people.
        summary: String,
        /// How long it ran.
        duration_ms: u64,
    },
    /// A tool could not be carried out.
    ToolFailed {
        /// The provider's call id.
        call_id: String,
        /// The tool.
        tool: String,
        /// The error.
        error: String,
    },
    /// A subagent was created (`agent` is the subagent).
    SubagentStarted {
        /// The delegating agent.
        parent: String,
        /// The task's description.
        description: String,
        /// Its index in its call's task list.
        index: usize,
        /// Whether it runs in the background.
        background: bool,
    },
    /// A queued subagent got its slot.
    SubagentRunning,
    /// A subagent ended.
    SubagentFinished {
        /// Its result as its parent's model gets it (`status`, `output`,
        /// `turns`, `usage`, `duration_ms`, `error`, ...).
        result: Value,
    },
    /// What a background subagent is doing.
    SubagentProgress {
        /// A few words.
        summary: String,
    },
    /// A call was refused.
    PermissionDenied {
        /// The provider's call id.
        call_id: String,
        /// The tool.
        tool: String,
        /// What the model was told.
        reason: String,
    },
    /// Older history was replaced by a summary.
    Compacted {
        /// Context before, in tokens.
        before_tokens: u64,
        /// Estimated context after.
        after_tokens: u64,
        /// Messages replaced.
        messages: usize,
        /// The summary request's usage.
        usage: Usage,
    },
    /// Compaction was due but failed.
    CompactionFailed {
        /// Context before, in tokens.
        before_tokens: u64,
        /// What went wrong.
        reason: String,
    },
    /// The agent's transcript could not be written.
    TranscriptError {
        /// The file.
        path: String,
        /// The error.
        error: String,
    },
    /// Resuming changed something the agent was written with.
    ResumeWarning {
        /// What, and why.
        message: String,
    },
    /// A hook stopped the agent (Claude Code's `"continue": false`); it
    /// ends with status `stopped`.
    HookStopped {
        /// Which hook, and its reason.
        reason: String,
    },
}

/// The JSON Schema of both directions: `{"$defs": ..., "oneOf": [host,
/// zr]}` with `HostMessage` and `ZrMessage` as definitions.
#[must_use]
pub fn schema() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let host = generator.subschema_for::<HostMessage>();
    let zr = generator.subschema_for::<ZrMessage>();
    let defs: serde_json::Map<String, Value> =
        generator.take_definitions(true).into_iter().collect();
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "zr host protocol",
        "description": format!("Messages of zr's host protocol, version {PROTOCOL_VERSION}: one JSON object per line over `zr host`'s stdio. HostMessage: host to zr; ZrMessage: zr to host."),
        "oneOf": [host, zr],
        "$defs": defs,
    })
}

/// Token counts (zr_types' `Usage`, as the protocol writes it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Usage {
    /// Input tokens not read from cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
}

impl From<zr_types::Usage> for Usage {
    fn from(u: zr_types::Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_input_tokens: u.cache_read_input_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens,
        }
    }
}

#[cfg(test)]
mod tests;
