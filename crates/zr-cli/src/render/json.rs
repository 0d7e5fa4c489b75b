//! `--json`: every event of the run as one JSON object per line (NDJSON)
//! on standard output, then one `result` line. Nothing else goes to
//! standard output; warnings and logs go to standard error.
//!
//! # The format
//!
//! Each line is one object. Its keys come in this order: `type`, then (for
//! events) `at_ms`, `agent`, `agent_type`, then the fields of the type.
//! Objects nested inside a field (`input`, `usage`, `result`) have their
//! keys sorted.
//!
//! - `at_ms`: milliseconds since the run started.
//! - `agent`: the agent's id, its path in the tree: `root`,
//!   `root.0001-explore`, `root.0001-explore.0001-worker`.
//! - `agent_type`: `root`, `fork` or the agent type's name (`zr agents`).
//!
//! | `type` | fields |
//! | --- | --- |
//! | `text_delta` | `text`: a piece of the model's answer |
//! | `thinking_delta` | `text`: a piece of the model's reasoning |
//! | `model_retry` | `attempt`, `delay_ms`, `reason` (drop the agent's deltas since its last `turn_finished`) |
//! | `turn_finished` | `turn` (from 1), `stop_reason`, `usage` |
//! | `usage` | `agent_usage` (this agent so far), `total_usage` (the whole run so far) |
//! | `tool_call_started` | `call_id`, `tool`, `input` (as the model wrote it) |
//! | `tool_call_finished` | `call_id`, `tool`, `is_error`, `summary` (the result's text for people), `duration_ms` |
//! | `tool_failed` | `call_id`, `tool`, `error` (the tool could not be carried out) |
//! | `subagent_started` | `parent`, `description`, `index` (in its call's task list), `background`; `agent` is the new subagent |
//! | `subagent_running` | (none): a queued subagent got its slot |
//! | `subagent_finished` | `result`: `status`, `output`, `turns`, `usage`, `duration_ms`, `error`, ... as its parent's model gets it |
//! | `subagent_progress` | `summary`: what a background subagent is doing |
//! | `permission_denied` | `call_id`, `tool`, `reason` |
//! | `compacted` | `before_tokens`, `after_tokens`, `messages`, `usage` |
//! | `compaction_failed` | `before_tokens`, `reason` |
//! | `transcript_error` | `path`, `error` |
//! | `resume_warning` | `message` |
//!
//! A `usage` object has `input_tokens`, `output_tokens`,
//! `cache_read_input_tokens` and `cache_creation_input_tokens`.
//!
//! The last line is always `type: "result"`, with `session` (for
//! `zr resume`) and `status` (`completed`, `max_turns`, `denied`, ...,
//! or `error` when the run failed or was interrupted). A run that ended
//! has `output` (the answer), `turns`, `usage` (the root's),
//! `total_usage` (every agent's) and `duration_ms`; a run that failed has
//! `error` instead:
//!
//! ```text
//! {"type":"tool_call_started","at_ms":3,"agent":"root.0001-explore","agent_type":"explore","call_id":"c1","tool":"Glob","input":{"pattern":"*.rs"}}
//! {"type":"result","session":"s-001a22d178c73-b32470d3","status":"completed","output":"All done.","turns":2,"usage":{...},"total_usage":{...},"duration_ms":41}
//! ```
//!
//! A durable turn (`zr run --durable`, `zr resume` of a durable session)
//! is followed through its journal, not the engine's events: its lines
//! are `durable_step` (`name`, `status`: `ok` or `failed`),
//! `durable_call` (`target`) and `durable_send` (`target`: a background
//! agent sent one way; its end is a `durable_step` named
//! `background root.NNNN-type`), each with `type`, `at_ms` and `agent`
//! first, then the same `result` line with `output`, `turns` and the
//! turn's `invocation` (no usage: the journal does not hold it).
//!
//! Keys may be added to any line and new `type`s may appear; readers
//! should ignore what they do not know.

use std::io::Write;

use serde_json::{Value, json};
use zr_engine::{Event, EventKind, QueryResult};
use zr_types::{SessionId, Usage};

use super::Renderer;

/// The fields of one line, in the order they are written.
type Fields = Vec<(&'static str, Value)>;

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

    fn write(&mut self, fields: &[(&str, Value)]) {
        // A closed pipe is no reason to stop the run.
        let _ = writeln!(self.out, "{}", line(fields));
        let _ = self.out.flush();
    }
}

/// One JSON object with its keys in the order of `fields` (serde_json's
/// maps sort their keys).
pub(crate) fn line(fields: &[(&str, Value)]) -> String {
    let mut text = String::from("{");
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&Value::from(*key).to_string());
        text.push(':');
        text.push_str(&value.to_string());
    }
    text.push('}');
    text
}

/// A usage object, as `zr sessions --format json` writes it too.
fn usage(u: &Usage) -> Value {
    json!(u)
}

