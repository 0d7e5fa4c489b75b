//! Our side of the MCP handshake and the server notifications we act on.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RoleClient};
use zr_types::ServerName;

/// The name and version zr announces to servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientIdentity {
    pub(crate) name: String,
    pub(crate) version: String,
}

/// The client half of one connection.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    server: ServerName,
    identity: ClientIdentity,
    /// Bumped by every `notifications/tools/list_changed`.
    tools_version: Arc<AtomicU64>,
}

impl Client {
    pub(crate) fn new(server: ServerName, identity: ClientIdentity) -> Self {
        Self {
            server,
            identity,
            tools_version: Arc::new(AtomicU64::new(0)),
        }
    }

    /// How many `notifications/tools/list_changed` the server has sent.
    pub(crate) fn tools_version(&self) -> u64 {
        self.tools_version.load(Ordering::Acquire)
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(&self.identity.name, &self.identity.version),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_version.fetch_add(1, Ordering::AcqRel);
        tracing::debug!(server = %self.server, "tool list changed");
    }
}
