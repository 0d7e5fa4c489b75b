//! One live MCP session: the handshake, tool listing, calls, and the signals that it died.

use std::collections::HashMap;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, GetPromptResult, JsonObject,
    Prompt, ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate, Tool,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{AuthClient, StreamableHttpClientTransport};
use tokio::sync::watch;
use zr_types::ServerName;

use crate::auth::connect;
use crate::bounded::BoundedLines;
use crate::child::{self, StderrTail};
use crate::client::Client;
use crate::config::{HttpConfig, ServerConfig, TransportConfig, http_header};
use crate::error::McpError;
use crate::host::{Caller, Host};
use crate::options::HubOptions;
use crate::sse::SseTransport;
use zr_process::ProcessGroup;

/// After the process ended, how long a call that is still waiting may take
/// to read an answer the server wrote just before exiting.
const LATE_ANSWER_WAIT: Duration = Duration::from_millis(20);

/// The `_meta` key of a `tools/call` request that holds the call's
/// idempotency key (`zr_types::ToolContext::idempotency_key`,
/// `{session}/{call id}`): the same on every attempt of one call, so that
/// a server whose tool has an effect can do it once. MCP has no standard
/// key for it; a `_meta` name with a prefix of the client's own is what
/// the specification leaves to implementations.
pub const IDEMPOTENCY_KEY_META: &str = "zr/idempotencyKey";

/// How long to wait for the exit status once the connection closed.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);

/// How long to wait, once the server exited, for the rest of its stderr.
const STDERR_END_WAIT: Duration = Duration::from_millis(200);

/// How long a server whose input was closed gets to exit before it is
/// killed.
const GRACEFUL_EXIT_WAIT: Duration = Duration::from_secs(2);

type Service = RunningService<RoleClient, Client>;

/// A connection to one server, shared by the leases of its configuration.
#[derive(Debug)]
pub(crate) struct Connection {
    server: ServerName,
    service: Service,
    /// The last tool list and the client's `tools_version` it was read at.
    tools: Mutex<Option<(u64, Arc<Vec<Tool>>)>>,
    process: Option<Process>,
    /// Set when the hub was dropped: the connection was stopped on purpose.
    stopped: AtomicBool,
}

#[derive(Debug)]
struct Process {
    id: u32,
    exit: watch::Receiver<Option<ExitStatus>>,
    /// `true` once the server wrote a message over the size limit.
    too_large: watch::Receiver<bool>,
    limit: usize,
    guard: Arc<ProcessGroup>,
    stderr: StderrTail,
}

