//! The engine's spans in the OpenTelemetry GenAI conventions: `tracing`
//! spans of target [`TARGET`] whose names and fields are the conventions'
//! (`invoke_agent`, `chat`, `execute_tool`; `gen_ai.*` attributes), so
//! that a `tracing` layer exporting them (zr-telemetry's) shows the agent
//! tree as OpenTelemetry tools expect. The engine knows nothing of
//! OpenTelemetry itself.
//!
//! A span's name is its operation; the exporter completes it as the
//! conventions name spans, `{operation} {target}` (`invoke_agent worker`
//! from `gen_ai.agent.name`, `chat {gen_ai.request.model}`,
//! `execute_tool {gen_ai.tool.name}`), so that no span formats a name it
//! may never need. `otel.kind` and `otel.status_*` fields give the span's
//! kind and status (as `tracing-opentelemetry` reads them).
//!
//! - one `session` span per [`Agent`](crate::Agent) (a root: one trace per
//!   session), holding every query's root `invoke_agent`;
//! - `invoke_agent {type}` per agent; a subagent's (foreground, fork,
//!   background, resumed) is a child of the `execute_tool` span of the
//!   `Task` or `MultiTask` call that started it, and ends with the task's
//!   status (`zr.task.status`: `completed`, `timed_out`,
//!   `budget_exhausted`, ...), its turns, usage and cost;
//! - `chat {model}` per model request (turns and side requests), with the
//!   response's model, finish reason and usage, retries as `retry` events;
//! - `execute_tool {tool}` per call, with its status (`zr.tool.status`).
//!
//! Message content (`gen_ai.input.messages`, `gen_ai.output.messages`,
//! `gen_ai.system_instructions`, tool arguments and results) is recorded
//! only while target [`CONTENT_TARGET`] is enabled at `INFO`: a layer that
//! wants it enables that target.
//!
//! Spans are at `INFO`, so with no subscriber interested in [`TARGET`] a
//! span costs a callsite check, and no field is formatted.

use serde_json::Value;
use tracing::Span;
use tracing::field::Empty;
use zr_types::{ContentBlock, Message, SessionId, StopReason, Usage};

use crate::meta::AgentMeta;
use crate::outcome::{TaskResult, TaskStatus};

/// The target of every span this module makes.
pub const TARGET: &str = "gen_ai";

/// The target whose `INFO` level, when enabled, makes the spans carry
/// message content.
pub const CONTENT_TARGET: &str = "gen_ai_content";

/// Whether message content goes on the spans.
fn content() -> bool {
    tracing::enabled!(target: CONTENT_TARGET, tracing::Level::INFO)
}

/// The session's span: a root, one per [`Agent`](crate::Agent).
pub(crate) fn session_span(id: &SessionId) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: None,
        "session",
        gen_ai.conversation.id = %id,
    )
}

/// An agent's `invoke_agent` span, a child of `parent` (the session's span
/// for a root, the current span, the `execute_tool` of its call, for a
/// subagent).
pub(crate) fn agent_span(
    parent: &Span,
    meta: &AgentMeta,
    session: &SessionId,
    provider: &str,
    description: Option<&str>,
) -> Span {
    tracing::info_span!(
        target: TARGET,
        parent: parent,
        "invoke_agent",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.provider.name = provider,
        gen_ai.agent.name = %meta.agent_type,
        gen_ai.agent.id = %meta.id,
        gen_ai.agent.description = description,
        gen_ai.conversation.id = %session,
        gen_ai.request.model = %meta.model,
        zr.agent.parent = meta.parent.as_ref().map(tracing::field::display),
        zr.agent.background = meta.background,
        zr.task.status = Empty,
        zr.task.turns = Empty,
        zr.task.cost_usd = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        error.type = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    )
}

/// Records a subagent's result on its `invoke_agent` span.
pub(crate) fn record_task(span: &Span, result: &TaskResult) {
    record_end_with_cost(
        span,
        result.status,
        result.turns,
        result.usage,
        result.cost_usd,
    );
    if is_error(result.status) {
        fail(span, result.status.as_str(), result.error.as_deref());
    }
}

/// Records how an agent's run ended on its `invoke_agent` span.
pub(crate) fn record_end(span: &Span, status: TaskStatus, turns: u32, usage: Usage) {
    record_end_with_cost(span, status, turns, usage, None);
}

/// The end of a run, in one record (each `record` is a call through the
/// subscriber to every layer).
fn record_end_with_cost(
    span: &Span,
    status: TaskStatus,
    turns: u32,
    usage: Usage,
    cost: Option<f64>,
) {
    tracing::record_all!(
        span,
        zr.task.status = status.as_str(),
        zr.task.turns = turns,
        zr.task.cost_usd = cost,
        gen_ai.usage.input_tokens = usage.input_tokens,
        gen_ai.usage.output_tokens = usage.output_tokens,
        gen_ai.usage.cache_read.input_tokens = usage.cache_read_input_tokens,
        gen_ai.usage.cache_creation.input_tokens = usage.cache_creation_input_tokens,
    );
}

