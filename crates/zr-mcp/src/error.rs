//! Errors of the MCP bridge: configuration files and live connections.

use std::path::PathBuf;
use std::process::ExitStatus;

use thiserror::Error;
use zr_types::{NameError, ServerName};

/// A boxed error from a lower layer (the MCP SDK, the HTTP client), kept as
/// a source without exposing its type.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// `.mcp.json` could not be read. Every variant about a server names the
/// server and the key, so the message says what to fix:
/// `MCP server 'gh': 'headers.Authorization' uses ${GH_TOKEN}, which is not set`.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The text is not JSON of the expected outer shape
    /// (`{"mcpServers": {...}}`), or a server name appears twice.
    #[error("invalid MCP configuration: {source}")]
    Json {
        /// The parser's error, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// A key of `mcpServers` is no valid server name.
    #[error("invalid MCP server name '{name}'")]
    ServerName {
        /// The name as written.
        name: String,
        /// What is wrong with it.
        #[source]
        source: NameError,
    },
    /// A server entry is not a JSON object.
    #[error("MCP server '{server}': the entry must be an object")]
    NotAnObject {
        /// The server.
        server: String,
    },
    /// A required key is missing.
    #[error("MCP server '{server}': '{key}' is required")]
    MissingKey {
        /// The server.
        server: String,
        /// The missing key.
        key: &'static str,
    },
    /// A key has a value of the wrong JSON type.
    #[error("MCP server '{server}': '{key}' must be {expected}")]
    WrongType {
        /// The server.
        server: String,
        /// The key, dotted for nested keys (`env.TOKEN`).
        key: String,
        /// What was expected ("a string", "an array of strings").
        expected: &'static str,
    },
    /// `type` names a transport zr does not speak.
    #[error(
        "MCP server '{server}': 'type' is '{found}'; supported are 'stdio' (a command), 'http' (streamable HTTP) and 'sse' (HTTP with server-sent events)"
    )]
    UnsupportedType {
        /// The server.
        server: String,
        /// The value found.
        found: String,
    },
    /// A key belongs to the other transport (`url` on a stdio server).
    #[error("MCP server '{server}': '{key}' does not apply to a {transport} server")]
    KeyForOtherTransport {
        /// The server.
        server: String,
        /// The key.
        key: &'static str,
        /// The server's transport ("stdio", "http" or "sse").
        transport: &'static str,
    },
    /// `${VAR}` names a variable that is not set and has no `:-default`.
    #[error("MCP server '{server}': '{key}' uses ${{{variable}}}, which is not set")]
    UnsetVariable {
        /// The server.
        server: String,
        /// The key holding the reference.
        key: String,
        /// The variable.
        variable: String,
    },
    /// A `${` without its `}`, a name that is not `[A-Za-z_][A-Za-z0-9_]*`
    /// (`${}`, `${1A}`), or a `${` inside a `:-default`.
    #[error("MCP server '{server}': '{key}' has a malformed '${{...}}' reference")]
    MalformedReference {
        /// The server.
        server: String,
        /// The key.
        key: String,
    },
    /// `command` or `url` is blank once its `${VAR}` references are
    /// expanded.
    #[error("MCP server '{server}': '{key}' is empty after expanding its '${{...}}' references")]
    EmptyAfterExpansion {
        /// The server.
        server: String,
        /// The key (`command` or `url`).
        key: &'static str,
    },
    /// A header name or value HTTP does not allow.
    #[error("MCP server '{server}': 'headers.{header}' is not a valid HTTP header")]
    InvalidHeader {
        /// The server.
        server: String,
        /// The header name as written.
        header: String,
    },
    /// `timeout_ms` is zero or not an integer.
    #[error("MCP server '{server}': 'timeout_ms' must be a positive integer (milliseconds)")]
    InvalidTimeout {
        /// The server.
        server: String,
    },
}

