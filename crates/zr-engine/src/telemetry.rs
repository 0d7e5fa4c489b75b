//! The engine's spans in the OpenTelemetry GenAI conventions, given to a
//! [`Tracer`] (zr-telemetry's exporter, or a host's own) straight from the
//! engine's values: `invoke_agent`, `chat`, `execute_tool`, with their
//! `gen_ai.*` attributes. The engine knows nothing of OpenTelemetry's
//! crates; the tracer encodes and sends.
//!
//! - one `session` span per [`Agent`](crate::Agent) (a root: one trace per
//!   session), holding every query's root `invoke_agent`;
//! - `invoke_agent` per agent; a subagent's (foreground, fork,
//!   background, resumed) is a child of the `execute_tool` span of the
//!   `Task` or `MultiTask` call that started it, and ends with the task's
//!   status (`zr.task.status`: `completed`, `timed_out`,
//!   `budget_exhausted`, ...), its turns, usage and cost;
//! - `chat` per model request (turns and side requests), of kind client,
//!   with the response's model, finish reason and usage, retries as
//!   `retry` events;
//! - `execute_tool` per call, with its status (`zr.tool.status`).
//!
//! Message content (`gen_ai.input.messages`, `gen_ai.output.messages`,
//! `gen_ai.system_instructions`, tool arguments and results) is given only
//! to a tracer whose [`Tracer::capture_content`] says so.
//!
//! Each span is also a `tracing` span (`session`, `agent`, `chat`, `tool`,
//! with a few identifying fields) for log lines' context; the exported
//! tree does not go through `tracing`: a subscriber's registry per span
//! cost more than the export itself (BENCHMARKS.md, issue 20). The
//! current span is kept as `tracing` keeps its own: per thread, set by
//! [`Traced::enter`] for each poll of a future run inside it (`in_span`),
//! so a span made while a future runs is a child of that future's span.

pub(crate) mod in_span;

use std::any::Any;
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use zr_types::{ContentBlock, Message, SessionId, StopReason, Usage};

use crate::meta::AgentMeta;
use crate::outcome::{TaskResult, TaskStatus};

/// Where the engine's spans go: set with
/// [`RuntimeEnvironment::with_tracer`](crate::RuntimeEnvironment::with_tracer)
/// (zr-telemetry's `Telemetry::tracer`). Every agent of the runtime's
/// sessions reports to it.
///
/// Called from async code on the run's threads: neither method may block
/// (queue the span's data; send it elsewhere).
pub trait Tracer: Send + Sync + fmt::Debug {
    /// Whether spans should carry message content (prompts, answers, tool
    /// arguments and results). When `false` the engine does not even
    /// serialise it.
    fn capture_content(&self) -> bool;

    /// Starts a span now: a child of `parent` (a handle this tracer
    /// returned), or the root of a new trace. The span ends when the last
    /// clone of the returned handle is dropped.
    fn start(
        &self,
        parent: Option<&Arc<dyn TraceSpan>>,
        start: &SpanStart<'_>,
    ) -> Arc<dyn TraceSpan>;
}

/// A running span of a [`Tracer`]; it ends when its last handle is
/// dropped. Within one span the engine sets each attribute key once,
/// except that a retried request may name its response's model and id
/// again (the later value wins).
pub trait TraceSpan: Send + Sync + fmt::Debug {
    /// Sets `attributes` on the span.
    fn set(&self, attributes: &[Attribute<'_>]);

    /// Adds the event `name`, now, with `attributes`.
    fn add_event(&self, name: &'static str, attributes: &[Attribute<'_>]);

    /// Sets the span's status to error, with `description` (OpenTelemetry's
    /// status message) if given.
    fn set_error(&self, description: Option<&str>);

    /// The span as [`Any`], for a tracer to reach its own type (a
    /// parent's ids).
    fn as_any(&self) -> &dyn Any;

    /// The span's W3C trace context, which the processes started inside
    /// it receive as `TRACEPARENT` and `TRACESTATE`
    /// ([`pass_trace_context`]). `None` (the default) passes nothing.
    fn context(&self) -> Option<TraceContext> {
        None
    }
}

/// A span's W3C trace context, as child processes receive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// `00-{trace id}-{span id}-{flags}`.
    pub traceparent: String,
    /// The vendors' entries (empty for none).
    pub tracestate: String,
}

