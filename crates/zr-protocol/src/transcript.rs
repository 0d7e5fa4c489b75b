//! The transcript format: what every agent of a session appends to
//! `<sessions_dir>/<session>/<agent>.jsonl` as it runs, and what
//! `zr resume`, `zr sessions` and any other program read back.
//!
//! One [`Record`] a line, a JSON object tagged by `kind`; the first line
//! is the [`Header`], whose `version` is the format's ([`VERSION`]). A
//! line without its newline is a write cut short (a killed process) and
//! is not a record.
//!
//! # Versions
//!
//! - 1: the first format.
//! - 2: a subagent's header records the definition it started with and
//!   its effective permission mode (`definition`, `permission_mode`),
//!   which a resumed agent runs with; a zr that reads only version 1 would
//!   resume it with the configuration's current definition, so it refuses
//!   it.
//!
//! Within a version, keys are only added, each with a default, so that
//! files written before still read (the header's `task`,
//! `depth_ceiling`, ... and the message's `at_ms` came that way); the
//! version changes when a reader of the previous one would misread a
//! file. Readers refuse a header whose version is newer than theirs.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use zr_caps::{AgentDefinition, PermissionMode};
use zr_types::{AgentId, Message, SessionId, Usage};

/// The format version this code writes and the newest it reads.
pub const VERSION: u32 = 2;

/// One line of a transcript, as read back (and as a program that writes
/// transcripts builds it; the engine writes [`RecordRef`], which borrows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// The first line: who the agent is and what it started with.
    Header(Header),
    /// A message appended to the history. Two messages of the same role in
    /// a row are one message (blocks added to the last user message, and
    /// each tool result as its call ends, are written as messages of their
    /// own).
    Message {
        /// The message.
        message: Message,
        /// When the record was written, in milliseconds since the Unix
        /// epoch (the session's clock); absent in older files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at_ms: Option<u64>,
    },
    /// The whole history, replacing what the records before it built
    /// (compaction; a root query that was cancelled).
    HistoryReplaced {
        /// The history from here on.
        history: Vec<Message>,
    },
    /// The agent's run ended (not written when it was stopped from outside:
    /// timed out, cancelled, killed).
    Finished(Finished),
    /// The root's query failed (after its `finished` record): the history
    /// is back to what it was before the query, as the root keeps it.
    QueryFailed {
        /// The history from here on.
        history: Vec<Message>,
    },
    /// A tool call that is not read-only is about to run (written before
    /// its handler is called): after a kill, a call with this record and
    /// no result may have had its effect, and is not run again.
    CallStarted {
        /// The call's `tool_use` id.
        id: String,
    },
}

/// One line of a transcript as the engine writes it: [`Record`],
/// borrowing what it holds (a history is not copied to be written). Both
/// write the same JSON (a test holds them equal).
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecordRef<'a> {
    /// [`Record::Header`].
    Header(&'a Header),
    /// [`Record::Message`] (`at_ms` is always written).
    Message {
        /// The message.
        message: &'a Message,
        /// When the record was written, in milliseconds since the Unix
        /// epoch.
        at_ms: u64,
    },
    /// [`Record::HistoryReplaced`].
    HistoryReplaced {
        /// The history from here on.
        history: &'a [Message],
    },
    /// [`Record::Finished`].
    Finished(&'a Finished),
    /// [`Record::QueryFailed`].
    QueryFailed {
        /// The history from here on.
        history: &'a [Message],
    },
    /// [`Record::CallStarted`].
    CallStarted {
        /// The call's `tool_use` id.
        id: &'a str,
    },
}

/// Who the agent is and what it was started with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The format's version ([`VERSION`] when this code wrote it).
    pub version: u32,
    /// The session.
    pub session: SessionId,
    /// The agent; its id is its path in the tree (`root.0002-explore`).
    pub agent: AgentId,
    /// `root`, `fork` or the subagent type's name.
    pub agent_type: String,
    /// The delegating agent (`None` for the root).
    pub parent: Option<AgentId>,
    /// `stable_hash` (16 hex digits) of the subagent type's definition as
    /// JSON; `None` for the root and forks.
    #[serde(default)]
    pub definition_hash: Option<String>,
    /// The subagent type's whole definition as the agent started with it,
    /// which it resumes with whatever the configuration says then (its
    /// custom and connection tools are kept where the runtime still has
    /// them); `None` for the root, forks, and transcripts of version 1,
    /// which recorded the hash alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<Box<AgentDefinition>>,
    /// A subagent's effective permission mode when it started (the
    /// stricter of its parent's and its type's); a resumed agent never
    /// runs in a wider one. `None` for the root and version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<PermissionMode>,
    /// The system prompt the agent ran with (a fork's is its parent's).
    pub system_prompt: String,
    /// The model it ran with.
    pub model: String,
    /// The folder its tools worked in.
    pub cwd: PathBuf,
    /// `cwd` again when it differs from the runtime's folder (a worktree).
    #[serde(default)]
    pub worktree: Option<PathBuf>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Its turn limit.
    pub max_turns: u32,
    /// How many of the first message records are history the agent started
    /// with rather than its own work: a fork's parent's conversation (the
    /// `zr sessions` turn count skips them). 0 for every other agent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub inherited_messages: usize,
    /// The parent's call and task index the agent carries out (`None` for
    /// the root and agents of older transcripts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskRef>,
    /// Whether it runs in the background.
    #[serde(default, skip_serializing_if = "is_false")]
    pub background: bool,
    /// The output schema its `Task` call passed, which replaces its
    /// type's: a revived agent answers in it again (`None`: its type's, or
    /// free text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The deepest level a subagent's subtree may reach when it started
    /// (R4; its level is its id's): a resumed agent never delegates deeper.
    /// `None` for the root and older transcripts (made when only the root
    /// delegated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth_ceiling: Option<u32>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One task of a `Task` or `MultiTask` call: the call's `tool_use` id and
/// the task's index in it.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaskRef {
    /// The id of the parent's `tool_use` block.
    pub call: String,
    /// The task's index in the call (0 for `Task`).
    pub index: usize,
    /// The task's short description.
    #[serde(default)]
    pub description: String,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    /// The run's status as the delegating model sees it (`completed`,
    /// `max_turns`, `denied`, `stopped`, `budget_exhausted`, ...).
    pub status: String,
    /// The agent's answer.
    pub output: String,
    /// Its turns.
    pub turns: u32,
    /// The run's usage.
    pub usage: Usage,
    /// What went wrong, for every status but `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When the run ended, in milliseconds since the Unix epoch (absent in
    /// transcripts written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    /// A structured answer's value (it was checked against the schema
    /// when it was given): a result taken from the transcript has it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

impl Record {
    /// This record as the engine writes it (`None`: a message without
    /// its time, which the engine always writes).
    #[must_use]
    pub fn borrowed(&self) -> Option<RecordRef<'_>> {
        Some(match self {
            Self::Header(h) => RecordRef::Header(h),
            Self::Message { message, at_ms } => RecordRef::Message {
                message,
                at_ms: (*at_ms)?,
            },
            Self::HistoryReplaced { history } => RecordRef::HistoryReplaced { history },
            Self::Finished(f) => RecordRef::Finished(f),
            Self::QueryFailed { history } => RecordRef::QueryFailed { history },
            Self::CallStarted { id } => RecordRef::CallStarted { id },
        })
    }
}

#[cfg(test)]
mod tests;
