//! Leases on a shared connection, and the tools and handlers they give the engine.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use zr_types::{
    BoxFuture, ServerName, ToolCall, ToolContext, ToolDefinition, ToolError, ToolHandler, ToolName,
    ToolOutput,
};

use crate::config::ServerConfig;
use crate::connection::Connection;
use crate::error::McpError;
use crate::host::Caller;
use crate::materialise::materialise;
use crate::pool::{Grant, HubRef};
use crate::prompts::{McpPrompt, PromptMessage, messages};
use crate::resources::{LIST_RESOURCES, listing, read, resource_tools};
use crate::result::map_result;

/// A counted share of one server connection.
///
/// The connection stays open while any lease of it exists (and for the
/// hub's grace period after the last one is dropped). Cloning a lease
/// counts one more. Tool handlers hold a lease, so a server lives as long
/// as the engine holds its tools.
#[derive(Debug)]
pub struct Lease {
    hub: HubRef,
    key: u64,
    generation: u64,
    conn: Arc<Connection>,
    config: ServerConfig,
}

impl Lease {
    /// The lease of an already counted share of `config`'s connection.
    pub(crate) fn new(grant: Grant, config: ServerConfig) -> Self {
        let Grant {
            hub,
            key,
            generation,
            conn,
        } = grant;
        Self {
            hub,
            key,
            generation,
            conn,
            config,
        }
    }

    /// The server's name.
    #[must_use]
    pub fn server(&self) -> &ServerName {
        &self.config.name
    }

    /// The server's process id, for a stdio server.
    #[must_use]
    pub fn process_id(&self) -> Option<u32> {
        self.conn.process_id()
    }

    /// The protocol version agreed in the handshake (zr asks for
    /// `2025-11-25`), when the server's answer is known.
    #[must_use]
    pub fn protocol_version(&self) -> Option<String> {
        self.conn.server_info().map(|(version, _)| version)
    }

    /// The server's name and version from the handshake.
    #[must_use]
    pub fn server_implementation(&self) -> Option<(String, String)> {
        self.conn
            .server_info()
            .and_then(|(_, implementation)| implementation)
    }

    /// Whether the connection can still carry calls.
    #[must_use]
    pub fn is_alive(&self) -> bool {
        self.conn.is_alive()
    }

    fn call_timeout(&self) -> Duration {
        self.config
            .timeout
            .unwrap_or_else(|| self.hub.call_timeout())
    }

    fn max_result_bytes(&self) -> usize {
        self.hub.max_result_bytes()
    }

    /// A new lease of the same server: the hub's live connection, or a
    /// restarted server when this one is gone (concurrent callers share one
    /// start). `None` when the hub was dropped.
    pub(crate) async fn reacquire(&self) -> Option<Result<Lease, McpError>> {
        let grant = self.hub.acquire(&self.config).await?;
        Some(grant.map(|grant| Lease::new(grant, self.config.clone())))
    }

    /// Whether the server currently offers what `remote` reaches.
    async fn has(&self, remote: &Remote) -> Result<bool, McpError> {
        match remote {
            Remote::Tool(name) => {
                let listed = self.conn.tools(self.call_timeout()).await?;
                Ok(listed.iter().any(|tool| tool.name.as_ref() == name))
            }
            Remote::ListResources | Remote::ReadResource => Ok(self.conn.offers().0),
        }
    }

    /// Whether the server declared resources in the handshake (then,
    /// when it lists any, [`Lease::tools`] includes its `ListMcpResources`
    /// and `ReadMcpResource`).
    #[must_use]
    pub fn offers_resources(&self) -> bool {
        self.conn.offers().0
    }

    /// Whether the server declared resources and lists at least one
    /// resource or template now: a tool with nothing to act on is not
    /// offered (as the resolver's R7 does for Skill). A failed listing
    /// leaves the tools out, with a warning.
    async fn has_resources(&self) -> bool {
        if !self.offers_resources() {
            return false;
        }
        match self.conn.resources(self.call_timeout()).await {
            Ok((resources, templates)) => !resources.is_empty() || !templates.is_empty(),
            Err(e) => {
                tracing::warn!(server = %self.config.name, error = %e, "cannot list the resources; ListMcpResources and ReadMcpResource left out");
                false
            }
        }
    }

