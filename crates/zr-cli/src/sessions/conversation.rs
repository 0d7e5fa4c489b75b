//! `zr sessions show SESSION --agent ID`: one agent's conversation as a
//! person reads it: each message with its time from the session's start,
//! texts whole, tool calls and results bounded (a result's first lines,
//! a call's input on one line), and where its runs ended.

use std::fmt::Write as _;

use zr_types::{ContentBlock, MessageRole, ToolResultContent};

use super::read::Entry;
use super::units::{format_cost, format_ms};
use super::view::{AgentView, SessionView, agent_cost};
use crate::render::plain::one_line;

/// How much of a tool call's input is shown.
const INPUT_CHARS: usize = 200;
/// How many lines of a tool result are shown, and how wide.
const RESULT_LINES: usize = 6;
const RESULT_WIDTH: usize = 160;

/// The conversation of `agent` in `view`.
pub(crate) fn render(view: &SessionView, agent: &AgentView) -> String {
    let origin = view.origin();
    let file = &agent.file;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Agent {} ({}, {}): {}, {} turns, {} tokens ({} cache read, {} cache write), cost {}",
        agent.id,
        file.agent_type.as_deref().unwrap_or("-"),
        file.model.as_deref().unwrap_or("-"),
        view.agent_status(file),
        file.turns,
        file.usage.total(),
        file.usage.cache_read_input_tokens,
        file.usage.cache_creation_input_tokens,
        format_cost(agent_cost(file)),
    );
    if let Some(parent) = &file.parent {
        let _ = writeln!(out, "Started by {parent}");
    }
    let _ = writeln!(out, "Tools: {}", agent.tool_summary());
    if file.inherited > 0 {
        let _ = writeln!(
            out,
            "(a fork: the first {} messages are its parent's and not shown)",
            file.inherited
        );
    }
    // Names of the calls, for the results that answer them.
    let mut names: Vec<(String, String)> = Vec::new();
    for entry in &file.entries {
        out.push('\n');
        match entry {
            Entry::Message { message, at_ms } => {
                let role = match message.role {
                    MessageRole::User => "user",
                    MessageRole::Assistant => "assistant",
                };
                let _ = writeln!(out, "[{}] {role}", stamp(origin, *at_ms));
                for block in &message.content {
                    block_lines(&mut out, block, &mut names);
                }
            }
            Entry::Replaced { messages } => {
                let _ = writeln!(
                    out,
                    "--- the history was rewritten ({messages} messages kept) ---"
                );
            }
            Entry::Finished { status, at_ms } => {
                let _ = writeln!(out, "[{}] run ended: {status}", stamp(origin, *at_ms));
            }
        }
    }
    out
}

fn stamp(origin: u64, at_ms: Option<u64>) -> String {
    at_ms.map_or_else(
        || "-".to_owned(),
        |at| format!("+{}", format_ms(at.saturating_sub(origin))),
    )
}

/// Appends one content block, indented.
fn block_lines(out: &mut String, block: &ContentBlock, names: &mut Vec<(String, String)>) {
    match block {
        ContentBlock::Text { text } => {
            for line in text.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        ContentBlock::ToolUse { id, name, input } => {
            names.push((id.clone(), name.clone()));
            let _ = writeln!(
                out,
                "  -> {name} {}",
                one_line(&input.to_string(), INPUT_CHARS)
            );
        }
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
            ..
        } => {
            let name = names
                .iter()
                .rev()
                .find(|(call, _)| call == tool_use_id)
                .map_or("?", |(_, name)| name.as_str());
            let body = result_text(content);
            let lines: Vec<&str> = body.lines().collect();
            let _ = writeln!(
                out,
                "  <- {name} {}{}",
                if *is_error { "error" } else { "ok" },
                if lines.len() > RESULT_LINES {
                    format!(" ({} lines, the first {RESULT_LINES})", lines.len())
                } else {
                    String::new()
                }
            );
            for line in lines.iter().take(RESULT_LINES) {
                let _ = writeln!(out, "     {}", one_line(line, RESULT_WIDTH));
            }
        }
        ContentBlock::Thinking { .. } => {
            let _ = writeln!(out, "  [thinking block]");
        }
    }
}

/// A tool result's text parts joined; others as `[image]`, `[json]`.
fn result_text(content: &[ToolResultContent]) -> String {
    content
        .iter()
        .map(|part| match part {
            ToolResultContent::Text { text } => text.clone(),
            ToolResultContent::Image { .. } => "[image]".to_owned(),
            ToolResultContent::Json { .. } => "[json]".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
