//! The MCP server of `zr mcp serve` (rmcp's `ServerHandler`): `tools/list`
//! gives the agent types, `tools/call` runs one through the engine
//! ([`Agent::run_task`]) and answers with its conclusion, with progress
//! and log notifications while it runs; `notifications/cancelled` stops
//! it; `logging/setLevel` sets what is logged; `ping` is rmcp's.
//!
//! MCP logging is deprecated for the 2026-07-28 protocol (SEP-2577) but
//! is how hosts on 2025-11-25 and earlier follow a server, so this module
//! uses rmcp's deprecated logging types.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use futures_util::StreamExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, ListToolsResult, LoggingLevel,
    LoggingMessageNotificationParam, MetaObject, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ServerCapabilities, ServerConfig, SetLevelRequestParams,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use zr_engine::{Agent, EngineError, Event, EventKind, TaskResult, TaskStatus};

use crate::serve::tools::{AgentTools, task_of};

/// What every MCP session of one `zr mcp serve` shares: the zr session's
/// root (every call is one of its tasks) and the tools.
#[derive(Debug)]
pub(crate) struct Served {
    pub(crate) agent: Agent,
    pub(crate) tools: AgentTools,
}

/// One MCP session's handler (stdio has one; HTTP one per client
/// session): the shared server and the session's log level.
#[derive(Debug, Clone)]
pub(crate) struct AgentServer {
    served: Arc<Served>,
    /// Set by `logging/setLevel`; until then warnings and errors only.
    level: Arc<Mutex<LoggingLevel>>,
}

impl AgentServer {
    /// A handler for a new MCP session.
    pub(crate) fn new(served: Arc<Served>) -> Self {
        Self {
            served,
            level: Arc::new(Mutex::new(LoggingLevel::Warning)),
        }
    }

    fn level(&self) -> LoggingLevel {
        *self
            .level
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The notifications of one call: progress for its token, log messages
/// above the session's level.
struct Reporter<'a> {
    peer: &'a Peer<RoleServer>,
    token: Option<ProgressToken>,
    level: LoggingLevel,
    step: u32,
}

impl Reporter<'_> {
    async fn event(&mut self, event: &Event) {
        let Some((level, message, progress)) = describe(event) else {
            return;
        };
        if progress && let Some(token) = &self.token {
            self.step += 1;
            let param = ProgressNotificationParam::new(token.clone(), f64::from(self.step))
                .with_message(message.clone());
            if let Err(error) = self.peer.notify_progress(param).await {
                tracing::debug!(%error, "cannot send a progress notification");
            }
        }
        if rank(level) >= rank(self.level) {
            let data = json!({ "agent": event.agent.to_string(), "message": message });
            let param = LoggingMessageNotificationParam::new(level, data).with_logger("zr");
            if let Err(error) = self.peer.notify_logging_message(param).await {
                tracing::debug!(%error, "cannot send a log notification");
            }
        }
    }
}

/// The severity order of MCP log levels (RFC 5424's, least severe first).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// What an event says to the caller: its log level, its text, and
/// whether it is a step of progress (the subagent running, each turn,
/// each tool call, its end).
fn describe(event: &Event) -> Option<(LoggingLevel, String, bool)> {
    let agent = &event.agent;
    Some(match &event.kind {
        EventKind::SubagentStarted { description, .. } => (
            LoggingLevel::Info,
            format!("{agent} started: {description}"),
            false,
        ),
        EventKind::SubagentRunning => (LoggingLevel::Debug, format!("{agent} running"), true),
        EventKind::TurnFinished { turn, .. } => (
            LoggingLevel::Debug,
            format!("{agent}: turn {turn} finished"),
            true,
        ),
        EventKind::ToolCallStarted { tool, .. } => (
            LoggingLevel::Debug,
            format!("{agent}: calling {tool}"),
            true,
        ),
        EventKind::ToolCallFinished { tool, is_error, .. } => (
            LoggingLevel::Debug,
            format!(
                "{agent}: {tool} {}",
                if *is_error {
                    "answered an error"
                } else {
                    "done"
                }
            ),
            false,
        ),
        EventKind::PermissionDenied { tool, reason, .. } => (
            LoggingLevel::Warning,
            format!("{agent}: {tool} denied: {reason}"),
            false,
        ),
        EventKind::ToolFailed { tool, error, .. } => (
            LoggingLevel::Error,
            format!("{agent}: {tool} failed: {error}"),
            false,
        ),
        EventKind::ModelRetry {
            attempt, reason, ..
        } => (
            LoggingLevel::Warning,
            format!("{agent}: model request attempt {attempt} failed, retrying: {reason}"),
            false,
        ),
        EventKind::SubagentFinished { result } => (
            if succeeded(result.status) {
                LoggingLevel::Info
            } else {
                LoggingLevel::Error
            },
            format!("{agent} finished: {}", result.status.as_str()),
            true,
        ),
        EventKind::TranscriptError { error, .. } => (
            LoggingLevel::Warning,
            format!("{agent}: transcript not written: {error}"),
            false,
        ),
        _ => return None,
    })
}

