//! `zr-echo-server`: an MCP server over stdio with one tool, `echo`, built
//! with rmcp's server side; for benchmarks only (feature `echo-server`).
//!
//! `echo {"message": M}` answers the text `Echo: M`, as server-everything's
//! `echo` does, so that the MCP echo benchmark can run every client
//! against a server that costs next to nothing per call: what is then
//! measured is the client. It runs on one thread (a current-thread
//! runtime) and exits when its standard input closes.
//!
//! When its standard input and output are pipes, as every client starts
//! it, it reads and writes them without blocking, on its one thread.
//! rmcp's `stdio()` transport reads and writes through tokio's `Stdin` and
//! `Stdout`, which do each read and write on a thread of the blocking pool
//! and hand the bytes over: two thread wake-ups per message, which at 16
//! calls in flight made the server, not the client, the bound of the
//! benchmark. On anything else (a terminal, a file) it falls back to
//! `stdio()`.

use std::borrow::Cow;
use std::io::Write as _;
use std::os::fd::AsFd as _;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::json;
use tokio::net::unix::pipe;

/// The server: stateless.
#[derive(Debug, Clone)]
struct Echo {
    tools: Arc<Vec<Tool>>,
}

impl Echo {
    fn new() -> Self {
        let mut schema = serde_json::Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert(
            "properties".into(),
            json!({"message": {"type": "string", "description": "Message to echo"}}),
        );
        schema.insert("required".into(), json!(["message"]));
        Self {
            tools: Arc::new(vec![Tool::new(
                "echo",
                "Echoes back the input",
                Arc::new(schema),
            )]),
        }
    }
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "echo" {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {}", request.name),
                None,
            ));
        }
        let message = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("message"))
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| {
                ErrorData::invalid_params(Cow::Borrowed("`message` must be a string"), None)
            })?;
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("Echo: {message}"))]).into())
    }
}

/// Standard input and output as non-blocking pipes, if both are pipes
/// (called inside the runtime, which registers them).
fn pipes() -> Option<(pipe::Receiver, pipe::Sender)> {
    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    Some((
        pipe::Receiver::from_owned_fd(input).ok()?,
        pipe::Sender::from_owned_fd(output).ok()?,
    ))
}

fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "zr-echo-server: no async runtime: {error}"
            );
            return std::process::ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(async {
        let service = match pipes() {
            Some(pipes) => Echo::new().serve(pipes).await,
            None => Echo::new().serve(rmcp::transport::stdio()).await,
        }
        .map_err(|e| e.to_string())?;
        service.waiting().await.map_err(|e| e.to_string())?;
        Ok::<_, String>(())
    });
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "zr-echo-server: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