/// The variable that carries a [`TraceContext`]'s `traceparent` to a
/// child process (the OpenTelemetry convention for environment
/// variables).
pub const TRACEPARENT_VAR: &str = "TRACEPARENT";

/// The variable that carries a [`TraceContext`]'s `tracestate`.
pub const TRACESTATE_VAR: &str = "TRACESTATE";

/// The trace context of the exported span the future being polled on
/// this thread runs in (a tool call's, a hook's), if any.
#[must_use]
pub fn current_trace_context() -> Option<TraceContext> {
    current_export().and_then(|span| span.context())
}

/// Gives `env`, the environment of a process about to start, the
/// current span's trace context: [`TRACEPARENT_VAR`], and
/// [`TRACESTATE_VAR`] (removed when the span has none). Without an
/// exported span `env` is left as it is. Every child process zr starts
/// inside a run takes its environment through here (a tool call's, a
/// hook's).
pub fn pass_trace_context(env: &mut std::collections::BTreeMap<String, String>) {
    if let Some(context) = current_trace_context() {
        env.insert(TRACEPARENT_VAR.to_owned(), context.traceparent);
        if context.tracestate.is_empty() {
            env.remove(TRACESTATE_VAR);
        } else {
            env.insert(TRACESTATE_VAR.to_owned(), context.tracestate);
        }
    }
}

/// What a span starts with: its operation (`session`, `invoke_agent`,
/// `chat`, `execute_tool`; the conventions name the span `{operation}
/// {target}`, the target being the attribute `gen_ai.agent.name`,
/// `gen_ai.request.model` or `gen_ai.tool.name`), its kind and its first
/// attributes.
#[derive(Debug, Clone, Copy)]
pub struct SpanStart<'a> {
    /// The operation, which is also the span's name before its target.
    pub operation: &'static str,
    /// OpenTelemetry's span kind.
    pub kind: SpanKind,
    /// The attributes known at the start.
    pub attributes: &'a [Attribute<'a>],
}

/// OpenTelemetry's span kinds, of those the engine's spans take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Work inside the process (sessions, agents, tool calls).
    Internal,
    /// A request to another service (a model request).
    Client,
}

/// One attribute: a key of the conventions and its value.
#[derive(Debug, Clone, Copy)]
pub struct Attribute<'a> {
    /// The key (`gen_ai.request.model`).
    pub key: &'static str,
    /// The value.
    pub value: AttributeValue<'a>,
}

/// An attribute's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AttributeValue<'a> {
    /// A string.
    Str(&'a str),
    /// An integer.
    I64(i64),
    /// A float.
    F64(f64),
    /// A boolean.
    Bool(bool),
    /// An array of strings (`gen_ai.response.finish_reasons`).
    StrArray(&'a [&'a str]),
}

/// `key` = the string `value`.
const fn str<'a>(key: &'static str, value: &'a str) -> Attribute<'a> {
    Attribute {
        key,
        value: AttributeValue::Str(value),
    }
}