    /// Whether the server declared prompts in the handshake.
    #[must_use]
    pub fn offers_prompts(&self) -> bool {
        self.conn.offers().1
    }

    /// The server's resources and URI templates, one line each, as the
    /// `ListMcpResources` tool answers.
    ///
    /// # Errors
    ///
    /// As [`Lease::call`].
    pub async fn list_resources(&self) -> Result<ToolOutput, McpError> {
        let (resources, templates) = self.conn.resources(self.call_timeout()).await?;
        Ok(listing(
            &self.config.name,
            &resources,
            &templates,
            self.max_result_bytes(),
        ))
    }

    /// Reads the resource `uri`, as the `ReadMcpResource` tool answers:
    /// text with a line naming the resource, images, notes for other
    /// binary data.
    ///
    /// # Errors
    ///
    /// As [`Lease::call`]; an unknown URI is [`McpError::Refused`].
    pub async fn read_resource(&self, uri: &str) -> Result<ToolOutput, McpError> {
        let result = self.conn.read_resource(uri, self.call_timeout()).await?;
        Ok(read(result, self.max_result_bytes()))
    }

    /// The server's prompts, in its order (none when it declared no
    /// prompts).
    ///
    /// # Errors
    ///
    /// As [`Lease::call`].
    pub async fn prompts(&self) -> Result<Vec<McpPrompt>, McpError> {
        if !self.offers_prompts() {
            return Ok(Vec::new());
        }
        let prompts = self.conn.prompts(self.call_timeout()).await?;
        Ok(prompts.iter().map(McpPrompt::of).collect())
    }

    /// The prompt `name` filled with `words` ([`McpPrompt::bind`]: `name=value`
    /// or positional, in declared order), as messages of text.
    ///
    /// # Errors
    ///
    /// [`McpError::UnknownPrompt`] (naming the prompts it has),
    /// [`McpError::PromptArguments`], else as [`Lease::call`].
    pub async fn get_prompt(
        &self,
        name: &str,
        words: &[String],
    ) -> Result<Vec<PromptMessage>, McpError> {
        let prompts = self.prompts().await?;
        let Some(prompt) = prompts.iter().find(|p| p.name == name) else {
            return Err(McpError::UnknownPrompt {
                server: self.config.name.clone(),
                prompt: name.to_owned(),
                known: prompts.into_iter().map(|p| p.name).collect(),
            });
        };
        let arguments = prompt.bind(&self.config.name, words)?;
        let result = self
            .conn
            .get_prompt(name, arguments, self.call_timeout())
            .await?;
        Ok(messages(result))
    }

    /// The server's tools as definitions named `mcp__{server}__{tool}`,
    /// each with a handler that holds a clone of this lease; then, for a
    /// server that lists resources, its `ListMcpResources` and
    /// `ReadMcpResource`. The list is
    /// read once and read again after the server announces
    /// `notifications/tools/list_changed`.
    ///
    /// # Errors
    ///
    /// The listing failed or timed out, or the connection is gone.
    pub async fn tools(&self) -> Result<Vec<McpTool>, McpError> {
        let listed = self.conn.tools(self.call_timeout()).await?;
        let server = &self.config.name;
        let mut tools: Vec<_> = materialise(server, self.config.deferred, &listed)
            .into_iter()
            .map(|m| {
                let remote = Remote::Tool(m.remote_name.clone());
                (m, remote)
            })
            .collect();
        if self.has_resources().await {
            for m in resource_tools(server, self.config.deferred) {
                if tools
                    .iter()
                    .any(|(t, _)| t.definition.name == m.definition.name)
                {
                    tracing::warn!(server = %server, tool = %m.definition.name, "the server has a tool of that name; zr's resource tool left out");
                    continue;
                }
                let remote = if m.remote_name == LIST_RESOURCES {
                    Remote::ListResources
                } else {
                    Remote::ReadResource
                };
                tools.push((m, remote));
            }
        }
        Ok(tools
            .into_iter()
            .map(|(m, remote)| {
                let handler = McpToolHandler {
                    name: m.definition.name.clone(),
                    remote,
                    lease: Mutex::new(Arc::new(self.clone())),
                };
                McpTool {
                    definition: Arc::new(m.definition),
                    handler: Arc::new(handler),
                }
            })
            .collect())
    }

