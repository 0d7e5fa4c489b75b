//! `--json`: every event as one JSON object per line (NDJSON), then one
//! `result` line. The format is documented in the crate docs.

use std::io::Write;

use serde_json::{Value, json};
use zr_engine::{Event, EventKind, QueryResult};
use zr_types::{SessionId, Usage};

use super::Renderer;

/// Writes one JSON object per event.
#[derive(Debug)]
pub(crate) struct JsonRenderer<W: Write> {
    out: W,
}

impl<W: Write> JsonRenderer<W> {
    /// Lines go to `out`.
    pub(crate) fn new(out: W) -> Self {
        Self { out }
    }

    fn write(&mut self, value: &Value) {
        let _ = writeln!(self.out, "{value}");
        let _ = self.out.flush();
    }
}

fn usage(u: &Usage) -> Value {
    json!({
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
    })
}

/// The event's own fields: `type` and what it carries.
pub(crate) fn kind(kind: &EventKind) -> Value {
    match kind {
        EventKind::TextDelta { text } => json!({"type": "text_delta", "text": text}),
        EventKind::ThinkingDelta { text } => json!({"type": "thinking_delta", "text": text}),
        EventKind::ModelRetry {
            attempt,
            delay,
            reason,
        } => json!({"type": "model_retry", "attempt": attempt,
            "delay_ms": delay.as_millis(), "reason": reason}),
        EventKind::TurnFinished {
            turn,
            stop_reason,
            usage: u,
        } => json!({"type": "turn_finished", "turn": turn,
            "stop_reason": stop_reason, "usage": usage(u)}),
        EventKind::Usage { agent, total } => {
            json!({"type": "usage", "agent_usage": usage(agent), "total_usage": usage(total)})
        }
        EventKind::ToolCallStarted {
            call_id,
            tool,
            input,
        } => json!({"type": "tool_call_started", "call_id": call_id, "tool": tool, "input": input}),
        EventKind::ToolCallFinished {
            call_id,
            tool,
            is_error,
            summary,
            duration,
        } => json!({"type": "tool_call_finished", "call_id": call_id, "tool": tool,
            "is_error": is_error, "summary": summary, "duration_ms": duration.as_millis()}),
        EventKind::ToolFailed {
            call_id,
            tool,
            error,
        } => json!({"type": "tool_failed", "call_id": call_id, "tool": tool, "error": error}),
        EventKind::SubagentStarted {
            parent,
            description,
            index,
            background,
        } => json!({"type": "subagent_started", "parent": parent.as_str(),
            "description": description, "index": index, "background": background}),
        EventKind::SubagentRunning => json!({"type": "subagent_running"}),
        EventKind::SubagentFinished { result } => {
            json!({"type": "subagent_finished", "result": result})
        }
        EventKind::SubagentProgress { summary } => {
            json!({"type": "subagent_progress", "summary": summary})
        }
        EventKind::PermissionDenied {
            call_id,
            tool,
            reason,
        } => {
            json!({"type": "permission_denied", "call_id": call_id, "tool": tool, "reason": reason})
        }
        EventKind::Compacted {
            before_tokens,
            after_tokens,
            messages,
            usage: u,
        } => json!({"type": "compacted", "before_tokens": before_tokens,
            "after_tokens": after_tokens, "messages": messages, "usage": usage(u)}),
        EventKind::CompactionFailed {
            before_tokens,
            reason,
        } => json!({"type": "compaction_failed", "before_tokens": before_tokens, "reason": reason}),
        EventKind::TranscriptError { path, error } => {
            json!({"type": "transcript_error", "path": path, "error": error})
        }
        EventKind::ResumeWarning { message } => {
            json!({"type": "resume_warning", "message": message})
        }
        other => json!({"type": "other", "debug": format!("{other:?}")}),
    }
}

impl<W: Write + Send> Renderer for JsonRenderer<W> {
    fn event(&mut self, event: &Event) {
        let mut value = json!({
            "at_ms": event.at.as_millis(),
            "agent": event.agent.as_str(),
            "agent_type": &*event.agent_type,
        });
        if let (Value::Object(head), Value::Object(body)) = (&mut value, kind(&event.kind)) {
            head.extend(body);
        }
        self.write(&value);
    }

    fn finish(&mut self, session: &SessionId, result: Option<&QueryResult>, error: Option<&str>) {
        let value = match result {
            Some(r) => json!({
                "type": "result",
                "session": session.as_str(),
                "status": r.status.as_str(),
                "output": r.output,
                "turns": r.turns,
                "usage": usage(&r.usage),
                "total_usage": usage(&r.total_usage),
                "duration_ms": r.duration.as_millis(),
            }),
            None => json!({
                "type": "result",
                "session": session.as_str(),
                "status": "error",
                "error": error.unwrap_or("interrupted"),
            }),
        };
        self.write(&value);
    }

    fn prints_answer(&self) -> bool {
        false
    }
}