/// `key` = the integer `value` (saturated at `i64::MAX`).
fn int(key: &'static str, value: impl TryInto<i64>) -> Attribute<'static> {
    Attribute {
        key,
        value: AttributeValue::I64(value.try_into().unwrap_or(i64::MAX)),
    }
}

/// `key` = the boolean `value`.
const fn bool(key: &'static str, value: bool) -> Attribute<'static> {
    Attribute {
        key,
        value: AttributeValue::Bool(value),
    }
}

thread_local! {
    /// The exported span of the future being polled on this thread.
    static CURRENT: RefCell<Option<Arc<dyn TraceSpan>>> = const { RefCell::new(None) };
}

/// A span of the engine: its `tracing` span (log context) and, with a
/// tracer, the exported span. Cloning shares both; the exported span ends
/// with its last clone.
#[derive(Debug, Clone)]
pub(crate) struct Traced {
    log: tracing::Span,
    export: Option<Arc<dyn TraceSpan>>,
    /// Whether the tracer wants message content on this span.
    content: bool,
}

impl Traced {
    /// A span of `tracing` only (nothing exported).
    #[cfg(test)]
    pub(crate) fn log_only(log: tracing::Span) -> Self {
        Self {
            log,
            export: None,
            content: false,
        }
    }

    /// The span `log`, and with `tracer` the exported span of `operation`
    /// started with `attributes` (made only then), a child of `parent`.
    fn start<'a, A: AsRef<[Attribute<'a>]>>(
        log: tracing::Span,
        tracer: Option<&Arc<dyn Tracer>>,
        parent: Option<&Arc<dyn TraceSpan>>,
        operation: &'static str,
        kind: SpanKind,
        attributes: impl FnOnce() -> A,
    ) -> Self {
        Self {
            log,
            export: tracer.map(|tracer| {
                tracer.start(
                    parent,
                    &SpanStart {
                        operation,
                        kind,
                        attributes: attributes().as_ref(),
                    },
                )
            }),
            content: tracer.is_some_and(|tracer| tracer.capture_content()),
        }
    }

    /// Makes the span current on this thread (for `tracing` and for the
    /// spans started while it is) until the guard is dropped. The
    /// exported span's handle moves into the thread's current slot and
    /// back, so that entering (each poll of a future in the span) costs
    /// no reference count.
    pub(crate) fn enter(&mut self) -> Entered<'_> {
        let _log = self.log.enter();
        swap_current(&mut self.export);
        Entered {
            export: &mut self.export,
            _log,
        }
    }

    /// The current span: the future being polled on this thread is inside
    /// it.
    pub(crate) fn current() -> Self {
        Self {
            log: tracing::Span::current(),
            export: current_export(),
            // Only a parent: content is a started span's.
            content: false,
        }
    }

    fn set(&self, attributes: &[Attribute<'_>]) {
        if let Some(span) = &self.export {
            span.set(attributes);
        }
    }

    /// The exported span, when its tracer wants message content on it.
    fn content(&self) -> Option<&Arc<dyn TraceSpan>> {
        self.export.as_ref().filter(|_| self.content)
    }

    fn fail(&self, kind: &str, description: Option<&str>) {
        if let Some(span) = &self.export {
            span.set(&[str("error.type", kind)]);
            span.set_error(description);
        }
    }
}

/// Swaps `slot` with the thread's current exported span.
fn swap_current(slot: &mut Option<Arc<dyn TraceSpan>>) {
    // The thread is ending: nothing is current any more.
    let _ = CURRENT.try_with(|current| std::mem::swap(&mut *current.borrow_mut(), slot));
}

/// The span [`Traced::enter`] made current: its handle is the
/// thread's until the guard drops, and the previous one waits in the
/// span's slot.
pub(crate) struct Entered<'a> {
    export: &'a mut Option<Arc<dyn TraceSpan>>,
    _log: tracing::span::Entered<'a>,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        swap_current(self.export);
    }
}

fn current_export() -> Option<Arc<dyn TraceSpan>> {
    CURRENT
        .try_with(|current| current.borrow().clone())
        .ok()
        .flatten()
}

