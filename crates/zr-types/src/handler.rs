//! The `ToolHandler` contract: how every tool, builtin, custom or MCP, is run.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::access::{Access, Confinement};
use crate::error::ToolError;
use crate::id::{AgentId, SessionId};
use crate::message::ToolResultContent;

/// A boxed, sendable future, so that [`ToolHandler`] stays object-safe
/// without an async-trait macro.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One call of a tool, as the model asked for it.
///
/// The name is kept as the model sent it, even when it is no valid
/// [`ToolName`](crate::ToolName):
///
/// ```
/// use zr_types::{ToolCall, ToolName};
///
/// let call = ToolCall {
///     id: "toolu_01".to_owned(),
///     name: "read file".to_owned(),
///     input: serde_json::json!({}),
/// };
/// // No tool can have this name: the engine answers the call with an error
/// // result ("no tool 'read file'") instead of failing the turn.
/// assert!(call.name.parse::<ToolName>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's call id, echoed in the result.
    pub id: String,
    /// The tool's name as the model sent it; not validated — the engine
    /// checks it against the agent's pool before any handler sees the call.
    pub name: String,
    /// The input, unchanged from the model.
    pub input: Value,
}

/// What a handler knows about the agent that calls it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolContext {
    /// The session.
    pub session: SessionId,
    /// The calling agent.
    pub agent: AgentId,
    /// The agent's working directory; tools act inside it. Shared with
    /// the agent (every call of every agent has one).
    pub cwd: Arc<Path>,
    /// The environment of child processes: only these variables, never the
    /// host's whole environment.
    pub env: BTreeMap<String, String>,
    /// Whether the agent runs in the background, where nobody can be asked
    /// (a handler that would ask the user, such as an MCP server's
    /// elicitation, declines instead). `false` from [`ToolContext::new`].
    pub background: bool,
    /// `{session}/{call id}`: the same for every attempt of this call. The
    /// engine never runs a call that is not read-only twice, but a durable
    /// run (zr-restate) may: a worker that dies after a call's effect and
    /// before its result reached the journal runs the call again on the
    /// next attempt. A tool whose effect must happen exactly once (a
    /// payment, an email, a row written) passes this key to the system it
    /// acts on (an `Idempotency-Key` header, a unique column) or records
    /// it and skips a key it has seen. `None` only in contexts built
    /// without a call (a tool's own tests).
    pub idempotency_key: Option<String>,
    /// The OS sandbox the call's child processes run in; `None`: none
    /// (the host turned it off, or the agent is in `bypassPermissions`
    /// mode). A tool that starts processes applies it to every one of
    /// them, and refuses to start one it cannot confine.
    pub confinement: Option<Confinement>,
}

impl ToolContext {
    /// A context for `agent` of `session` working in `cwd` with `env`.
    #[must_use]
    pub fn new(
        session: SessionId,
        agent: AgentId,
        cwd: impl Into<Arc<Path>>,
        env: BTreeMap<String, String>,
    ) -> Self {
        Self {
            session,
            agent,
            cwd: cwd.into(),
            env,
            background: false,
            idempotency_key: None,
            confinement: None,
        }
    }

    /// The same context, its child processes confined to `confinement`.
    #[must_use]
    pub fn with_confinement(mut self, confinement: Option<Confinement>) -> Self {
        self.confinement = confinement;
        self
    }

    /// The same context for an agent that runs in the background, or not.
    #[must_use]
    pub fn with_background(mut self, background: bool) -> Self {
        self.background = background;
        self
    }

    /// This context for the call `call_id`: its
    /// [`idempotency_key`](Self::idempotency_key) is `{session}/{call_id}`.
    #[must_use]
    pub fn for_call(mut self, call_id: &str) -> Self {
        // One allocation of the right size: every tool call makes one.
        let session = self.session.as_str();
        let mut key = String::with_capacity(session.len() + 1 + call_id.len());
        key.push_str(session);
        key.push('/');
        key.push_str(call_id);
        self.idempotency_key = Some(key);
        self
    }
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// What the model sees.
    pub content: Vec<ToolResultContent>,
    /// Whether the call failed in a way the model should know about (bad
    /// input, missing file, `isError` from an MCP server).
    pub is_error: bool,
    /// A rendering for people. Never sent to the model.
    pub display: Option<String>,
}

