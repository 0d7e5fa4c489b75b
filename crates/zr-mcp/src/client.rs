//! Our side of the MCP handshake: the capabilities zr declares, the server requests it answers (elicitation, roots) and the notifications it acts on.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProtocolVersion,
    RootsCapabilities,
};
// Roots are deprecated by SEP-2577 for protocol 2026-07-28; zr speaks
// 2025-11-25, where servers still ask for them.
#[allow(deprecated)]
use rmcp::model::{ListRootsResult, Root};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use zr_types::ServerName;

use crate::elicit::{ElicitationAnswer, ElicitationRequest, fields_of};
use crate::host::{Host, InFlight};

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
    host: Arc<Host>,
    in_flight: InFlight,
}

impl Client {
    pub(crate) fn new(server: ServerName, identity: ClientIdentity, host: Arc<Host>) -> Self {
        Self {
            server,
            identity,
            tools_version: Arc::new(AtomicU64::new(0)),
            host,
            in_flight: InFlight::default(),
        }
    }

    /// How many `notifications/tools/list_changed` the server has sent.
    pub(crate) fn tools_version(&self) -> u64 {
        self.tools_version.load(Ordering::Acquire)
    }

    /// The calls in flight on this connection.
    pub(crate) fn in_flight(&self) -> &InFlight {
        &self.in_flight
    }

    /// The answer to `params`: declined without asking for a URL request,
    /// when only background agents have calls in flight, or when the host
    /// set no elicitor; else the elicitor's.
    async fn answer(&self, params: ElicitRequestParams) -> Result<ElicitResult, rmcp::ErrorData> {
        let decline = Ok(ElicitResult::new(ElicitationAction::Decline));
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = params
        else {
            tracing::info!(server = %self.server, "URL elicitation declined (zr asks in forms only)");
            return decline;
        };
        let callers = self.in_flight.callers();
        let background = |c: &Option<crate::host::Caller>| c.as_ref().is_some_and(|c| c.background);
        if !callers.is_empty() && callers.iter().all(background) {
            tracing::info!(server = %self.server, "elicitation declined: only background agents have calls in flight");
            return decline;
        }
        let Some(elicitor) = self.host.elicitor() else {
            tracing::info!(server = %self.server, "elicitation declined: nobody to ask");
            return decline;
        };
        let order = requested_schema.property_order.clone();
        let schema = serde_json::to_value(&requested_schema)
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
        let fields = fields_of(&schema, order.as_deref())
            .map_err(|e| rmcp::ErrorData::invalid_params(e, None))?;
        let mut agents: Vec<_> = callers
            .into_iter()
            .flatten()
            .filter(|c| !c.background)
            .map(|c| c.agent)
            .collect();
        agents.sort();
        agents.dedup();
        let request = ElicitationRequest {
            server: self.server.clone(),
            message,
            fields,
            agents,
        };
        Ok(match elicitor.elicit(&request).await {
            ElicitationAnswer::Accept(content) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::Value::Object(content)),
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        // Declared only when someone can answer: a capability that could
        // only decline is not offered (servers then do not list tools
        // that need it).
        if self.host.elicitor().is_some() {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        }
        let mut roots = RootsCapabilities::default();
        roots.list_changed = Some(true);
        capabilities.roots = Some(roots);
        ClientConfig::new(
            capabilities,
            Implementation::new(&self.identity.name, &self.identity.version),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        self.answer(params).await
    }

    #[allow(deprecated)] // See the import of `Root`.
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        let roots = self.host.roots().iter().map(|p| root(p)).collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_version.fetch_add(1, Ordering::AcqRel);
        tracing::debug!(server = %self.server, "tool list changed");
    }
}

/// A folder as a root: a `file://` URI (bytes outside the unreserved set
/// and `/` percent-encoded) named by its last component.
#[allow(deprecated)] // See the import of `Root`.
pub(crate) fn root(path: &Path) -> Root {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    let mut root = Root::new(uri);
    root.name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    root
}