    /// Calls the server's tool `tool` (its own name, not the namespaced
    /// one) with `arguments` passed unchanged (an object, or `null` for
    /// none), and maps the result: `isError` gives an error output.
    ///
    /// # Errors
    ///
    /// [`McpError::Timeout`] after the call's time limit (the server is
    /// sent `notifications/cancelled`), [`McpError::Refused`] for a JSON-RPC
    /// error, [`McpError::Exited`] when the server process ended (every
    /// waiting call fails at once), [`McpError::MessageTooLarge`] when the
    /// server sent a message over the size limit, [`McpError::Closed`] or
    /// [`McpError::HubDropped`] when the connection is gone, and
    /// [`McpError::Request`] for any other transport failure.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<ToolOutput, McpError> {
        self.call_from(tool, arguments, None, None).await
    }

    /// [`Lease::call`] made by `caller` (counted as in flight, for
    /// elicitation), with the call's idempotency key in the request's
    /// `_meta` ([`IDEMPOTENCY_KEY_META`](crate::IDEMPOTENCY_KEY_META)).
    async fn call_from(
        &self,
        tool: &str,
        arguments: Value,
        caller: Option<Caller>,
        idempotency_key: Option<&str>,
    ) -> Result<ToolOutput, McpError> {
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Ok(ToolOutput::error(format!(
                    "the input of '{tool}' must be a JSON object, not {other}"
                )));
            }
        };
        let result = self
            .conn
            .call(
                tool,
                arguments,
                self.call_timeout(),
                caller,
                idempotency_key,
            )
            .await?;
        Ok(map_result(result, self.max_result_bytes()))
    }
}

impl Clone for Lease {
    fn clone(&self) -> Self {
        self.hub.retain(self.key, self.generation);
        Self {
            hub: self.hub.clone(),
            key: self.key,
            generation: self.generation,
            conn: Arc::clone(&self.conn),
            config: self.config.clone(),
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.hub
            .release(self.key, self.generation, &self.config.name);
    }
}

/// A materialised MCP tool: what the model is told, and what runs it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpTool {
    /// The definition, named `mcp__{server}__{tool}`.
    pub definition: Arc<ToolDefinition>,
    /// The handler; it holds a lease on the connection.
    pub handler: Arc<McpToolHandler>,
}

impl McpTool {
    /// The same server tool under `name`: the definition renamed, and a
    /// handler that calls the same tool through the same connection. For
    /// a host whose servers' tools come out under one name (see
    /// [`ToolName::mcp_distinct`]).
    #[must_use]
    pub fn renamed(&self, name: ToolName) -> Self {
        let mut definition = (*self.definition).clone();
        definition.name = name.clone();
        let handler = McpToolHandler {
            name,
            remote: self.handler.remote.clone(),
            lease: Mutex::new(self.handler.current()),
        };
        Self {
            definition: Arc::new(definition),
            handler: Arc::new(handler),
        }
    }
}

/// Runs one MCP tool through its server.
///
/// Failures the model can react to are error outputs: `isError` results,
/// JSON-RPC errors (a bad argument), a time limit reached, input that is
/// not an object. A lost connection (the server exited, the hub was
/// dropped) is `Err(ToolError::Unavailable)` whose reason names the server
/// and its exit status; any other failure is `Err(ToolError::Failed)` with
/// the [`McpError`] as source.
/// Dropping the call's future sends `notifications/cancelled`.
///
/// The handler follows its server across restarts: a call that finds the
/// connection dead before sending acquires the server again from the hub
/// (restarting it; concurrent calls share one start), keeps the new lease
/// for later calls, and is sent on the new connection. Calls that were
/// waiting when the server died still fail (a call is never sent twice).
/// When the restarted server no longer lists the tool, the call is an error
/// output saying so; when the restart fails, `Err(ToolError::Unavailable)`;
/// when the hub is gone, calls fail as before.
#[derive(Debug)]
pub struct McpToolHandler {
    name: ToolName,
    remote: Remote,
    /// The current lease; replaced (never held across an await) when the
    /// server is restarted.
    lease: Mutex<Arc<Lease>>,
}

/// What a handler reaches on its server.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Remote {
    /// The server's tool of that name.
    Tool(String),
    /// `resources/list` (and the templates).
    ListResources,
    /// `resources/read`.
    ReadResource,
}