/// A status whose output is the subagent's answer (after `max_turns`,
/// its summary).
fn succeeded(status: TaskStatus) -> bool {
    matches!(status, TaskStatus::Completed | TaskStatus::MaxTurns)
}

/// The call's answer: the conclusion as text (an error result unless the
/// subagent completed or summarised at its turn limit; a structured
/// answer as its JSON, and as `structuredContent` when it is an object),
/// the rest of the
/// task's result (status, agent id, turns, usage, duration) under
/// `_meta.zr`.
fn answer(result: &TaskResult) -> CallToolResult {
    let mut meta = serde_json::to_value(result).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut meta {
        map.remove("output");
        map.remove("value");
        map.remove("index");
    }
    let mut out = if succeeded(result.status) {
        match &result.value {
            // A structured answer: its JSON as text too, as MCP asks of
            // a tool with structured content.
            Some(value) => {
                let mut out = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
                out.structured_content = value.is_object().then(|| value.clone());
                out
            }
            None => CallToolResult::success(vec![ContentBlock::text(result.output.clone())]),
        }
    } else {
        let mut text = format!("the subagent ended {}", result.status.as_str());
        if let Some(error) = &result.error {
            text.push_str(": ");
            text.push_str(error);
        }
        if !result.output.is_empty() {
            text.push_str("\n\nWhat it wrote:\n");
            text.push_str(&result.output);
        }
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    let mut object = serde_json::Map::new();
    object.insert("zr".to_owned(), meta);
    out.meta = Some(MetaObject(object));
    out
}

/// The requests this server answers whose parameters rmcp reads into a
/// type; one whose parameters do not fit reaches the handler as a custom
/// request.
const SERVED_METHODS: [&str; 5] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "logging/setLevel",
];

/// The answer to a request rmcp did not read as one of its own: for a
/// method this server answers, its parameters are wrong (-32602, with
/// what is wrong for `tools/call`); any other method is not found.
fn custom_request(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    if !SERVED_METHODS.contains(&method) {
        return ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method.to_owned(), None);
    }
    let params = request.params.clone().unwrap_or(Value::Null);
    let why = match (method, &params) {
        ("tools/call", Value::Object(map)) => match map.get("arguments") {
            Some(arguments) if !arguments.is_object() && !arguments.is_null() => {
                format!("arguments must be an object, not {}", kind(arguments))
            }
            _ => serde_json::from_value::<CallToolRequestParams>(params)
                .err()
                .map_or_else(|| "they do not fit".to_owned(), |e| e.to_string()),
        },
        _ => format!("they are not {method}'s parameters"),
    };
    ErrorData::invalid_params(format!("invalid params for {method}: {why}"), None)
}

/// What a JSON value is, for a message.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn failed(message: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(message)]).into()
}

impl ServerHandler for AgentServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("zr", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Each tool is one of the project's zr agent types: calling it runs that subagent \
             with its own tools, context and budget, and returns its conclusion.",
        )
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.served.tools.list().to_vec(),
        ))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self
            .level
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = request.level;
        Ok(())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(custom_request(&request))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(served) = self.served.tools.served(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("no tool '{}'; see tools/list", request.name),
                None,
            ));
        };
        let task = match task_of(served, request.arguments.as_ref()) {
            Ok(task) => task,
            Err(message) => return Ok(failed(message)),
        };
        let mut run = self.served.agent.run_task(task);
        let mut reporter = Reporter {
            peer: &context.peer,
            token: context.meta.get_progress_token(),
            level: self.level(),
            step: 0,
        };
        let cancelled = loop {
            tokio::select! {
                event = run.next() => match event {
                    Some(event) => reporter.event(&event).await,
                    None => break false,
                },
                () = context.ct.cancelled() => break true,
            }
        };
        if cancelled {
            tracing::info!(tool = %request.name, "the caller cancelled the call");
            run.cancel().await;
            return Err(ErrorData::internal_error("cancelled by the caller", None));
        }
        match run.finish().await {
            Ok(result) => Ok(answer(&result).into()),
            Err(EngineError::InvalidTask { message }) => Ok(failed(message)),
            Err(error) => Ok(failed(format!(
                "the subagent could not run: {}",
                zr_types::error_chain(&error)
            ))),
        }
    }
}
