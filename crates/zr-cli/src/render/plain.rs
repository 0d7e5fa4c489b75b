//! Plain progress lines, for logs and pipes: one line per agent started,
//! tool call, agent ended; no cursor movement, no colour.

use std::io::Write;

use zr_engine::{Event, EventKind, QueryResult};
use zr_types::SessionId;

use super::{AgentTable, Renderer};

/// Writes one line per step of the run to its writer.
#[derive(Debug)]
pub(crate) struct PlainRenderer<W: Write> {
    out: W,
    table: AgentTable,
}

impl<W: Write> PlainRenderer<W> {
    /// Lines go to `out`.
    pub(crate) fn new(out: W) -> Self {
        Self {
            out,
            table: AgentTable::default(),
        }
    }

    fn line(&mut self, agent: &str, text: &str) {
        // A closed pipe is no reason to stop the run.
        let _ = writeln!(self.out, "[{agent}] {text}");
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
                let text = format!("{tool} {}", one_line(&input.to_string(), 100));
                self.line(agent, &text);
            }
            EventKind::ToolFailed { tool, error, .. } => {
                let text = format!("{tool} failed: {}", one_line(error, 200));
                self.line(agent, &text);
            }
            EventKind::PermissionDenied { tool, reason, .. } => {
                let text = format!("{tool} denied: {}", one_line(reason, 200));
                self.line(agent, &text);
            }
            EventKind::SubagentFinished { result } => {
                let text = format!(
                    "finished: {}, {} turns, {} tokens",
                    result.status.as_str(),
                    result.turns,
                    self.table.get(&event.agent).map_or(0, |r| r.tokens)
                );
                self.line(agent, &text);
            }
            EventKind::SubagentProgress { summary } => {
                let text = format!("progress: {}", one_line(summary, 200));
                self.line(agent, &text);
            }
            EventKind::ModelRetry {
                attempt, reason, ..
            } => {
                let text = format!("model retry {attempt}: {}", one_line(reason, 200));
                self.line(agent, &text);
            }
            EventKind::Compacted {
                before_tokens,
                after_tokens,
                ..
            } => {
                let text = format!("compacted {before_tokens} -> {after_tokens} tokens");
                self.line(agent, &text);
            }
            _ => {}
        }
    }

    fn finish(&mut self, session: &SessionId, result: Option<&QueryResult>, error: Option<&str>) {
        if let Some(r) = result {
            let tokens = r.total_usage.input_tokens + r.total_usage.output_tokens;
            let text = format!(
                "finished: {}, {} turns, {tokens} tokens in all",
                r.status.as_str(),
                r.turns
            );
            self.line("root", &text);
        }
        if let Some(e) = error {
            self.line("root", &format!("error: {e}"));
        }
        let _ = writeln!(self.out, "session {session} (zr resume {session})");
        let _ = self.out.flush();
    }
}

/// `text` on one line, cut to `max` characters.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        flat
    } else {
        let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}
