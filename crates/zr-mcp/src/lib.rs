//! MCP client bridge: `.mcp.json`, a shared connection hub, tool materialisation and calls.
//!
//! Built on the official Rust MCP SDK (`rmcp`); none of its types appear in
//! this crate's API. What reaches the engine is plain zr vocabulary:
//! [`ToolDefinition`](zr_types::ToolDefinition)s and
//! [`ToolHandler`](zr_types::ToolHandler)s.
//!
//! # Configuration
//!
//! [`McpConfig`] reads the `.mcp.json` format other MCP hosts use:
//!
//! ```json
//! {"mcpServers": {
//!   "files": {"command": "npx", "args": ["server-filesystem", "${ROOT:-/srv}"],
//!             "env": {"TOKEN": "${TOKEN}"}, "cwd": "tools",
//!             "deferred": false, "timeout_ms": 30000},
//!   "gh":    {"type": "http", "url": "${GH_BASE:-https://example.invalid}/mcp",
//!             "headers": {"Authorization": "Bearer ${GH_TOKEN:-none}"}}
//! }}
//! ```
//!
//! - A server with `command` (or `"type": "stdio"`) is a child process; one
//!   with `"type": "http"` (or only a `url`) is reached over streamable HTTP;
//!   one with `"type": "sse"` over the legacy HTTP+SSE transport (an event
//!   stream and a message endpoint, `sse.rs`), which Claude Code still
//!   accepts.
//! - `${VAR}` and `${VAR:-default}` are expanded, as Claude Code does, in
//!   `command`, each `args` element, `env` values, `url` and `headers`
//!   values (not in names, `cwd` or `type`); the variables come from the
//!   `vars` function given to [`McpConfig::parse`] (usually the host's
//!   environment). The default applies when the variable is unset or empty.
//!   An unset variable without a default is an error, and so is a malformed
//!   reference: a `${` without its `}`, a name outside
//!   `[A-Za-z_][A-Za-z0-9_]*`, or a `${` inside a default (no nesting). A
//!   `$` not followed by `{` is kept as written (`$HOME` and `$$` stay as
//!   they are; there is no escape), and the replacement text is not
//!   expanded again. A `command` or `url` that is blank after expansion is
//!   an error. The connection key is computed from the expanded values.
//! - `deferred` sets the tools' `defer` flag (kept out of the advertised pool
//!   and found through `FindTool`); `timeout_ms` is the time limit of each
//!   request to that server (tool calls and `tools/list`).
//! - Every error names the server and the key (`MCP server 'gh':
//!   'headers.Authorization' uses ${GH_TOKEN}, which is not set`; an
//!   argument is named by its index, `'args[1]'`). Unknown keys are ignored
//!   with a warning.
//!
//! # The hub
//!
//! [`McpHub::acquire`] returns a [`Lease`]. Leases of the same transport
//! settings ([`ServerConfig::connection_key`], a stable hash of command,
//! arguments, environment and folder, or URL and headers) share one
//! connection and are counted. When the last lease goes, the connection
//! closes after the grace period (30 s by default); an acquire inside it
//! reuses the connection. A connection that failed is not kept, and one
//! whose server exited is replaced: the next acquire starts the server
//! again. The handshake has a time limit (5 s by default) and announces
//! protocol version 2025-11-25 and the client name and version from
//! [`HubOptions`].
//!
//! Dropping the hub stops every server it started: each runs in its own
//! process group, which is killed (`SIGKILL`) when the hub goes, when the
//! connection's last reference goes, when its leader exits (so helpers a
//! server started do not outlive it), and when a connection found dead is
//! replaced (even while old leases still hold it). A connection closed
//! after its grace period first gets its input closed and two seconds to
//! exit.
//!
//! # Tools
//!
//! [`Lease::tools`] lists the server's tools as definitions named
//! `mcp__{server}__{tool}` ([`ToolName::mcp`](zr_types::ToolName::mcp):
//! characters outside `[A-Za-z0-9_-]` become `_`, and a name over 64
//! characters is cut and given a stable hash suffix). The description (or
//! the title when there is none) and the input schema are kept as they are;
//! annotations map `readOnlyHint` to `read_only` (false when absent, and
//! when `destructiveHint` is true too: the contradiction is read as not
//! read-only, so plan mode and Explore never run such a tool),
//! `destructiveHint`, `idempotentHint` and `openWorldHint` to the other
//! hints (`None` when absent). `defer` comes from the server's `deferred`.
//! After `notifications/tools/list_changed` the next [`Lease::tools`] lists
//! again.
//!
//! # Calls and results
//!
//! Each tool's [`McpToolHandler`] passes the model's input unchanged as the
//! arguments, and the call's idempotency key
//! ([`ToolContext::idempotency_key`](zr_types::ToolContext::idempotency_key),
//! `{session}/{call id}`, the same on every attempt of a durable run) in
//! the request's `_meta` as [`IDEMPOTENCY_KEY_META`]
//! (`{"_meta": {"zr/idempotencyKey": "s-.../toolu_01"}}`): a server whose
//! tool has an effect that must happen once records the key and answers a
//! key it has seen from its record. Results map as follows; nothing is dropped silently:
//!
//! | MCP content                 | zr content                                             |
//! |-----------------------------|--------------------------------------------------------|
//! | text                        | text                                                   |
//! | image                       | image (base64)                                         |
//! | audio                       | text: `[audio: MIME, N bytes, base64 follows]` + data, or only the note above 8 KiB of base64 |
//! | embedded text resource      | text: `[resource URI (MIME)]` + the text               |
//! | embedded blob, `image/*`    | image (base64)                                         |
//! | embedded blob, other        | text note like audio, with the URI                     |
//! | resource link               | text: `[resource link: NAME URI (MIME) - DESCRIPTION]` |
//! | `structuredContent`         | JSON, after the content blocks                         |
//! | `isError: true`             | an error output for the model                          |
//!
//! A result larger than [`HubOptions::max_result_bytes`] (100 KiB by
//! default) is cut, with a final note saying how many bytes were omitted.
//!
//! Timeouts and failures: a call has the server's `timeout_ms`, else
//! [`HubOptions::call_timeout`] (120 s). Reaching it, or dropping the call's
//! future, sends `notifications/cancelled` to the server. A time limit or a
//! JSON-RPC error is an error output the model sees. When a stdio server's
//! process ends, every call waiting on it fails at once with
//! [`McpError::Exited`] naming the server and its exit status (collected by
//! a task that waits on the child), and the handler returns
//! `Err(ToolError::Unavailable)` whose reason says the same (so does a
//! connection lost any other way; other failures are
//! `Err(ToolError::Failed)`).
//!
//! # Reconnecting
//!
//! A handler follows its server across crashes. Calls waiting when the
//! server dies fail at once, as above, and are never sent again (a tool
//! call need not be idempotent). The next call through any handler of that
//! server finds the connection dead before sending, acquires the server
//! again from the hub (which starts it once, however many handlers ask at
//! the same moment), keeps the new lease for its later calls and sends the
//! call on the new connection; the host need not acquire or list tools
//! again. If the restarted server no longer lists the tool, the call is an
//! error output saying so; if the restart fails, `Err(ToolError::Unavailable)`
//! with the reason. Once the hub is dropped nothing is restarted: calls
//! fail as `Err(ToolError::Unavailable)`, with [`McpError::HubDropped`] as
//! the reason (or how the connection was lost, when the handler still held
//! one that had died and been replaced before the hub went).
//! [`Lease::call`] itself never reconnects; [`McpHub::acquire`] does.
//!
//! A single message from a stdio server larger than
//! [`HubOptions::max_message_bytes`] (64 MiB) is never buffered whole: the
//! session ends, waiting calls fail with [`McpError::MessageTooLarge`], and
//! the next acquire restarts the server.
//!
//! # Environment
//!
//! A server process gets its configured `env` plus a minimal base from the
//! host (`PATH`, `HOME`, `LANG`; [`HubOptions::base_env`]), never the
//! host's whole environment. A connection is shared by every agent, so the
//! per-agent [`ToolContext`](zr_types::ToolContext) environment does not
//! reach servers. Its standard error goes to `tracing` (target
//! `zr_mcp::server`, field `server`, level `info`, one event per line of
//! at most 8 KiB), never to our output.
//!
//! # OAuth
//!
//! An HTTP server may carry an `oauth` object ([`OAuthSettings`]: a
//! pre-registered client, scopes, a fixed callback port, a client ID
//! metadata document URL, or the client-credentials grant with a secret or
//! a signing key). With [`HubOptions::tokens`] set, a server logged in to
//! with [`login`] gets its stored token on every request, refreshed when it
//! expires (the new token is written back); with `grant:
//! "client_credentials"` a token is fetched at each connection. A server
//! that answers 401, or 403 `insufficient_scope`, fails the acquire or the
//! request with [`McpError::AuthRequired`] (its scope, and the challenge a
//! [`login`] can start from). [`login`] runs the browser flow: the
//! challenge, discovery, the client (pre-registered, metadata document or
//! dynamic registration), PKCE, a redirect to a listener on `127.0.0.1`,
//! the code exchange, the tokens into the [`TokenStore`] (one file per
//! server and URL, mode 0600). No token is ever logged or put in an error.
//!
//! # Client capabilities
//!
//! zr declares, in every handshake:
//!
//! - **`elicitation` (form mode)**, when the host set an elicitor before
//!   connecting (a capability that could only decline is not declared). A server's `elicitation/create` is
//!   handed, as an [`ElicitationRequest`] (the message and the schema as
//!   [`FormField`]s: text with a format and length, numbers with a range,
//!   yes/no, one or several choices, each with its default), to the
//!   [`Elicitor`] the host set with [`McpHub::set_elicitor`]; its
//!   [`ElicitationAnswer`] (accept with values, decline, cancel) goes back.
//!   Declined without asking: when no elicitor is set, when every call in
//!   flight on the connection comes from a background agent
//!   ([`ToolContext::background`](zr_types::ToolContext::background)),
//!   and any URL-mode request. [`FormField::read`] turns a typed answer
//!   into the field's value, so every host checks answers alike.
//! - **`roots` (with `listChanged`).** `roots/list` answers the hub's
//!   roots as `file://` URIs ([`HubOptions::roots`], the working folder by
//!   default); [`McpHub::set_roots`] changes them and sends
//!   `notifications/roots/list_changed` to every live connection.
//! - `tools/list_changed` is acted on as described under Tools.
//!
//! Sampling is not declared (see `docs/decisions.md`).
//!
//! # Resources and prompts
//!
//! A server that declares `resources` and lists at least one resource or
//! URI template gets two more tools in [`Lease::tools`] (a server with
//! nothing to read gets none, as the resolver's R7 leaves out what has
//! nothing to act on), read-only connection tools of that server:
//! `mcp__{server}__ListMcpResources` (no input: one line per resource,
//! `URI - name (MIME): description`, then the URI templates) and
//! `mcp__{server}__ReadMcpResource` (`{"uri": ...}`: the contents mapped as
//! embedded resources are, under the same size limit). Being the server's
//! own tools, they reach exactly the agents that get its tools, and
//! `mcp__{server}` patterns cover them. A server tool of the same name
//! wins (ours is left out, with a warning).
//!
//! [`Lease::prompts`] lists a server's prompts ([`McpPrompt`], with its
//! declared arguments); [`Lease::get_prompt`] binds words to them
//! ([`McpPrompt::bind`]: `name=value`, else positional in declared order;
//! a missing required argument, an extra word or a repeated name is
//! [`McpError::PromptArguments`] with the usage line) and returns the
//! messages as text.
//!
//! # Conformance
//!
//! The `zr-mcp-conformance` binary is a small client for the MCP
//! conformance suite: `conformance client --command zr-mcp-conformance
//! --scenario initialize`. The integration tests run every client
//! scenario of the pinned suite, the `auth/*` ones through [`login`], and
//! `elicitation-sep1034-client-defaults` with its form accepted with every
//! field's default.
//!
//! # Structure
//!
//! - `config.rs` (+ `config/expand.rs`): `.mcp.json` and `${VAR}`
//!   expansion.
//! - `options.rs`: [`HubOptions`], at the bottom; `pool.rs`: the slot
//!   table of shared, counted connections keyed by transport settings, the
//!   grace period after the last lease, reconnects; `lease.rs` reaches it
//!   only through the narrow `HubRef`; `hub.rs` is the [`McpHub`] facade on
//!   top.
//! - `connection.rs`, `client.rs`, `child.rs`, `bounded.rs`: one live
//!   session; the child started by `zr_process::spawn` with a clean
//!   environment, reaped by a task that publishes its exit; its last stderr
//!   lines kept for start-up errors; a stdout reader bounded per message.
//! - `materialise.rs`: `mcp__{server}__{tool}` definitions; `result.rs`:
//!   MCP content to zr content.
//! - `auth.rs` + `auth/`: OAuth on rmcp's `auth` support. `settings.rs`
//!   (the `oauth` key) and `store.rs` ([`TokenStore`], one 0600 file per
//!   server) at the bottom; `discovery.rs`; `connect.rs` gives a connection
//!   its authorization manager and turns a 401/403 into
//!   [`McpError::AuthRequired`]; `callback.rs` is the loopback redirect;
//!   `login.rs` the browser flow on top.
//! - `host.rs` (below `client.rs` and `pool.rs`): what connections ask of
//!   the host (the elicitor, the roots, the calls in flight by caller);
//!   `elicit.rs`: a form's schema as [`FormField`]s and the [`Elicitor`]
//!   trait.
//! - `resources.rs`: the two resource tools; `prompts.rs`: [`McpPrompt`].
//! - `src/bin/zr-mcp-conformance.rs`: the conformance client;
//!   `src/bin/zr-echo-server.rs` (feature `echo-server`, rmcp's server
//!   side) and `benches/echo.rs` + `benches/ts/` + `benches/py/`: the
//!   comparison with the TypeScript and Python SDKs.
//!
//! Tests run real servers (server-everything, server-filesystem, the
//! Python servers in `tests/servers/` and `tests/it/`).

mod auth;
mod bounded;
mod child;
mod client;
mod config;
mod connection;
mod elicit;
mod error;
mod host;
mod hub;
mod lease;
mod materialise;
mod options;
mod pool;
mod prompts;
mod resources;
mod result;
mod sse;

pub use auth::SECRET_LOG_TARGET;
pub use auth::login::{DEFAULT_LOGIN_TIMEOUT, LoginOptions, LoginOutcome, LoginPrompt, login};
pub use auth::settings::{KeySource, OAuthSettings, PrivateKey};
pub use auth::store::{CONFIG_DIR_ENV, TokenStore};
pub use config::{HttpConfig, McpConfig, ServerConfig, StdioConfig, TransportConfig};
pub use connection::IDEMPOTENCY_KEY_META;
pub use elicit::{Choice, ElicitationAnswer, ElicitationRequest, Elicitor, FieldKind, FormField};
pub use error::{BoxError, ConfigError, McpError};
pub use hub::McpHub;
pub use lease::{Lease, McpTool, McpToolHandler};
pub use options::HubOptions;
pub use prompts::{McpPrompt, PromptArgument, PromptMessage, PromptRole};
pub use resources::{LIST_RESOURCES, READ_RESOURCE};