/// The session's span: a root, one per [`Agent`](crate::Agent).
pub(crate) fn session_span(tracer: Option<&Arc<dyn Tracer>>, id: &SessionId) -> Traced {
    Traced::start(
        tracing::info_span!(parent: None, "session", id = %id),
        tracer,
        None,
        "session",
        SpanKind::Internal,
        || [str("gen_ai.conversation.id", id.as_str())],
    )
}

/// An agent's `invoke_agent` span, a child of `parent` (the session's span
/// for a root, the current span, the `execute_tool` of its call, for a
/// subagent).
pub(crate) fn agent_span(
    tracer: Option<&Arc<dyn Tracer>>,
    parent: &Traced,
    meta: &AgentMeta,
    session: &SessionId,
    provider: &str,
    description: Option<&str>,
) -> Traced {
    Traced::start(
        tracing::info_span!(
            parent: &parent.log,
            "agent",
            id = %meta.id,
            r#type = &*meta.agent_type,
        ),
        tracer,
        parent.export.as_ref(),
        "invoke_agent",
        SpanKind::Internal,
        || {
            let mut attributes = vec![
                str("gen_ai.operation.name", "invoke_agent"),
                str("gen_ai.provider.name", provider),
                str("gen_ai.agent.name", &meta.agent_type),
                str("gen_ai.agent.id", meta.id.as_str()),
                str("gen_ai.conversation.id", session.as_str()),
                str("gen_ai.request.model", &meta.model),
                bool("zr.agent.background", meta.background),
            ];
            if let Some(description) = description {
                attributes.push(str("gen_ai.agent.description", description));
            }
            if let Some(parent) = &meta.parent {
                attributes.push(str("zr.agent.parent", parent.as_str()));
            }
            attributes
        },
    )
}

/// Records a subagent's result on its `invoke_agent` span.
pub(crate) fn record_task(span: &Traced, result: &TaskResult) {
    record_end(
        span,
        result.status,
        result.turns,
        result.usage,
        result.cost_usd,
    );
    if is_error(result.status) {
        span.fail(result.status.as_str(), result.error.as_deref());
    }
}

/// Records how an agent's run ended on its `invoke_agent` span (a root's
/// failure, if any, is recorded after with [`record_failure`]).
pub(crate) fn record_end(
    span: &Traced,
    status: TaskStatus,
    turns: u32,
    usage: Usage,
    cost: Option<f64>,
) {
    let [input, output, read, created] = usage_attributes(usage);
    span.set(&[
        str("zr.task.status", status.as_str()),
        int("zr.task.turns", turns),
        input,
        output,
        read,
        created,
    ]);
    if let Some(cost) = cost {
        span.set(&[Attribute {
            key: "zr.task.cost_usd",
            value: AttributeValue::F64(cost),
        }]);
    }
}

/// The conventions' four usage attributes.
fn usage_attributes(usage: Usage) -> [Attribute<'static>; 4] {
    [
        int("gen_ai.usage.input_tokens", usage.input_tokens),
        int("gen_ai.usage.output_tokens", usage.output_tokens),
        int(
            "gen_ai.usage.cache_read.input_tokens",
            usage.cache_read_input_tokens,
        ),
        int(
            "gen_ai.usage.cache_creation.input_tokens",
            usage.cache_creation_input_tokens,
        ),
    ]
}

/// A root whose run failed (a provider error, no answer): its status
/// becomes `failed`.
pub(crate) fn record_failure(span: &Traced, kind: &str, message: &str) {
    span.set(&[str("zr.task.status", TaskStatus::Failed.as_str())]);
    span.fail(kind, Some(message));
}

