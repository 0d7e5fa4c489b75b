//! A small MCP client on zr-mcp for the MCP conformance suite's client scenarios.
//!
//! The suite runs `zr-mcp-conformance <server-url>` with the scenario name in
//! `MCP_CONFORMANCE_SCENARIO`. The client connects over streamable HTTP
//! through an [`McpHub`], lists the tools, and then:
//!
//! - `initialize`: nothing more;
//! - `tools_call`: calls `add_numbers` with `{"a": 2, "b": 3}`;
//! - `sse-retry`: calls `test_reconnection` (its answer arrives only after
//!   the client reconnects to the event stream);
//! - `elicitation-sep1034-client-defaults`: calls
//!   `test_client_elicitation_defaults`, whose server asks a form; the
//!   client's elicitor accepts it with every field's default (SEP-1034);
//! - any other scenario: calls nothing.
//!
//! It exits with status 0 on success and 1 (with the error on stderr)
//! otherwise.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use std::sync::Arc;

use serde_json::json;
use zr_mcp::{
    ElicitationAnswer, ElicitationRequest, Elicitor, HttpConfig, HubOptions, McpConfig, McpError,
    McpHub, ServerConfig, TransportConfig,
};
use zr_types::{BoxFuture, ServerName};

/// Accepts every form as offered: each field's default.
#[derive(Debug)]
struct AcceptDefaults;

impl Elicitor for AcceptDefaults {
    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer> {
        let _ = writeln!(std::io::stderr(), "elicitation: {}", request.message);
        Box::pin(async move { ElicitationAnswer::Accept(request.defaults()) })
    }
}

fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        let _ = writeln!(std::io::stderr(), "usage: zr-mcp-conformance <server-url>");
        return ExitCode::FAILURE;
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&url, &scenario)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let message = zr_types::error_chain(&error);
            let _ = writeln!(
                std::io::stderr(),
                "zr-mcp-conformance ({scenario}): {message}"
            );
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str, scenario: &str) -> Result<(), McpError> {
    let name: ServerName = "conformance".parse().map_err(|_| McpError::UnknownServer {
        server: "conformance".to_owned(),
    })?;
    let server = ServerConfig::new(name, TransportConfig::Http(HttpConfig::new(url)));
    let options = HubOptions::new(std::env::temp_dir())
        .with_client("zr-mcp-conformance", env!("CARGO_PKG_VERSION"))
        .with_connect_timeout(Duration::from_secs(10))
        .with_call_timeout(Duration::from_secs(20))
        .with_grace(Duration::ZERO);
    let hub = McpHub::new(McpConfig::from_servers([server]), options);
    hub.set_elicitor(Some(Arc::new(AcceptDefaults)));
    let lease = hub.acquire("conformance").await?;
    let tools = lease.tools().await?;
    let has = |remote: &str| tools.iter().any(|t| t.handler.remote_name() == remote);
    let call = match scenario {
        "tools_call" => Some(("add_numbers", json!({"a": 2, "b": 3}))),
        "sse-retry" => Some(("test_reconnection", json!({}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        _ => None,
    };
    if let Some((tool, arguments)) = call {
        if !has(tool) {
            let _ = writeln!(
                std::io::stderr(),
                "warning: '{tool}' was not listed; calling it anyway"
            );
        }
        let output = lease.call(tool, arguments).await?;
        let _ = writeln!(std::io::stderr(), "{tool}: {:?}", output.content);
    }
    Ok(())
}
