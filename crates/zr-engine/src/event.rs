//! Events: the one stream through which a host follows a query.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;
use zr_types::{AgentId, StopReason, Usage};

use crate::TaskResult;

/// One thing that happened during a query.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Time since the query started.
    pub at: Duration,
    /// The agent it happened in; its id is its path (`root.0002-explore`).
    pub agent: AgentId,
    /// The agent's type: `root`, `fork` or the subagent type's name.
    pub agent_type: Arc<str>,
    /// What happened.
    pub kind: EventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EventKind {
    /// A piece of the model's text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A piece of the model's reasoning.
    ThinkingDelta {
        /// The new text.
        text: String,
    },
    /// The provider retries the current request; discard this agent's
    /// deltas since its last `TurnFinished` or `ModelRetry`.
    ModelRetry {
        /// The attempt that failed.
        attempt: u32,
        /// The wait before the next attempt.
        delay: Duration,
        /// What went wrong.
        reason: String,
    },
    /// A model request ended.
    TurnFinished {
        /// The 1-based turn.
        turn: u32,
        /// Why the model stopped.
        stop_reason: StopReason,
        /// This request's usage.
        usage: Usage,
    },
    /// Usage after a model request: the agent's so far, and the whole
    /// query's so far (every agent under it).
    Usage {
        /// The agent's usage.
        agent: Usage,
        /// The query's usage.
        total: Usage,
    },
    /// A tool call starts.
    ToolCallStarted {
        /// The provider's call id.
        call_id: String,
        /// The tool's name as the model wrote it.
        tool: String,
        /// The input as the model wrote it.
        input: Value,
    },
    /// A tool call ended (also when it was refused without running).
    ToolCallFinished {
        /// The provider's call id.
        call_id: String,
        /// The tool's name as the model wrote it.
        tool: String,
        /// Whether the model got an error result.
        is_error: bool,
        /// The result's text for people (its `display`, else its text).
        summary: String,
        /// How long it ran.
        duration: Duration,
    },
    /// A tool could not be carried out at all (`Err(ToolError)` or a
    /// panic); the model got an error result too.
    ToolFailed {
        /// The provider's call id.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// The error and its causes.
        error: String,
    },
    /// A subagent was created; `agent` is the subagent. It may wait in the
    /// call's queue before [`EventKind::SubagentRunning`].
    SubagentStarted {
        /// The delegating agent.
        parent: AgentId,
        /// The task's short description.
        description: String,
        /// Its index in the call's task list.
        index: usize,
    },
    /// A queued subagent got a slot and runs.
    SubagentRunning,
    /// A subagent ended.
    SubagentFinished {
        /// Its result, as the delegating model gets it.
        result: Box<TaskResult>,
    },
    /// The agent's transcript could not be written; the agent goes on, and
    /// its transcript stays as it was before this record (sent once per
    /// transcript: nothing more is written to it).
    TranscriptError {
        /// The transcript file.
        path: PathBuf,
        /// The error and its causes.
        error: String,
    },
    /// Resuming the agent changed something it was written with (an
    /// unknown type run as general-purpose, a missing folder replaced by
    /// its parent's, a definition that changed since).
    ResumeWarning {
        /// What changed, and why.
        message: String,
    },
}

/// Sends events of one query; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct EventSink {
    start: Instant,
    tx: mpsc::UnboundedSender<Event>,
}

impl EventSink {
    pub(crate) fn new(start: Instant, tx: mpsc::UnboundedSender<Event>) -> Self {
        Self { start, tx }
    }

    /// Sends an event; a host that stopped listening loses nothing it
    /// asked for, so a closed channel is ignored.
    pub(crate) fn send(&self, agent: &AgentId, agent_type: &Arc<str>, kind: EventKind) {
        let event = Event {
            at: self.start.elapsed(),
            agent: agent.clone(),
            agent_type: Arc::clone(agent_type),
            kind,
        };
        let _ = self.tx.send(event);
    }
}