impl ToolOutput {
    /// A successful text result.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ToolResultContent::Text { text: text.into() }],
            is_error: false,
            display: None,
        }
    }

    /// A text result that tells the model the call failed and what to fix.
    #[must_use]
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::text(text)
        }
    }

    /// Adds a rendering for people.
    #[must_use]
    pub fn with_display(mut self, display: impl Into<String>) -> Self {
        self.display = Some(display.into());
        self
    }
}

/// Runs one tool.
///
/// A handler is shared (`Arc<dyn ToolHandler>`) by every agent whose pool
/// holds the tool, and may be called concurrently: the engine runs the
/// read-only calls of one model turn at the same time. Per-agent state
/// (a read ledger, a todo list) is keyed by [`ToolContext::agent`], never
/// kept in a field that all agents share unkeyed.
///
/// The engine calls a handler only for a tool in the caller's resolved
/// executable pool; a handler need not check permissions again.
///
/// # Errors
///
/// Two kinds of failure, kept apart:
///
/// - failures the model should see and can react to are `Ok` with
///   [`ToolOutput::error`]: a missing file, invalid input (say what to fix),
///   an MCP result with `isError`;
/// - `Err(ToolError)` means the call could not be carried out at all (the
///   server crashed, the service is gone). The engine reports it to the
///   model as an error result *and* to the host as an event.
///
/// # Cancellation
///
/// Dropping the returned future cancels the call. A handler that starts
/// work outside the future (a child process, a request to a server) must
/// stop it when dropped: kill the process group, send MCP
/// `notifications/cancelled`. Nothing may keep running after the drop.
///
/// # Panics
///
/// A handler must not panic on any input. The engine treats a panic as a
/// fatal error of that call and still cleans up after the agent.
///
/// # Example
///
/// ```
/// use zr_types::{BoxFuture, ToolCall, ToolContext, ToolError, ToolHandler, ToolOutput};
///
/// #[derive(Debug)]
/// struct Echo;
///
/// impl ToolHandler for Echo {
///     fn call<'a>(
///         &'a self,
///         call: &'a ToolCall,
///         _ctx: ToolContext,
///     ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
///         Box::pin(async move {
///             match call.input.get("text").and_then(|t| t.as_str()) {
///                 Some(text) => Ok(ToolOutput::text(text)),
///                 // Right: tell the model what to fix. `call.name` is the
///                 // name as the model sent it (a plain `String`).
///                 None => Ok(ToolOutput::error(format!(
///                     "{}: 'text' (a string) is required",
///                     call.name
///                 ))),
///                 // Wrong: `Err(ToolError::..)` here would report a broken
///                 // tool when the model merely sent bad input.
///             }
///         })
///     }
/// }
/// ```
pub trait ToolHandler: Send + Sync + fmt::Debug {
    /// Runs `call` on behalf of the agent described by `ctx`.
    ///
    /// The call is lent for as long as the future lives: the engine runs
    /// it from the turn's calls without a copy per call (every call of
    /// every agent of a fan-out made one). A handler that needs the input
    /// beyond the future (a request body it hands on) clones what it keeps.
    fn call<'a>(
        &'a self,
        call: &'a ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

    /// What a call with `input` would touch, for an agent working in
    /// `cwd`: the files it reads or writes, the command it runs, the host
    /// it fetches from. The engine checks these against the agent's
    /// places and the permission rules before [`ToolHandler::call`].
    ///
    /// The default declares nothing: such a tool is judged by its name
    /// and read-only flag alone. A tool that acts on paths must declare
    /// them, or its calls bypass the writable roots and protected files.
    /// An input that does not parse declares nothing (the call will fail
    /// on it).
    fn access(&self, input: &Value, cwd: &Path) -> Vec<Access> {
        let _ = (input, cwd);
        Vec::new()
    }
}