/// An MCP server could not be reached, or a request to it failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum McpError {
    /// No server of that name is configured.
    #[error("no MCP server named '{server}' is configured")]
    UnknownServer {
        /// The name asked for.
        server: String,
    },
    /// The server's command could not be started.
    #[error("MCP server '{server}': cannot start '{command}'")]
    Spawn {
        /// The server.
        server: ServerName,
        /// The command.
        command: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The server did not complete the MCP handshake in time.
    #[error(
        "MCP server '{server}' did not complete the handshake within {timeout_ms} ms{}",
        stderr_note(stderr)
    )]
    ConnectTimeout {
        /// The server.
        server: ServerName,
        /// The limit.
        timeout_ms: u64,
        /// The last lines the server wrote to stderr (stdio servers).
        stderr: Vec<String>,
    },
    /// The handshake failed.
    #[error("MCP server '{server}': the handshake failed{}", stderr_note(stderr))]
    Initialize {
        /// The server.
        server: ServerName,
        /// The last lines the server wrote to stderr (stdio servers).
        stderr: Vec<String>,
        /// The SDK's error.
        #[source]
        source: BoxError,
    },
    /// The server process ended. Every call that was waiting fails with
    /// this error at once; the next [`McpHub::acquire`](crate::McpHub::acquire)
    /// starts the server again.
    #[error("MCP server '{server}' exited ({status}){}", stderr_note(stderr))]
    Exited {
        /// The server.
        server: ServerName,
        /// How it ended, as the operating system reported it.
        status: ExitStatus,
        /// The last lines it wrote to stderr.
        stderr: Vec<String>,
    },
    /// The server wrote a message larger than
    /// [`HubOptions::max_message_bytes`](crate::HubOptions::max_message_bytes).
    /// The session ends (the server is stopped) and every waiting call fails
    /// with this error; the next acquire starts the server again.
    #[error(
        "MCP server '{server}' sent a message over {limit_bytes} bytes; the connection was closed"
    )]
    MessageTooLarge {
        /// The server.
        server: ServerName,
        /// The limit.
        limit_bytes: usize,
    },
    /// The connection closed (the server closed its output or the HTTP
    /// session ended) without a known exit status.
    #[error("MCP server '{server}': the connection is closed")]
    Closed {
        /// The server.
        server: ServerName,
    },
    /// The hub that owned the connection was dropped; its servers were
    /// stopped.
    #[error("MCP server '{server}': the hub was dropped and its servers stopped")]
    HubDropped {
        /// The server.
        server: ServerName,
    },
    /// A request got no answer within its time limit; the server was sent
    /// `notifications/cancelled`.
    #[error("MCP server '{server}': '{method}' got no answer within {timeout_ms} ms")]
    Timeout {
        /// The server.
        server: ServerName,
        /// The request (`tools/call {tool}`, `tools/list`).
        method: String,
        /// The limit.
        timeout_ms: u64,
    },
    /// The server answered with a JSON-RPC error.
    #[error("MCP server '{server}' refused '{method}': {message} (code {code})")]
    Refused {
        /// The server.
        server: ServerName,
        /// The request.
        method: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The request failed in the transport or the SDK.
    #[error("MCP server '{server}': '{method}' failed")]
    Request {
        /// The server.
        server: ServerName,
        /// The request.
        method: String,
        /// The cause.
        #[source]
        source: BoxError,
    },
    /// The server answered 401 (no token, or one it no longer accepts) or
    /// 403 with `insufficient_scope`: a person has to authorize zr.
    #[error(
        "MCP server '{server}' {}",
        if *insufficient_scope {
            format!("needs a token with more scope{}", scope_note(scope.as_deref()))
        } else {
            format!("requires OAuth authorization{}", scope_note(scope.as_deref()))
        }
    )]
    AuthRequired {
        /// The server.
        server: ServerName,
        /// The scopes the server's challenge asked for, as it wrote them.
        scope: Option<String>,
        /// `true` for a 403 `insufficient_scope`, `false` for a 401.
        insufficient_scope: bool,
        /// The `WWW-Authenticate` header (it holds no token): where
        /// discovery starts when logging in.
        challenge: Option<String>,
    },
    /// Discovery, registration, the token request or a refresh failed.
    #[error("MCP server '{server}': OAuth authorization failed")]
    Authorization {
        /// The server.
        server: ServerName,
        /// The cause (never a token: rmcp's errors carry none).
        #[source]
        source: BoxError,
    },
    /// The authorization server sent the browser back with an error.
    #[error("MCP server '{server}': the authorization server refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    AuthorizationDenied {
        /// The server.
        server: ServerName,
        /// The `error` of the redirect (`access_denied`, ...).
        error: String,
        /// Its `error_description`.
        description: Option<String>,
    },
    /// Nobody came back to the loopback redirect in time.
    #[error(
        "MCP server '{server}': no authorization arrived at {redirect_uri} within {timeout_secs} s"
    )]
    LoginTimeout {
        /// The server.
        server: ServerName,
        /// Where the browser was to be sent back.
        redirect_uri: String,
        /// The time limit.
        timeout_secs: u64,
    },
    /// The loopback redirect's port could not be opened.
    #[error("MCP server '{server}': cannot listen on {address} for the OAuth redirect")]
    Listen {
        /// The server.
        server: ServerName,
        /// The address.
        address: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// OAuth applies to HTTP servers only.
    #[error("MCP server '{server}' is started as a command; OAuth applies only to HTTP servers")]
    NotHttp {
        /// The server.
        server: ServerName,
    },
    /// A client-credentials private key file could not be read.
    #[error("MCP server '{server}': cannot read the private key {}", path.display())]
    KeyFile {
        /// The server.
        server: ServerName,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The token file could not be read or written.
    #[error("cannot read or write the OAuth token file {}", path.display())]
    TokenStore {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The token file is not what zr wrote.
    #[error("the OAuth token file {} is damaged; remove it and log in again", path.display())]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The server lists no prompt of that name.
    #[error("MCP server '{server}' has no prompt '{prompt}'{}", known_note(known))]
    UnknownPrompt {
        /// The server.
        server: ServerName,
        /// The name asked for.
        prompt: String,
        /// The prompts it has, in its order.
        known: Vec<String>,
    },
    /// The arguments given do not fit the prompt's declared ones.
    #[error("prompt '/{server}:{prompt}': {problem}; usage: {usage}")]
    PromptArguments {
        /// The server.
        server: ServerName,
        /// The prompt.
        prompt: String,
        /// What is wrong (a missing required argument, an unknown name,
        /// one argument too many).
        problem: String,
        /// `/server:prompt <required> [optional]`.
        usage: String,
    },
}

fn known_note(known: &[String]) -> String {
    if known.is_empty() {
        "; it has no prompts".to_owned()
    } else {
        format!("; it has: {}", known.join(", "))
    }
}

fn scope_note(scope: Option<&str>) -> String {
    scope
        .filter(|s| !s.trim().is_empty())
        .map(|s| format!(" (scope: {s})"))
        .unwrap_or_default()
}

/// `; its last lines on stderr: "A" "B"`, or nothing without lines. The
/// lines are quoted: they are the server's words, not ours.
fn stderr_note(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let quoted: Vec<String> = lines.iter().map(|l| format!("{l:?}")).collect();
    format!("; its last lines on stderr: {}", quoted.join(" "))
}

/// The line of a server's stderr that names its error, when one does:
/// the last line whose first word, before a `:`, is an error's name
/// (Node's `Error: Cannot find module '...'` or `Error [ERR_...]: ...`,
/// Python's `ModuleNotFoundError: ...`, `error: ...`), not a line of the
/// stack trace around it.
fn error_line(lines: &[String]) -> Option<&str> {
    lines.iter().rev().map(String::as_str).find(|line| {
        let Some((head, _)) = line.split_once(':') else {
            return false;
        };
        // Node adds its code: `Error [ERR_MODULE_NOT_FOUND]: ...`.
        let head = head.split_once(" [").map_or(head, |(name, _)| name);
        !head.is_empty()
            && head
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
            && (head.ends_with("Error")
                || head.ends_with("Exception")
                || head.eq_ignore_ascii_case("error")
                || head.eq_ignore_ascii_case("fatal"))
    })
}

impl McpError {
    /// The server's last stderr lines this error carries (empty for an
    /// error without them).
    #[must_use]
    pub fn stderr(&self) -> &[String] {
        match self {
            Self::ConnectTimeout { stderr, .. }
            | Self::Initialize { stderr, .. }
            | Self::Exited { stderr, .. } => stderr,
            _ => &[],
        }
    }

    /// The error in one line for a warning: its `Display`, except that
    /// when the server's stderr has a line naming the error (see
    /// [`McpError::stderr`]), only that line is quoted, not the stack
    /// trace around it: `MCP server 'fs' exited (exit status: 1); its
    /// error on stderr: "Error: Cannot find module '/x/index.js'"`. The
    /// `Display` keeps every line, for `zr mcp list` and the logs.
    #[must_use]
    pub fn headline(&self) -> String {
        let full = self.to_string();
        let lines = self.stderr();
        match error_line(lines) {
            Some(line) => full.replacen(
                &stderr_note(lines),
                &format!("; its error on stderr: {line:?}"),
                1,
            ),
            None => full,
        }
    }

    /// Whether the connection is gone (the server exited or closed, or the
    /// hub was dropped), as opposed to one request failing.
    #[must_use]
    pub fn is_connection_lost(&self) -> bool {
        matches!(
            self,
            Self::Exited { .. }
                | Self::Closed { .. }
                | Self::HubDropped { .. }
                | Self::MessageTooLarge { .. }
        )
    }
}

#[cfg(test)]
mod tests;
