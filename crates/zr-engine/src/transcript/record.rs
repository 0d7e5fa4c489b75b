//! The records of a transcript file: one JSON object a line, tagged by
//! `kind`; the first is the header.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use zr_caps::{AgentDefinition, PermissionMode};
use zr_types::{AgentId, Message, SessionId, Usage};

use crate::meta::TaskRef;

/// The format version this code writes and the newest it reads.
///
/// 2: a subagent's header records the definition it started with and its
/// effective permission mode (`definition`, `permission_mode`), which a
/// resumed agent runs with; a zr that reads only version 1 would resume
/// it with the configuration's current definition, so it refuses it.
pub(crate) const VERSION: u32 = 2;

/// One line of a transcript, as read back.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Record {
    Header(Header),
    /// A message appended to the history. Two messages of the same role in
    /// a row are one message (blocks added to the last user message, as
    /// `push_user_text` does, are written as a message of their own).
    /// Its `at_ms` (when it was written) is for readers such as
    /// `zr sessions show`; resuming does not need it.
    Message {
        message: Message,
    },
    /// The whole history, replacing what the records before it built
    /// (compaction; a root query that was cancelled).
    HistoryReplaced {
        history: Vec<Message>,
    },
    /// The agent's run ended (not written when it was stopped from outside:
    /// timed out, cancelled, killed).
    Finished(Finished),
    /// The root's query failed (after its `finished` record): the history
    /// is back to what it was before the query, as the root keeps it.
    QueryFailed {
        history: Vec<Message>,
    },
    /// A tool call that is not read-only is about to run (written before
    /// its handler is called): after a kill, a call with this record and
    /// no result may have had its effect, and is not run again.
    CallStarted {
        id: String,
    },
}

/// One line of a transcript, as written (borrowing what it holds).
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum RecordOut<'a> {
    Header(&'a Header),
    /// `at_ms`: when the record was written, in milliseconds since the
    /// Unix epoch (the session's clock).
    Message {
        message: &'a Message,
        at_ms: u64,
    },
    HistoryReplaced {
        history: &'a [Message],
    },
    Finished(&'a Finished),
    QueryFailed {
        history: &'a [Message],
    },
    CallStarted {
        id: &'a str,
    },
}

/// Who the agent is and what it was started with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Header {
    pub(crate) version: u32,
    pub(crate) session: SessionId,
    pub(crate) agent: AgentId,
    /// `root`, `fork` or the subagent type's name.
    pub(crate) agent_type: String,
    pub(crate) parent: Option<AgentId>,
    /// `stable_hash` (16 hex digits) of the subagent type's definition as
    /// JSON; `None` for the root and forks.
    #[serde(default)]
    pub(crate) definition_hash: Option<String>,
    /// The subagent type's whole definition as the agent started with it,
    /// which it resumes with whatever the configuration says then (its
    /// custom and connection tools are kept where the runtime still has
    /// them); `None` for the root, forks, and transcripts of version 1,
    /// which recorded the hash alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) definition: Option<Box<AgentDefinition>>,
    /// A subagent's effective permission mode when it started (the
    /// stricter of its parent's and its type's); a resumed agent never
    /// runs in a wider one. `None` for the root and version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) permission_mode: Option<PermissionMode>,
    /// The system prompt the agent ran with (a fork's is its parent's).
    pub(crate) system_prompt: String,
    pub(crate) model: String,
    /// The folder its tools worked in.
    pub(crate) cwd: PathBuf,
    /// `cwd` again when it differs from the runtime's folder (a worktree).
    #[serde(default)]
    pub(crate) worktree: Option<PathBuf>,
    /// Milliseconds since the Unix epoch.
    pub(crate) created_ms: u64,
    pub(crate) max_turns: u32,
    /// How many of the first message records are history the agent started
    /// with rather than its own work: a fork's parent's conversation (the
    /// `zr sessions` turn count skips them). 0 for every other agent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) inherited_messages: usize,
    /// The parent's call and task index the agent carries out (`None` for
    /// the root and agents of older transcripts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) task: Option<TaskRef>,
    /// Whether it runs in the background.
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) background: bool,
    /// The output schema its `Task` call passed, which replaces its
    /// type's: a revived agent answers in it again (`None`: its type's, or
    /// free text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) output_schema: Option<serde_json::Value>,
    /// The deepest level a subagent's subtree may reach when it started
    /// (R4; its level is its id's): a resumed agent never delegates deeper.
    /// `None` for the root and older transcripts (made when only the root
    /// delegated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) depth_ceiling: Option<u32>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Finished {
    /// A [`TaskStatus`](crate::TaskStatus) as the model sees it.
    pub(crate) status: String,
    pub(crate) output: String,
    pub(crate) turns: u32,
    pub(crate) usage: Usage,
    /// What went wrong, for every status but `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// When the run ended, in milliseconds since the Unix epoch (absent in
    /// transcripts written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) at_ms: Option<u64>,
    /// A structured answer's value (it was checked against the schema
    /// when it was given): a result taken from the transcript has it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) value: Option<serde_json::Value>,
}