/// The statuses that are errors of the agent's operation: it did not end
/// on its own terms.
fn is_error(status: TaskStatus) -> bool {
    matches!(
        status,
        TaskStatus::Failed | TaskStatus::TimedOut | TaskStatus::Cancelled | TaskStatus::Denied
    )
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
pub(crate) fn chat_span(tracer: Option<&Arc<dyn Tracer>>, start: &ChatStart<'_>) -> Traced {
    let span = Traced::start(
        tracing::info_span!("chat", turn = start.turn),
        tracer,
        current_export().as_ref(),
        "chat",
        SpanKind::Client,
        || {
            [
                str("gen_ai.operation.name", "chat"),
                str("gen_ai.provider.name", start.provider),
                str("gen_ai.request.model", start.model),
                int("gen_ai.request.max_tokens", start.max_tokens),
                int("zr.turn", start.turn),
            ]
        },
    );
    if let Some(export) = span.content() {
        let messages = serde_json::to_string(start.messages).unwrap_or_default();
        export.set(&[
            str("gen_ai.system_instructions", start.system),
            str("gen_ai.input.messages", &messages),
        ]);
    }
    span
}

/// The model and id the API named for the response, on the current span
/// (the request's `chat`).
pub(crate) fn record_response_metadata(model: &str, id: Option<&str>) {
    if let Some(span) = current_export() {
        span.set(&[str("gen_ai.response.model", model)]);
        if let Some(id) = id {
            span.set(&[str("gen_ai.response.id", id)]);
        }
    }
}

/// A finished response: finish reason, usage, and (with content) what the
/// model wrote.
pub(crate) fn record_response(
    span: &Traced,
    stop: &StopReason,
    usage: Usage,
    content_blocks: &[ContentBlock],
) {
    let [input, output, read, created] = usage_attributes(usage);
    span.set(&[
        Attribute {
            key: "gen_ai.response.finish_reasons",
            value: AttributeValue::StrArray(&[stop.as_str()]),
        },
        input,
        output,
        read,
        created,
    ]);
    if let Some(export) = span.content() {
        let written = Value::Array(
            content_blocks
                .iter()
                .filter_map(|b| serde_json::to_value(b).ok())
                .collect(),
        )
        .to_string();
        export.set(&[str("gen_ai.output.messages", &written)]);
    }
}

/// A provider retry, as an event of the current span (the request's
/// `chat`).
pub(crate) fn retry_event(attempt: u32, delay_ms: u64, reason: &str) {
    tracing::debug!(attempt, delay_ms, reason, "retry");
    if let Some(span) = current_export() {
        span.add_event(
            "retry",
            &[
                int("zr.retry.attempt", attempt),
                int("zr.retry.delay_ms", delay_ms),
                str("zr.retry.reason", reason),
            ],
        );
    }
}

/// A request that failed for good.
pub(crate) fn record_request_error(span: &Traced, kind: &str, message: &str) {
    span.fail(kind, Some(message));
}

/// A tool call's `execute_tool` span, a child of the current span (the
/// agent's).
pub(crate) fn tool_span(
    tracer: Option<&Arc<dyn Tracer>>,
    name: &str,
    call_id: &str,
    input: &Value,
) -> Traced {
    let span = Traced::start(
        tracing::info_span!("tool", name, id = call_id),
        tracer,
        current_export().as_ref(),
        "execute_tool",
        SpanKind::Internal,
        || {
            [
                str("gen_ai.operation.name", "execute_tool"),
                str("gen_ai.tool.name", name),
                str("gen_ai.tool.call.id", call_id),
                str("gen_ai.tool.type", "function"),
            ]
        },
    );
    if let Some(export) = span.content() {
        export.set(&[str("gen_ai.tool.call.arguments", &input.to_string())]);
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
pub(crate) fn record_tool(span: &Traced, status: ToolStatus, result: impl FnOnce() -> String) {
    let name = match status {
        ToolStatus::Ok => "ok",
        ToolStatus::Error => "error",
        ToolStatus::Denied => "denied",
    };
    span.set(&[str("zr.tool.status", name)]);
    if let Some(export) = span.content() {
        export.set(&[str("gen_ai.tool.call.result", &result())]);
    }
    if status != ToolStatus::Ok {
        span.fail(name, None);
    }
}

#[cfg(test)]
mod tests;
