//! How the hub connects, shares and bounds: [`HubOptions`] and the
//! defaults that a lease falls back on once the hub is gone.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::auth::store::TokenStore;
use crate::child;
use crate::client::ClientIdentity;

/// The default of [`HubOptions::call_timeout`].
pub(crate) const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The default of [`HubOptions::max_result_bytes`].
pub(crate) const DEFAULT_MAX_RESULT_BYTES: usize = 100 * 1024;

/// How the hub connects, shares and bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HubOptions {
    /// How long a connection stays open after its last lease is dropped;
    /// an acquire inside this window reuses it. Default 30 s.
    pub grace: Duration,
    /// The time limit of the handshake. Default 5 s.
    pub connect_timeout: Duration,
    /// The time limit of a tool call (and of `tools/list`) when the server
    /// sets no `timeout_ms`. Default 120 s.
    pub call_timeout: Duration,
    /// The largest tool result handed to the model, in bytes; the rest is
    /// cut with a note. Default 100 KiB.
    pub max_result_bytes: usize,
    /// The largest single MCP message read from a stdio server. A longer
    /// one ends the session: waiting calls fail with
    /// [`McpError::MessageTooLarge`](crate::error::McpError::MessageTooLarge) and the next acquire restarts the
    /// server. Over HTTP the SDK applies the same limit to each event or
    /// response. Default 64 MiB.
    pub max_message_bytes: usize,
    /// The folder relative `cwd` settings are resolved against, and the
    /// working folder of servers without one.
    pub cwd: PathBuf,
    /// The variables every child process gets besides its configured ones.
    /// [`HubOptions::new`] takes `PATH`, `HOME` and `LANG` from the host.
    pub base_env: BTreeMap<String, String>,
    /// The client name announced in the handshake. Default `zr`.
    pub client_name: String,
    /// The client version announced. Default this crate's version.
    pub client_version: String,
    /// Where OAuth logins are kept: an HTTP server with a stored login
    /// gets its token (refreshed when it expires). `None` (the default)
    /// sends no stored token.
    pub tokens: Option<TokenStore>,
    /// The folders servers are told they may work in (`roots/list`), at
    /// the start; [`McpHub::set_roots`](crate::McpHub::set_roots) changes
    /// them. Default: `cwd`.
    pub roots: Vec<PathBuf>,
}

impl HubOptions {
    /// The defaults, with servers working in `cwd` and the base environment
    /// taken from the host's `PATH`, `HOME` and `LANG`.
    #[must_use]
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        let base_env = child::BASE_ENV
            .iter()
            .filter_map(|name| Some(((*name).to_owned(), std::env::var(name).ok()?)))
            .collect();
        let cwd: PathBuf = cwd.into();
        Self {
            roots: vec![cwd.clone()],
            grace: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            call_timeout: DEFAULT_CALL_TIMEOUT,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            max_message_bytes: 64 * 1024 * 1024,
            cwd,
            base_env,
            client_name: "zr".to_owned(),
            client_version: env!("CARGO_PKG_VERSION").to_owned(),
            tokens: None,
        }
    }

    /// Sets the grace period.
    #[must_use]
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Sets the handshake time limit.
    #[must_use]
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the default call time limit.
    #[must_use]
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets the result size limit.
    #[must_use]
    pub fn with_max_result_bytes(mut self, bytes: usize) -> Self {
        self.max_result_bytes = bytes;
        self
    }

    /// Sets the message size limit.
    #[must_use]
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// Sets the client name and version announced to servers.
    #[must_use]
    pub fn with_client(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_name = name.into();
        self.client_version = version.into();
        self
    }

    /// Sets where OAuth logins are kept.
    #[must_use]
    pub fn with_tokens(mut self, tokens: Option<TokenStore>) -> Self {
        self.tokens = tokens;
        self
    }

    /// These options without the token store (a login's probe).
    pub(crate) fn without_tokens(self) -> Self {
        self.with_tokens(None)
    }

    /// Sets the roots servers are told at the start.
    #[must_use]
    pub fn with_roots(mut self, roots: Vec<PathBuf>) -> Self {
        self.roots = roots;
        self
    }

    pub(crate) fn identity(&self) -> ClientIdentity {
        ClientIdentity {
            name: self.client_name.clone(),
            version: self.client_version.clone(),
        }
    }
}
