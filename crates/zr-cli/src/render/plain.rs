//! Plain progress lines, for logs and pipes: one line per meaningful step
//! (a subagent started or ended, a tool called, a tool that failed or was
//! refused, a retry, a compaction), each prefixed with the agent's id; no
//! cursor movement, no colour, no timings except in the final summary.
//!
//! ```text
//! [root] MultiTask (2 tasks): resolver steps, crate layout
//! [root.0001-explore] started (explore): resolver steps
//! [root.0001-explore] Grep R[1-8] glob=*.rs path=../../crates/zr-resolve/src
//! [root.0001-explore] finished: completed, 2 turns, 1507 tokens
//! ...
//! [root] finished: completed, 3 turns; 3 subagents, 6705 tokens, 0.4 s
//! session s-001a22d178c73-b32470d3 (continue it with: zr resume s-001a22d178c73-b32470d3)
//! ```
//!
//! Results of tools that worked are not shown (they are in `--json` and
//! in the transcripts); an error result is, once per call.

use std::collections::BTreeSet;
use std::io::Write;

use serde_json::Value;
use zr_engine::{Event, EventKind, QueryResult};
use zr_types::{BuiltinName, SessionId};

use super::{AgentTable, Renderer};

/// The longest progress line, in characters (before the agent's id).
const MAX_LINE: usize = 160;
/// The longest value of one input field shown in a tool line.
const MAX_VALUE: usize = 60;

/// Writes one line per step of the run to its writer.
#[derive(Debug)]
pub(crate) struct PlainRenderer<W: Write> {
    out: W,
    table: AgentTable,
    /// Calls whose failure or denial already has its line (their
    /// `tool_call_finished` with an error result is not shown again).
    reported: BTreeSet<String>,
}

impl<W: Write> PlainRenderer<W> {
    /// Lines go to `out`.
    pub(crate) fn new(out: W) -> Self {
        Self {
            out,
            table: AgentTable::default(),
            reported: BTreeSet::new(),
        }
    }

    fn line(&mut self, agent: &str, text: &str) {
        // A closed pipe is no reason to stop the run.
        let _ = writeln!(self.out, "[{agent}] {}", one_line(text, MAX_LINE));
        let _ = self.out.flush();
    }
}

impl<W: Write + Send> Renderer for PlainRenderer<W> {
    fn event(&mut self, event: &Event) {
        self.table.apply(event);
        let agent = event.agent.as_str();
        match &event.kind {
            EventKind::SubagentStarted {
                description,
                background,
                ..
            } => {
                let bg = if *background {
                    " in the background"
                } else {
                    ""
                };
                let text = format!("started{bg} ({}): {description}", event.agent_type);
                self.line(agent, &text);
            }
            EventKind::ToolCallStarted { tool, input, .. } => {
                let text = describe_call(tool, input);
                self.line(agent, &text);
            }
            EventKind::ToolFailed {
                call_id,
                tool,
                error,
            } => {
                self.reported.insert(call_id.clone());
                self.line(agent, &format!("{tool} failed: {error}"));
            }
            EventKind::PermissionDenied {
                call_id,
                tool,
                reason,
            } => {
                self.reported.insert(call_id.clone());
                self.line(agent, &format!("{tool} denied: {reason}"));
            }
            // An error result, unless its failure or denial has a line.
            EventKind::ToolCallFinished {
                call_id,
                tool,
                is_error: true,
                summary,
                ..
            } if !self.reported.remove(call_id) => {
                self.line(agent, &format!("{tool} error: {summary}"));
            }
            EventKind::SubagentFinished { result } => {
                let mut text = format!(
                    "finished: {}, {}, {} tokens",
                    result.status.as_str(),
                    turns(result.turns),
                    self.table.get(&event.agent).map_or(0, |r| r.tokens)
                );
                if let Some(error) = &result.error {
                    text.push_str(": ");
                    text.push_str(error);
                }
                self.line(agent, &text);
            }
            EventKind::SubagentProgress { summary } => {
                self.line(agent, &format!("progress: {summary}"));
            }
            EventKind::ModelRetry {
                attempt, reason, ..
            } => {
                self.line(agent, &format!("model retry {attempt}: {reason}"));
            }
            EventKind::Compacted {
                before_tokens,
                after_tokens,
                ..
            } => {
                let text = format!("compacted {before_tokens} -> {after_tokens} tokens");
                self.line(agent, &text);
            }
            EventKind::CompactionFailed { reason, .. } => {
                self.line(agent, &format!("compaction failed: {reason}"));
            }
            EventKind::TranscriptError { path, error } => {
                let text = format!("transcript {} not written: {error}", path.display());
                self.line(agent, &text);
            }
            EventKind::ResumeWarning { message } => {
                self.line(agent, &format!("warning: {message}"));
            }
            EventKind::HookStopped { reason } => {
                self.line(agent, reason);
            }
            _ => {}
        }
    }

