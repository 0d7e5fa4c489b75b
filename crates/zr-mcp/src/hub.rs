//! The connection hub: leases that share one connection per configuration, a grace period, reconnects.

use std::sync::Arc;

use std::path::PathBuf;

use crate::config::{McpConfig, ServerConfig};
use crate::elicit::Elicitor;
use crate::error::McpError;
use crate::lease::{Lease, McpTool};
use crate::options::HubOptions;
use crate::pool::Pool;

/// The MCP connection hub: starts servers on demand and shares their
/// connections.
///
/// - [`McpHub::acquire`] returns a [`Lease`]. Leases of the same
///   configuration (see [`ServerConfig::connection_key`]) share one
///   connection and are counted.
/// - When the last lease is dropped, the connection closes after the grace
///   period; an acquire inside that window reuses it.
/// - A failed connection is not kept: the next acquire tries again. A
///   connection whose server exited is replaced on the next acquire.
/// - Dropping the last handle of the hub stops every server at once (their
///   process groups are killed), even while leases remain; calls through
///   those leases then fail with [`McpError::HubDropped`].
///
/// The hub is a cheap handle: clones share the same connections. It needs
/// a Tokio runtime.
#[derive(Debug, Clone)]
pub struct McpHub {
    config: Arc<McpConfig>,
    pool: Arc<Pool>,
}

impl McpHub {
    /// A hub for the servers of `config`.
    #[must_use]
    pub fn new(config: McpConfig, options: HubOptions) -> Self {
        Self {
            config: Arc::new(config),
            pool: Arc::new(Pool::new(options)),
        }
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &McpConfig {
        &self.config
    }

    /// The options.
    #[must_use]
    pub fn options(&self) -> &HubOptions {
        self.pool.options()
    }

    /// Sets who answers servers' elicitation requests (form mode), on
    /// live connections too; `None`, the default, declines every request.
    /// The capability is declared in the handshakes made while an
    /// elicitor is set: set it before the first acquire.
    /// Requests made while only background agents have calls in flight on
    /// the connection are declined without asking.
    pub fn set_elicitor(&self, elicitor: Option<Arc<dyn Elicitor>>) {
        self.pool.host().set_elicitor(elicitor);
    }

    /// Replaces the roots servers are told (`roots/list`), and sends
    /// `notifications/roots/list_changed` to every live connection when
    /// they changed.
    pub async fn set_roots(&self, roots: Vec<PathBuf>) {
        if !self.pool.host().set_roots(roots) {
            return;
        }
        // A notification each: written, never waited on for an answer.
        for conn in self.pool.live() {
            conn.roots_changed().await;
        }
    }

    /// The roots servers are told now.
    #[must_use]
    pub fn roots(&self) -> Vec<PathBuf> {
        self.pool.host().roots()
    }

    /// A lease on the configured server `server`, connecting if needed.
    ///
    /// # Errors
    ///
    /// [`McpError::UnknownServer`] for a name not in the configuration,
    /// else as [`McpHub::acquire_config`].
    pub async fn acquire(&self, server: &str) -> Result<Lease, McpError> {
        let config = self
            .config
            .get(server)
            .ok_or_else(|| McpError::UnknownServer {
                server: server.to_owned(),
            })?
            .clone();
        self.acquire_config(config).await
    }

    /// A lease on a server given by its configuration (an agent's own
    /// `mcpServers` entry, say); shared with every lease of the same
    /// transport settings.
    ///
    /// # Errors
    ///
    /// The server could not be started ([`McpError::Spawn`]), did not
    /// complete the handshake in time ([`McpError::ConnectTimeout`]), failed
    /// it ([`McpError::Initialize`]) or exited during it
    /// ([`McpError::Exited`]).
    pub async fn acquire_config(&self, config: ServerConfig) -> Result<Lease, McpError> {
        let grant = self.pool.acquire(&config).await?;
        Ok(Lease::new(grant, config))
    }

    /// The tools of the configured server `server`, connecting if needed.
    /// Each tool's handler holds a lease, so the connection stays open
    /// while any of them is kept.
    ///
    /// # Errors
    ///
    /// As [`McpHub::acquire`] and [`Lease::tools`].
    pub async fn tools(&self, server: &str) -> Result<Vec<McpTool>, McpError> {
        self.acquire(server).await?.tools().await
    }

    /// How many leases share the connection of `server`'s configuration
    /// (0 when there is no live connection). Every tool handler from
    /// [`Lease::tools`] holds one.
    #[must_use]
    pub fn lease_count(&self, server: &str) -> usize {
        let Some(config) = self.config.get(server) else {
            return 0;
        };
        self.pool.lease_count(config.connection_key())
    }
}