impl Connection {
    /// Starts (stdio) or reaches (HTTP) the server and completes the
    /// handshake within the connect timeout.
    pub(crate) async fn connect(
        config: &ServerConfig,
        options: &HubOptions,
        host: &Arc<Host>,
    ) -> Result<Self, McpError> {
        let server = config.name.clone();
        let client = Client::new(server.clone(), options.identity(), Arc::clone(host));
        let timeout_ms = millis(options.connect_timeout);
        let timed_out = |stderr| McpError::ConnectTimeout {
            server: server.clone(),
            timeout_ms,
            stderr,
        };
        let init_failed = |e: rmcp::service::ClientInitializeError, stderr| McpError::Initialize {
            server: server.clone(),
            stderr,
            source: Box::new(e),
        };
        let (service, process) = match &config.transport {
            TransportConfig::Stdio(stdio) => {
                let spawned = child::spawn(&server, stdio, &options.base_env, &options.cwd)?;
                let id = spawned.id;
                let limit = options.max_message_bytes;
                let (stdout, too_large) = BoundedLines::new(spawned.stdout, limit);
                // Our reader ends the stream first; the SDK's own limit (which
                // drops the line and leaves its call waiting) never applies.
                let transport = AsyncRwTransport::<RoleClient, _, _>::new(stdout, spawned.stdin)
                    .with_max_line_length(limit.saturating_add(1));
                let handshake =
                    tokio::time::timeout(options.connect_timeout, client.serve(transport));
                match handshake.await {
                    Ok(Ok(service)) => (
                        service,
                        Some(Process {
                            id,
                            exit: spawned.exit,
                            too_large,
                            limit,
                            guard: spawned.guard,
                            stderr: spawned.stderr,
                        }),
                    ),
                    Ok(Err(e)) => {
                        // A server that died during the handshake: say how,
                        // in its own words too.
                        let exit = exit_within(&spawned.exit, EXIT_STATUS_WAIT).await;
                        let stderr = spawned.stderr.last_lines(STDERR_END_WAIT).await;
                        return Err(match exit {
                            Some(status) => McpError::Exited {
                                server,
                                status,
                                stderr,
                            },
                            None => init_failed(e, stderr),
                        });
                    }
                    Err(_) => {
                        // Still running: what it said so far.
                        let stderr = spawned.stderr.last_lines(Duration::ZERO).await;
                        return Err(timed_out(stderr));
                    }
                }
            }
            TransportConfig::Http(http) => {
                let config = http_config(http, options);
                let manager = tokio::time::timeout(
                    options.connect_timeout,
                    connect::manager(&server, http, options.tokens.as_ref(), &options.cwd),
                )
                .await
                .map_err(|_| timed_out(Vec::new()))??;
                let handshake = async {
                    match manager {
                        Some(manager) => {
                            let client_of = AuthClient::new(reqwest::Client::default(), manager);
                            let transport =
                                StreamableHttpClientTransport::with_client(client_of, config);
                            client.serve(transport).await
                        }
                        None => {
                            let transport = StreamableHttpClientTransport::from_config(config);
                            client.serve(transport).await
                        }
                    }
                };
                match tokio::time::timeout(options.connect_timeout, handshake).await {
                    Ok(Ok(service)) => (service, None),
                    Ok(Err(e)) => {
                        if let Some(e) = e
                            .auth_challenge()
                            .map(|header| connect::challenge_error(&server, header, false))
                        {
                            return Err(e);
                        }
                        return Err(init_failed(e, Vec::new()));
                    }
                    Err(_) => return Err(timed_out(Vec::new())),
                }
            }
            TransportConfig::Sse(sse) => {
                let handshake = async {
                    let transport = SseTransport::connect(sse, options.max_message_bytes)
                        .await
                        .map_err(|e| McpError::Initialize {
                            server: server.clone(),
                            stderr: Vec::new(),
                            source: Box::new(e),
                        })?;
                    client
                        .serve(transport)
                        .await
                        .map_err(|e| init_failed(e, Vec::new()))
                };
                match tokio::time::timeout(options.connect_timeout, handshake).await {
                    Ok(Ok(service)) => (service, None),
                    Ok(Err(e)) => return Err(e),
                    Err(_) => return Err(timed_out(Vec::new())),
                }
            }
        };
        Ok(Self {
            server,
            service,
            tools: Mutex::new(None),
            process,
            stopped: AtomicBool::new(false),
        })
    }

    /// The server's process id (stdio servers).
    pub(crate) fn process_id(&self) -> Option<u32> {
        self.process.as_ref().map(|p| p.id)
    }

    /// The protocol version the server agreed to, and its name and
    /// version.
    pub(crate) fn server_info(&self) -> Option<(String, Option<(String, String)>)> {
        let info = self.service.peer().peer_info()?;
        let implementation = info
            .server_info
            .as_ref()
            .map(|i| (i.name.clone(), i.version.clone()));
        Some((info.protocol_version.to_string(), implementation))
    }

    /// Whether calls can still be sent.
    pub(crate) fn is_alive(&self) -> bool {
        !self.stopped.load(Ordering::Acquire)
            && !self.service.is_closed()
            && !self.service.peer().is_transport_closed()
            && self
                .process
                .as_ref()
                .is_none_or(|p| p.exit.borrow().is_none() && !*p.too_large.borrow())
    }

    /// The server's tools, listed again after a `tools/list_changed`.
    pub(crate) async fn tools(&self, timeout: Duration) -> Result<Arc<Vec<Tool>>, McpError> {
        let version = self.service.service().tools_version();
        if let Some((seen, tools)) = &*self.tools.lock().unwrap_or_else(PoisonError::into_inner)
            && *seen == version
        {
            return Ok(Arc::clone(tools));
        }
        let method = "tools/list";
        let listed = self
            .request(method, timeout, self.service.peer().list_all_tools())
            .await?;
        let tools = Arc::new(listed);
        // Stored with the version read before listing: a change announced
        // while listing makes the next call list again.
        *self.tools.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((version, Arc::clone(&tools)));
        Ok(tools)
    }