    fn finish(&mut self, session: &SessionId, result: Option<&QueryResult>, error: Option<&str>) {
        if let Some(r) = result {
            // The query's total, or more when background agents worked on
            // after the answer.
            let tokens = r.total_usage.total().max(self.table.tokens());
            let started = self.table.rows().filter(|(id, _)| *id != "root").count();
            let subagents = match started {
                1 => "1 subagent".to_owned(),
                n => format!("{n} subagents"),
            };
            let text = format!(
                "finished: {}, {}; {subagents}, {tokens} tokens, {:.1} s",
                r.status.as_str(),
                turns(r.turns),
                r.duration.as_secs_f64()
            );
            self.line("root", &text);
        }
        if let Some(e) = error {
            self.line("root", &format!("error: {e}"));
        }
        if error != Some(super::INTERRUPTED) {
            let _ = writeln!(
                self.out,
                "session {session} (continue it with: zr resume {session})"
            );
        }
        let _ = self.out.flush();
    }
}

/// `1 turn`, `2 turns`.
fn turns(n: u32) -> String {
    if n == 1 {
        "1 turn".to_owned()
    } else {
        format!("{n} turns")
    }
}

/// A tool call in a few words: `Task`, `MultiTask` by their tasks, other
/// tools by their main argument, then the other fields as `key=value`.
pub(crate) fn describe_call(tool: &str, input: &Value) -> String {
    let Value::Object(fields) = input else {
        return format!("{tool} {}", short(input));
    };
    let text = |key: &str| fields.get(key).and_then(Value::as_str).unwrap_or("");
    match tool.parse() {
        Ok(BuiltinName::Task) => {
            let ty = fields
                .get("subagent_type")
                .and_then(Value::as_str)
                // No type means fork mode (DESIGN section 5).
                .unwrap_or("fork");
            let bg = if fields.get("run_in_background") == Some(&Value::Bool(true)) {
                ", in the background"
            } else {
                ""
            };
            return format!("Task ({ty}{bg}): {}", text("description"));
        }
        Ok(BuiltinName::MultiTask) => {
            if let Some(Value::Array(tasks)) = fields.get("tasks") {
                let names: Vec<&str> = tasks
                    .iter()
                    .map(|t| t.get("description").and_then(Value::as_str).unwrap_or("?"))
                    .collect();
                let count = match tasks.len() {
                    1 => "1 task".to_owned(),
                    n => format!("{n} tasks"),
                };
                return format!("MultiTask ({count}): {}", names.join(", "));
            }
        }
        _ => {}
    }
    let main = main_argument(tool).filter(|key| fields.get(*key).is_some_and(Value::is_string));
    let mut parts = vec![tool.to_owned()];
    if let Some(key) = main {
        parts.push(one_line(text(key), MAX_VALUE));
    }
    for (key, value) in fields {
        if Some(key.as_str()) != main {
            parts.push(format!("{key}={}", short(value)));
        }
    }
    parts.join(" ")
}

/// The field that says the most about a call of `tool`.
fn main_argument(tool: &str) -> Option<&'static str> {
    use BuiltinName as B;
    let Ok(builtin) = tool.parse() else {
        return tool.starts_with("mcp__").then_some("path");
    };
    Some(match builtin {
        B::Read | B::Write | B::Edit => "file_path",
        B::Grep | B::Glob => "pattern",
        B::Bash => "command",
        B::FindTool | B::WebSearch => "query",
        B::WebFetch => "url",
        B::Skill => "skill",
        _ => return None,
    })
}

/// A value on one line: a plain word as it is, other text quoted, the rest
/// as JSON; cut to [`MAX_VALUE`] characters.
fn short(value: &Value) -> String {
    let text = match value {
        Value::String(s)
            if !s.is_empty() && !s.contains(char::is_whitespace) && !s.contains('"') =>
        {
            s.clone()
        }
        other => other.to_string(),
    };
    one_line(&text, MAX_VALUE)
}

/// `text` with each control character (newline, tab, escape) as a
/// space.
pub(crate) fn flat(text: &str) -> String {
    without_controls(text, |_| false)
}

/// `text` for a terminal: each control character but newline and tab (an
/// escape that would start a clipboard write, a title change, a cursor
/// move) as a space; the lines stay.
pub(crate) fn printable(text: &str) -> String {
    without_controls(text, |c| c == '\n' || c == '\t')
}

/// `text` with each control character that `keep` refuses as a space.
fn without_controls(text: &str, keep: fn(char) -> bool) -> String {
    text.chars()
        .map(|c| if c.is_control() && !keep(c) { ' ' } else { c })
        .collect()
}

/// `text` on one line, cut to `max` characters.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat = flat(text);
    if flat.chars().count() <= max {
        flat
    } else {
        let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

#[cfg(test)]
mod tests;