/// Why a handler could not get a live lease for a call.
enum Stale {
    /// The restarted server does not list the tool any more.
    ToolGone(ServerName),
    /// Restarting the server failed.
    Restart(McpError),
    /// Listing the restarted server's tools failed.
    Listing(McpError),
}

impl McpToolHandler {
    /// The tool's name on its server (`ListMcpResources` and
    /// `ReadMcpResource` for zr's resource tools).
    #[must_use]
    pub fn remote_name(&self) -> &str {
        match &self.remote {
            Remote::Tool(name) => name,
            Remote::ListResources => LIST_RESOURCES,
            Remote::ReadResource => crate::resources::READ_RESOURCE,
        }
    }

    /// The namespaced name.
    #[must_use]
    pub fn name(&self) -> &ToolName {
        &self.name
    }

    fn current(&self) -> Arc<Lease> {
        // A plain Arc swap: the slot stays valid even if a holder panicked.
        Arc::clone(&self.lease.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// A lease whose connection is alive: the current one, or a new one
    /// from the hub (swapped in) when the current connection is gone. With
    /// the hub gone, the current lease, whose call then fails as before.
    async fn live_lease(&self) -> Result<Arc<Lease>, Stale> {
        let current = self.current();
        if current.is_alive() {
            return Ok(current);
        }
        let Some(fresh) = current.reacquire().await else {
            return Ok(current);
        };
        let fresh = Arc::new(fresh.map_err(Stale::Restart)?);
        tracing::info!(server = %fresh.server(), tool = %self.remote_name(), "MCP connection was gone; handler moved to the restarted server");
        let replaced = {
            let mut slot = self.lease.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::ptr_eq(&slot, &current).then(|| std::mem::replace(&mut *slot, Arc::clone(&fresh)))
        };
        // The old lease is released outside the handler's lock.
        drop(replaced);
        match fresh.has(&self.remote).await {
            Ok(true) => Ok(fresh),
            Ok(false) => Err(Stale::ToolGone(fresh.server().clone())),
            Err(e) => Err(Stale::Listing(e)),
        }
    }
}

/// The handler's answer for a call's outcome.
fn answer(tool: &str, result: Result<ToolOutput, McpError>) -> Result<ToolOutput, ToolError> {
    match result {
        Ok(output) => Ok(output),
        Err(e @ (McpError::Timeout { .. } | McpError::Refused { .. })) => {
            Ok(ToolOutput::error(e.to_string()))
        }
        Err(e) if e.is_connection_lost() => Err(ToolError::Unavailable {
            tool: tool.to_owned(),
            reason: e.to_string(),
        }),
        Err(e) => Err(ToolError::Failed {
            tool: tool.to_owned(),
            source: Box::new(e),
        }),
    }
}

impl ToolHandler for McpToolHandler {
    fn call<'a>(
        &'a self,
        call: &'a ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let lease = match self.live_lease().await {
                Ok(lease) => lease,
                Err(Stale::ToolGone(server)) => {
                    return Ok(ToolOutput::error(format!(
                        "MCP server '{server}' was restarted and no longer has the tool '{}'",
                        self.remote_name()
                    )));
                }
                Err(Stale::Restart(e)) => {
                    return Err(ToolError::Unavailable {
                        tool: call.name.clone(),
                        reason: format!("restarting failed: {}", zr_types::error_chain(&e)),
                    });
                }
                Err(Stale::Listing(e)) => return answer(&call.name, Err(e)),
            };
            let key = ctx.idempotency_key.as_deref();
            let caller = Caller {
                agent: ctx.agent,
                background: ctx.background,
            };
            let result = match &self.remote {
                Remote::Tool(remote) => {
                    lease
                        .call_from(remote, call.input.clone(), Some(caller), key)
                        .await
                }
                Remote::ListResources => lease.list_resources().await,
                Remote::ReadResource => match call.input.get("uri").and_then(Value::as_str) {
                    Some(uri) => lease.read_resource(uri).await,
                    None => Ok(ToolOutput::error(
                        "the input needs 'uri': the resource's URI, as ListMcpResources lists it",
                    )),
                },
            };
            answer(&call.name, result)
        })
    }
}