    /// Calls `tool` with `arguments`, unchanged; `caller` is counted as
    /// having a call in flight until it ends (for elicitation). An
    /// idempotency key goes to the server in the request's `_meta`, under
    /// [`IDEMPOTENCY_KEY_META`].
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Duration,
        caller: Option<Caller>,
        idempotency_key: Option<&str>,
    ) -> Result<CallToolResult, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        if let Some(key) = idempotency_key {
            let mut meta = JsonObject::new();
            meta.insert(IDEMPOTENCY_KEY_META.to_owned(), key.into());
            params.meta = Some(meta.into());
        }
        let method = format!("tools/call {tool}");
        let _in_flight = self.service.service().in_flight().enter(caller);
        self.request(&method, timeout, self.service.peer().call_tool(params))
            .await
    }

    /// Whether the server declared resources, and prompts, in the handshake.
    pub(crate) fn offers(&self) -> (bool, bool) {
        self.service
            .peer()
            .peer_info()
            .map_or((false, false), |info| {
                (
                    info.capabilities.resources.is_some(),
                    info.capabilities.prompts.is_some(),
                )
            })
    }

    /// Every resource and resource template the server lists.
    pub(crate) async fn resources(
        &self,
        timeout: Duration,
    ) -> Result<(Vec<Resource>, Vec<ResourceTemplate>), McpError> {
        let peer = self.service.peer();
        let resources = self
            .request("resources/list", timeout, peer.list_all_resources())
            .await?;
        let templates = self
            .request(
                "resources/templates/list",
                timeout,
                peer.list_all_resource_templates(),
            )
            .await
            .unwrap_or_else(|e| {
                tracing::debug!(server = %self.server, error = %e, "no resource templates");
                Vec::new()
            });
        Ok((resources, templates))
    }

    /// Reads the resource `uri`.
    pub(crate) async fn read_resource(
        &self,
        uri: &str,
        timeout: Duration,
    ) -> Result<ReadResourceResult, McpError> {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        let method = format!("resources/read {uri}");
        self.request(&method, timeout, self.service.read_resource(params))
            .await
    }

    /// Every prompt the server lists.
    pub(crate) async fn prompts(&self, timeout: Duration) -> Result<Vec<Prompt>, McpError> {
        self.request(
            "prompts/list",
            timeout,
            self.service.peer().list_all_prompts(),
        )
        .await
    }

    /// The prompt `name` with `arguments`.
    pub(crate) async fn get_prompt(
        &self,
        name: &str,
        arguments: JsonObject,
        timeout: Duration,
    ) -> Result<GetPromptResult, McpError> {
        let mut params = GetPromptRequestParams::new(name.to_owned());
        params.arguments = Some(arguments);
        let method = format!("prompts/get {name}");
        self.request(&method, timeout, self.service.get_prompt(params))
            .await
    }

    /// Tells the server that the roots changed.
    pub(crate) async fn roots_changed(&self) {
        if let Err(e) = self.service.peer().notify_roots_list_changed().await {
            tracing::debug!(server = %self.server, error = %e, "roots/list_changed not sent");
        }
    }

    /// Runs one request with a time limit, failing it as soon as the server
    /// process ends. Dropping the request's future (on the time limit, or
    /// when our caller is dropped) makes the SDK send
    /// `notifications/cancelled`.
    async fn request<T>(
        &self,
        method: &str,
        timeout: Duration,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        let request = tokio::time::timeout(timeout, request);
        tokio::pin!(request);
        let outcome = tokio::select! {
            biased;
            outcome = &mut request => outcome,
            () = self.process_ended() => {
                match tokio::time::timeout(LATE_ANSWER_WAIT, &mut request).await {
                    Ok(outcome) => outcome,
                    Err(_) => return Err(self.lost().await),
                }
            }
        };
        match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(self.map_error(method, error).await),
            Err(_) => Err(McpError::Timeout {
                server: self.server.clone(),
                method: method.to_owned(),
                timeout_ms: millis(timeout),
            }),
        }
    }

    /// Resolves when the server process ended or sent a message over the
    /// size limit; never for HTTP.
    async fn process_ended(&self) {
        let Some(process) = &self.process else {
            return std::future::pending().await;
        };
        let mut exit = process.exit.clone();
        let mut too_large = process.too_large.clone();
        let exited = async {
            if exit.wait_for(Option::is_some).await.is_err() {
                // The reaper is gone without a status: nothing will ever
                // arrive, and the transport reports the loss.
                std::future::pending::<()>().await;
            }
        };
        let oversized = async {
            if too_large.wait_for(|t| *t).await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            () = exited => {}
            () = oversized => {}
        }
    }

    async fn map_error(&self, method: &str, error: ServiceError) -> McpError {
        if let Some(header) = error.auth_challenge() {
            return connect::challenge_error(&self.server, header, false);
        }
        match error {
            ServiceError::McpError(e) => McpError::Refused {
                server: self.server.clone(),
                method: method.to_owned(),
                code: e.code.0,
                message: e.message.into_owned(),
            },
            ServiceError::TransportClosed => self.lost().await,
            ServiceError::TransportSend(_) if !self.is_alive() => self.lost().await,
            other => McpError::Request {
                server: self.server.clone(),
                method: method.to_owned(),
                source: Box::new(other),
            },
        }
    }

    /// The error for a connection that is gone: stopped by the hub, the
    /// process's exit status, or plainly closed.
    async fn lost(&self) -> McpError {
        let server = self.server.clone();
        if self.stopped.load(Ordering::Acquire) {
            return McpError::HubDropped { server };
        }
        if let Some(process) = &self.process {
            if *process.too_large.borrow() {
                // The session cannot go on: its stream was cut mid-message.
                child::kill(&process.guard);
                return McpError::MessageTooLarge {
                    server,
                    limit_bytes: process.limit,
                };
            }
            if let Some(status) = exit_within(&process.exit, EXIT_STATUS_WAIT).await {
                // Calls waiting on a dead server fail at once: what its
                // stderr said so far, no wait for the rest.
                let stderr = process.stderr.last_lines(Duration::ZERO).await;
                return McpError::Exited {
                    server,
                    status,
                    stderr,
                };
            }
        }
        McpError::Closed { server }
    }

    /// Stops at once: the session ends and the process group is killed.
    /// Used when the hub is dropped.
    pub(crate) fn stop_now(&self) {
        self.stopped.store(true, Ordering::Release);
        self.abandon();
    }

    /// Stops a connection found dead: the session ends and whatever is
    /// left of the process group is killed. Calls still waiting fail as
    /// they would have (the exit status, the size limit, a closed
    /// connection).
    pub(crate) fn abandon(&self) {
        self.service.cancellation_token().cancel();
        if let Some(process) = &self.process {
            child::kill(&process.guard);
        }
    }

    /// Ends the session politely: the server's input is closed and it gets
    /// a moment to exit before the last reference kills its group.
    pub(crate) async fn close(self: Arc<Self>) {
        self.service.cancellation_token().cancel();
        if let Some(process) = &self.process {
            exit_within(&process.exit, GRACEFUL_EXIT_WAIT).await;
        }
        tracing::debug!(server = %self.server, "MCP connection closed");
    }
}

/// The process's exit status, waiting up to `limit` for it; `None` when it
/// is still running then (or its reaper is gone).
async fn exit_within(
    exit: &watch::Receiver<Option<ExitStatus>>,
    limit: Duration,
) -> Option<ExitStatus> {
    let mut exit = exit.clone();
    let status = tokio::time::timeout(limit, exit.wait_for(Option::is_some)).await;
    status.ok()?.ok().and_then(|status| *status)
}

fn http_config(http: &HttpConfig, options: &HubOptions) -> StreamableHttpClientTransportConfig {
    let headers: HashMap<http::HeaderName, http::HeaderValue> = http
        .headers
        .iter()
        .filter_map(|(name, value)| {
            // `.mcp.json` headers were validated when read; one built in
            // code may not have been.
            let header = http_header(name, value);
            if header.is_none() {
                tracing::warn!(url = %http.url, header = %name, "invalid HTTP header not sent");
            }
            header
        })
        .collect();
    StreamableHttpClientTransportConfig::with_uri(http.url.as_str())
        .custom_headers(headers)
        .max_sse_event_size(options.max_message_bytes)
        .max_json_response_size(options.max_message_bytes)
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
