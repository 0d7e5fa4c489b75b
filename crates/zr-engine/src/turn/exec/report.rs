//! What the host is told of a call: [`EventKind::ToolCallStarted`] with
//! the input the tool gets, and [`EventKind::ToolCallFinished`] with the
//! result the model gets, which ends as the call's `tool_result` block.

use std::time::Instant;

use zr_types::{ContentBlock, ToolCall, ToolOutput, ToolResultContent};

use crate::event::{EventKind, EventSink};
use crate::meta::AgentMeta;

/// Tells the host that `call` of `agent` starts.
pub(super) fn started(sink: &EventSink, agent: &AgentMeta, call: &ToolCall) {
    sink.emit_with(agent, || EventKind::ToolCallStarted {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        input: call.input.clone(),
    });
}

/// Tells the host that `call` of `agent`, started at `start`, ended with
/// `output`; the block the model gets.
pub(super) fn finished(
    sink: &EventSink,
    agent: &AgentMeta,
    call: &ToolCall,
    output: ToolOutput,
    start: Instant,
) -> ContentBlock {
    sink.emit_with(agent, || EventKind::ToolCallFinished {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        is_error: output.is_error,
        summary: summary(&output),
        duration: start.elapsed(),
    });
    ContentBlock::ToolResult {
        tool_use_id: call.id.clone(),
        content: output.content,
        is_error: output.is_error,
        display: output.display,
    }
}

/// A call answered without running (a budget is exhausted, the turn
/// limit is reached): started and finished at once.
pub(crate) fn refused(
    sink: &EventSink,
    agent: &AgentMeta,
    call: &ToolCall,
    why: &str,
) -> ContentBlock {
    started(sink, agent, call);
    finished(sink, agent, call, ToolOutput::error(why), Instant::now())
}

/// A result's text for people: its `display`, else its content.
fn summary(output: &ToolOutput) -> String {
    output.display.clone().unwrap_or_else(|| {
        output
            .content
            .iter()
            .map(|c| match c {
                ToolResultContent::Text { text } => text.clone(),
                ToolResultContent::Image { .. } => "[image]".to_owned(),
                ToolResultContent::Json { value } => value.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}