/// A root whose run failed (a provider error, no answer).
pub(crate) fn record_failure(span: &Span, kind: &str, message: &str) {
    tracing::record_all!(
        span,
        zr.task.status = TaskStatus::Failed.as_str(),
        error.type = kind,
        otel.status_code = "ERROR",
        otel.status_description = message,
    );
}

/// The statuses that are errors of the agent's operation: it did not end
/// on its own terms.
fn is_error(status: TaskStatus) -> bool {
    matches!(
        status,
        TaskStatus::Failed | TaskStatus::TimedOut | TaskStatus::Cancelled | TaskStatus::Denied
    )
}

fn fail(span: &Span, kind: &str, message: Option<&str>) {
    tracing::record_all!(
        span,
        error.type = kind,
        otel.status_code = "ERROR",
        otel.status_description = message,
    );
}

/// What a `chat` span is opened with.
#[derive(Debug)]
pub(crate) struct ChatStart<'a> {
    pub(crate) provider: &'a str,
    pub(crate) model: &'a str,
    pub(crate) max_tokens: u32,
    pub(crate) turn: u32,
    pub(crate) system: &'a str,
    pub(crate) messages: &'a [Message],
}

/// A model request's `chat` span, a child of the current span (the
/// agent's).
pub(crate) fn chat_span(start: &ChatStart<'_>) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        "chat",
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = start.provider,
        gen_ai.request.model = start.model,
        gen_ai.request.max_tokens = start.max_tokens,
        zr.turn = start.turn,
        gen_ai.response.model = Empty,
        gen_ai.response.id = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.system_instructions = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        error.type = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    );
    if !span.is_disabled() && content() {
        span.record("gen_ai.system_instructions", start.system);
        span.record(
            "gen_ai.input.messages",
            serde_json::to_string(start.messages).unwrap_or_default(),
        );
    }
    span
}

/// The model and id the API named for the response.
pub(crate) fn record_response_metadata(span: &Span, model: &str, id: Option<&str>) {
    tracing::record_all!(span, gen_ai.response.model = model, gen_ai.response.id = id);
}

/// A finished response: finish reason, usage, and (with content) what the
/// model wrote. `gen_ai.response.finish_reasons` is written as a list of
/// one, comma-separated; zr-telemetry turns it into the string array the
/// conventions name.
pub(crate) fn record_response(
    span: &Span,
    stop: StopReason,
    usage: Usage,
    content_blocks: &[ContentBlock],
) {
    tracing::record_all!(
        span,
        gen_ai.response.finish_reasons = stop.as_str(),
        gen_ai.usage.input_tokens = usage.input_tokens,
        gen_ai.usage.output_tokens = usage.output_tokens,
        gen_ai.usage.cache_read.input_tokens = usage.cache_read_input_tokens,
        gen_ai.usage.cache_creation.input_tokens = usage.cache_creation_input_tokens,
    );
    if !span.is_disabled() && content() {
        let output = Value::Array(
            content_blocks
                .iter()
                .filter_map(|b| serde_json::to_value(b).ok())
                .collect(),
        );
        span.record("gen_ai.output.messages", output.to_string());
    }
}

/// A provider retry, as an event of the current `chat` span.
pub(crate) fn retry_event(attempt: u32, delay_ms: u64, reason: &str) {
    tracing::event!(
        target: TARGET,
        tracing::Level::INFO,
        zr.retry.attempt = attempt,
        zr.retry.delay_ms = delay_ms,
        zr.retry.reason = reason,
        message = "retry",
    );
}

/// A request that failed for good.
pub(crate) fn record_request_error(span: &Span, kind: &str, message: &str) {
    fail(span, kind, Some(message));
}

/// A tool call's `execute_tool` span, a child of the current span (the
/// agent's).
pub(crate) fn tool_span(name: &str, call_id: &str, input: &Value) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        "execute_tool",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        zr.tool.status = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    );
    if !span.is_disabled() && content() {
        span.record("gen_ai.tool.call.arguments", input.to_string());
    }
    span
}

/// How a tool call ended, as `zr.tool.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolStatus {
    /// It ran and the model got its result.
    Ok,
    /// It ran (or was refused as unknown) and the model got an error.
    Error,
    /// A hook, the mode or the host's callback refused it.
    Denied,
}

/// Records how a call ended; `result` gives what the model got, asked for
/// only when content is recorded.
pub(crate) fn record_tool(span: &Span, status: ToolStatus, result: impl FnOnce() -> String) {
    let name = match status {
        ToolStatus::Ok => "ok",
        ToolStatus::Error => "error",
        ToolStatus::Denied => "denied",
    };
    let failed = (status != ToolStatus::Ok).then_some(name);
    tracing::record_all!(
        span,
        zr.tool.status = name,
        error.type = failed,
        otel.status_code = failed.map(|_| "ERROR"),
    );
    if !span.is_disabled() && content() {
        span.record("gen_ai.tool.call.result", result());
    }
}
