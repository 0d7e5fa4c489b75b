//! The engine's events and results as protocol messages (the
//! `zr run --json` lines, typed).

use std::time::Duration;

use zr_engine::{EventKind as E, QueryResult};
use zr_protocol::{Event, EventKind, QueryEnd};
use zr_types::SessionId;

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `event` as the protocol writes it; `None` for a kind this version of
/// the protocol does not carry.
pub(crate) fn event(event: &zr_engine::Event) -> Option<Event> {
    let kind = match &event.kind {
        E::TextDelta { text } => EventKind::TextDelta { text: text.clone() },
        E::ThinkingDelta { text } => EventKind::ThinkingDelta { text: text.clone() },
        E::ModelRetry {
            attempt,
            delay,
            reason,
        } => EventKind::ModelRetry {
            attempt: *attempt,
            delay_ms: millis(*delay),
            reason: reason.clone(),
        },
        E::TurnFinished {
            turn,
            stop_reason,
            usage,
        } => EventKind::TurnFinished {
            turn: *turn,
            stop_reason: stop_reason.as_str().to_owned(),
            usage: (*usage).into(),
        },
        E::Usage { agent, total } => EventKind::Usage {
            agent_usage: (*agent).into(),
            total_usage: (*total).into(),
        },
        E::ToolCallStarted {
            call_id,
            tool,
            input,
        } => EventKind::ToolCallStarted {
            call_id: call_id.clone(),
            tool: tool.clone(),
            input: input.clone(),
        },
        E::ToolCallFinished {
            call_id,
            tool,
            is_error,
            summary,
            duration,
        } => EventKind::ToolCallFinished {
            call_id: call_id.clone(),
            tool: tool.clone(),
            is_error: *is_error,
            summary: summary.clone(),
            duration_ms: millis(*duration),
        },
        E::ToolFailed {
            call_id,
            tool,
            error,
        } => EventKind::ToolFailed {
            call_id: call_id.clone(),
            tool: tool.clone(),
            error: error.clone(),
        },
        E::SubagentStarted {
            parent,
            description,
            index,
            background,
        } => EventKind::SubagentStarted {
            parent: parent.to_string(),
            description: description.clone(),
            index: *index,
            background: *background,
        },
        E::SubagentRunning => EventKind::SubagentRunning,
        E::SubagentFinished { result } => EventKind::SubagentFinished {
            result: serde_json::to_value(result).unwrap_or_default(),
        },
        E::SubagentProgress { summary } => EventKind::SubagentProgress {
            summary: summary.clone(),
        },
        E::PermissionDenied {
            call_id,
            tool,
            reason,
        } => EventKind::PermissionDenied {
            call_id: call_id.clone(),
            tool: tool.clone(),
            reason: reason.clone(),
        },
        E::Compacted {
            before_tokens,
            after_tokens,
            messages,
            usage,
        } => EventKind::Compacted {
            before_tokens: *before_tokens,
            after_tokens: *after_tokens,
            messages: *messages,
            usage: (*usage).into(),
        },
        E::CompactionFailed {
            before_tokens,
            reason,
        } => EventKind::CompactionFailed {
            before_tokens: *before_tokens,
            reason: reason.clone(),
        },
        E::TranscriptError { path, error } => EventKind::TranscriptError {
            path: path.display().to_string(),
            error: error.clone(),
        },
        E::ResumeWarning { message } => EventKind::ResumeWarning {
            message: message.clone(),
        },
        _ => return None,
    };
    Some(Event {
        at_ms: millis(event.at),
        agent: event.agent.to_string(),
        agent_type: event.agent_type.to_string(),
        kind,
    })
}

/// The `result` of a query that ended.
pub(crate) fn ended(session: &SessionId, result: &QueryResult) -> QueryEnd {
    QueryEnd {
        session: session.to_string(),
        status: result.status.as_str().to_owned(),
        output: result.output.clone(),
        turns: result.turns,
        usage: result.usage.into(),
        total_usage: result.total_usage.into(),
        duration_ms: millis(result.duration),
        error: None,
    }
}

/// The `result` of a query that failed or was interrupted.
pub(crate) fn failed(session: &SessionId, status: &str, error: String) -> QueryEnd {
    QueryEnd {
        session: session.to_string(),
        status: status.to_owned(),
        output: String::new(),
        turns: 0,
        usage: zr_protocol::Usage::default(),
        total_usage: zr_protocol::Usage::default(),
        duration_ms: 0,
        error: Some(error),
    }
}