fn millis(d: std::time::Duration) -> Value {
    Value::from(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The event's `type` and the fields it carries, in order.
pub(crate) fn kind(kind: &EventKind) -> (&'static str, Fields) {
    match kind {
        EventKind::TextDelta { text } => ("text_delta", vec![("text", json!(text))]),
        EventKind::ThinkingDelta { text } => ("thinking_delta", vec![("text", json!(text))]),
        EventKind::ModelRetry {
            attempt,
            delay,
            reason,
        } => (
            "model_retry",
            vec![
                ("attempt", json!(attempt)),
                ("delay_ms", millis(*delay)),
                ("reason", json!(reason)),
            ],
        ),
        EventKind::TurnFinished {
            turn,
            stop_reason,
            usage: u,
        } => (
            "turn_finished",
            vec![
                ("turn", json!(turn)),
                ("stop_reason", json!(stop_reason)),
                ("usage", usage(u)),
            ],
        ),
        EventKind::Usage { agent, total } => (
            "usage",
            vec![("agent_usage", usage(agent)), ("total_usage", usage(total))],
        ),
        EventKind::ToolCallStarted {
            call_id,
            tool,
            input,
        } => (
            "tool_call_started",
            vec![
                ("call_id", json!(call_id)),
                ("tool", json!(tool)),
                ("input", input.clone()),
            ],
        ),
        EventKind::ToolCallFinished {
            call_id,
            tool,
            is_error,
            summary,
            duration,
        } => (
            "tool_call_finished",
            vec![
                ("call_id", json!(call_id)),
                ("tool", json!(tool)),
                ("is_error", json!(is_error)),
                ("summary", json!(summary)),
                ("duration_ms", millis(*duration)),
            ],
        ),
        EventKind::ToolFailed {
            call_id,
            tool,
            error,
        } => (
            "tool_failed",
            vec![
                ("call_id", json!(call_id)),
                ("tool", json!(tool)),
                ("error", json!(error)),
            ],
        ),
        EventKind::SubagentStarted {
            parent,
            description,
            index,
            background,
        } => (
            "subagent_started",
            vec![
                ("parent", json!(parent.as_str())),
                ("description", json!(description)),
                ("index", json!(index)),
                ("background", json!(background)),
            ],
        ),
        EventKind::SubagentRunning => ("subagent_running", Vec::new()),
        EventKind::SubagentFinished { result } => {
            ("subagent_finished", vec![("result", json!(result))])
        }
        EventKind::SubagentProgress { summary } => {
            ("subagent_progress", vec![("summary", json!(summary))])
        }
        EventKind::PermissionDenied {
            call_id,
            tool,
            reason,
        } => (
            "permission_denied",
            vec![
                ("call_id", json!(call_id)),
                ("tool", json!(tool)),
                ("reason", json!(reason)),
            ],
        ),
        EventKind::Compacted {
            before_tokens,
            after_tokens,
            messages,
            usage: u,
        } => (
            "compacted",
            vec![
                ("before_tokens", json!(before_tokens)),
                ("after_tokens", json!(after_tokens)),
                ("messages", json!(messages)),
                ("usage", usage(u)),
            ],
        ),
        EventKind::CompactionFailed {
            before_tokens,
            reason,
        } => (
            "compaction_failed",
            vec![
                ("before_tokens", json!(before_tokens)),
                ("reason", json!(reason)),
            ],
        ),
        EventKind::TranscriptError { path, error } => (
            "transcript_error",
            vec![("path", json!(path)), ("error", json!(error))],
        ),
        EventKind::ResumeWarning { message } => {
            ("resume_warning", vec![("message", json!(message))])
        }
        EventKind::HookStopped { reason } => ("hook_stopped", vec![("reason", json!(reason))]),
        other => ("other", vec![("debug", json!(format!("{other:?}")))]),
    }
}

impl<W: Write + Send> Renderer for JsonRenderer<W> {
    fn event(&mut self, event: &Event) {
        let (ty, body) = kind(&event.kind);
        let mut fields: Fields = vec![
            ("type", json!(ty)),
            ("at_ms", millis(event.at)),
            ("agent", json!(event.agent.as_str())),
            ("agent_type", json!(&*event.agent_type)),
        ];
        fields.extend(body);
        self.write(&fields);
    }

    fn finish(&mut self, session: &SessionId, result: Option<&QueryResult>, error: Option<&str>) {
        let fields: Fields = match result {
            Some(r) => vec![
                ("type", json!("result")),
                ("session", json!(session.as_str())),
                ("status", json!(r.status.as_str())),
                ("output", json!(r.output)),
                ("turns", json!(r.turns)),
                ("usage", usage(&r.usage)),
                ("total_usage", usage(&r.total_usage)),
                ("duration_ms", millis(r.duration)),
            ],
            None => vec![
                ("type", json!("result")),
                ("session", json!(session.as_str())),
                ("status", json!("error")),
                ("error", json!(error.unwrap_or("interrupted"))),
            ],
        };
        self.write(&fields);
    }

    fn prints_answer(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests;
