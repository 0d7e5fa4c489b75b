//! The engine's events (and the budget that ended a query) as zr-protocol
//! writes them: for `zr host`, `zr run --json` and every other reader.
//!
//! The matches are exhaustive and live in the crate that defines the
//! enums (which are `#[non_exhaustive]` elsewhere): an event added to
//! [`EventKind`] does not compile until the protocol carries it, so no
//! event is dropped on its way to a host.

use std::time::Duration;

use zr_protocol as wire;

use super::{Event, EventKind};
use crate::model::budget::BudgetEnded;

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Event {
    /// This event as the host protocol writes it.
    #[must_use]
    pub fn to_wire(&self) -> wire::Event {
        wire::Event {
            at_ms: millis(self.at),
            agent: self.agent.to_string(),
            agent_type: self.agent_type.to_string(),
            kind: self.kind.to_wire(),
        }
    }
}

impl EventKind {
    /// This event's kind as the host protocol writes it.
    #[must_use]
    pub fn to_wire(&self) -> wire::EventKind {
        use wire::EventKind as W;
        match self {
            Self::TextDelta { text } => W::TextDelta { text: text.clone() },
            Self::ThinkingDelta { text } => W::ThinkingDelta { text: text.clone() },
            Self::ModelRetry {
                attempt,
                delay,
                reason,
            } => W::ModelRetry {
                attempt: *attempt,
                delay_ms: millis(*delay),
                reason: reason.clone(),
            },
            Self::TurnFinished {
                turn,
                stop_reason,
                usage,
            } => W::TurnFinished {
                turn: *turn,
                stop_reason: stop_reason.as_str().to_owned(),
                usage: (*usage).into(),
            },
            Self::Usage { agent, total } => W::Usage {
                agent_usage: (*agent).into(),
                total_usage: (*total).into(),
            },
            Self::ToolCallStarted {
                call_id,
                tool,
                input,
            } => W::ToolCallStarted {
                call_id: call_id.clone(),
                tool: tool.clone(),
                input: input.clone(),
            },
            Self::ToolCallFinished {
                call_id,
                tool,
                is_error,
                summary,
                duration,
            } => W::ToolCallFinished {
                call_id: call_id.clone(),
                tool: tool.clone(),
                is_error: *is_error,
                summary: summary.clone(),
                duration_ms: millis(*duration),
            },
            Self::ToolFailed {
                call_id,
                tool,
                error,
            } => W::ToolFailed {
                call_id: call_id.clone(),
                tool: tool.clone(),
                error: error.clone(),
            },
            Self::SubagentStarted {
                parent,
                description,
                index,
                background,
            } => W::SubagentStarted {
                parent: parent.to_string(),
                description: description.clone(),
                index: *index,
                background: *background,
            },
            Self::SubagentRunning => W::SubagentRunning,
            Self::SubagentFinished { result } => W::SubagentFinished {
                // A `TaskResult` is plain data: it always serialises.
                result: serde_json::to_value(result).unwrap_or_default(),
            },
            Self::SubagentProgress { summary } => W::SubagentProgress {
                summary: summary.clone(),
            },
            Self::PermissionDenied {
                call_id,
                tool,
                reason,
            } => W::PermissionDenied {
                call_id: call_id.clone(),
                tool: tool.clone(),
                reason: reason.clone(),
            },
            Self::Compacted {
                before_tokens,
                after_tokens,
                messages,
                usage,
            } => W::Compacted {
                before_tokens: *before_tokens,
                after_tokens: *after_tokens,
                messages: *messages,
                usage: (*usage).into(),
            },
            Self::CompactionFailed {
                before_tokens,
                reason,
            } => W::CompactionFailed {
                before_tokens: *before_tokens,
                reason: reason.clone(),
            },
            Self::TranscriptError { path, error } => W::TranscriptError {
                path: path.display().to_string(),
                error: error.clone(),
            },
            Self::ResumeWarning { message } => W::ResumeWarning {
                message: message.clone(),
            },
            Self::HookStopped { reason } => W::HookStopped {
                reason: reason.clone(),
            },
        }
    }
}

impl BudgetEnded {
    /// This budget as the host protocol's `result` names it.
    #[must_use]
    pub fn to_wire(self) -> wire::BudgetEnded {
        match self {
            Self::Tokens { limit } => wire::BudgetEnded::Tokens { limit },
            Self::CostUsd { limit } => wire::BudgetEnded::CostUsd { limit },
        }
    }
}
