//! An MCP server's tools for an agent: a `.mcp.json`-style configuration,
//! an `McpHub` that starts the server over stdio, its tools (named
//! `mcp__echo__echo`) offered to the root through `AgentOptions::mcp_tools`
//! with their handlers registered on the runtime; the root loads the
//! deferred tool with `FindTool`, then calls it.
//!
//! Run it with `cargo run -p zr-mcp --example 10_mcp`. The server is this
//! example itself, started again with the argument `serve`: a tiny rmcp
//! server over stdio with one tool, `echo`, so nothing is installed or
//! downloaded. Offline, the scripted provider plays the inline script
//! below (the MCP call is real); with `ANTHROPIC_API_KEY` set, Claude
//! decides the call. The hub kills the server when it is dropped.
#![allow(clippy::print_stdout, reason = "an example prints its result")]

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use futures_util::StreamExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use zr_caps::RuntimeSettings;
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, EventKind, ModelProvider,
    QueryOverrides, RuntimeEnvironment, ScriptedProvider,
};
use zr_mcp::{HubOptions, McpConfig, McpHub};
use zr_tools::BuiltinTools;

/// MCP tools are deferred: the root loads the tool with `FindTool`, calls
/// it, then answers.
const SCRIPT: &str = r#"{"agents": {"root": [{"turns": [
    {"tool_calls": [{"name": "FindTool", "input": {"query": "select:mcp__echo__echo"}}]},
    {"tool_calls": [{"name": "mcp__echo__echo", "input": {"message": "hello over stdio"}}]},
    {"text": "The echo server answered: Echo: hello over stdio."}
]}]}}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        return serve().await;
    }
    let dir = tempfile::tempdir()?;
    // As a project's .mcp.json would say it.
    let mcp_json = serde_json::json!({"mcpServers": {"echo": {
        "command": std::env::current_exe()?,
        "args": ["serve"]
    }}});
    let config = McpConfig::parse(&mcp_json.to_string(), &|var| std::env::var(var).ok())?;
    let hub = McpHub::new(config, HubOptions::new(dir.path()));
    let tools = hub.tools("echo").await?;
    let server_pid = hub.acquire("echo").await?.process_id();

    let mut runtime = runtime(dir.path(), SCRIPT)?;
    let mut config = AgentConfig::new("You use the tools you have.");
    for tool in tools {
        println!(
            "MCP tool: {} ({})",
            tool.definition.name, tool.definition.description
        );
        runtime = runtime.with_tool(Arc::clone(&tool.definition), tool.handler);
        config.options.mcp_tools.push(tool.definition);
    }
    let agent = Agent::new(Arc::new(runtime), config);

    let mut query = agent.query("Echo 'hello over stdio'.", QueryOverrides::default());
    while let Some(event) = query.next().await {
        if let EventKind::ToolCallFinished { tool, summary, .. } = &event.kind {
            println!("[{}] {tool}: {summary}", event.agent);
        }
    }
    let result = query.finish().await?;
    println!("root: {}", result.output);
    // Dropping the last handle of the hub kills the server's process
    // group; the runtime reaps it.
    drop(agent);
    drop(hub);
    if let Some(pid) = server_pid {
        let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
        for _ in 0..250 {
            if !proc.exists() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        println!("echo server (pid {pid}) stopped: {}", !proc.exists());
    }
    Ok(())
}

/// The server side: one tool, `echo`, over standard input and output;
/// ends when its input closes.
async fn serve() -> Result<(), Box<dyn Error>> {
    let service = Echo.serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}

/// An MCP server whose one tool answers `Echo: MESSAGE`.
#[derive(Debug, Clone)]
struct Echo;

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"message": {"type": "string", "description": "What to echo"}},
            "required": ["message"]
        });
        let serde_json::Value::Object(schema) = schema else {
            unreachable!("the schema literal is an object")
        };
        let tool = Tool::new("echo", "Echoes back the message", Arc::new(schema));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let message = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("message"))
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| ErrorData::invalid_params("`message` must be a string", None))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("Echo: {message}"))]).into())
    }
}

/// Claude when `ANTHROPIC_API_KEY` is set, else the scripted provider
/// playing `script`; with the model name to send.
fn provider(script: &str) -> Result<(Arc<dyn ModelProvider>, String), Box<dyn Error>> {
    match std::env::var("ANTHROPIC_API_KEY") {
        Ok(key) if !key.is_empty() => {
            let provider = AnthropicProvider::new(AnthropicConfig::new(key))?;
            Ok((Arc::new(provider), "claude-sonnet-4-5".to_owned()))
        }
        _ => Ok((
            Arc::new(ScriptedProvider::from_json(script)?),
            "scripted".to_owned(),
        )),
    }
}

/// A runtime over `script`'s provider whose working directory is `dir`;
/// child processes see only `PATH`.
fn runtime(dir: &Path, script: &str) -> Result<RuntimeEnvironment, Box<dyn Error>> {
    let (provider, model) = provider(script)?;
    let env = std::env::var("PATH").map(|path| ("PATH".to_owned(), path));
    let settings = RuntimeSettings {
        model,
        cwd: dir.to_path_buf(),
        env: env.into_iter().collect(),
    };
    let builtins = BuiltinTools::new(dir.join("cron.json"));
    Ok(RuntimeEnvironment::new(provider, settings, builtins))
}
