//! Shared test helpers: where the external servers are, configurations for them, process counting.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use zr_mcp::{
    HubOptions, Lease, McpConfig, McpHub, McpTool, McpToolHandler, ServerConfig, StdioConfig,
    TransportConfig,
};
use zr_test_support::deps::installed;
use zr_types::{ToolCall, ToolContext, ToolError, ToolHandler, ToolOutput};

pub(crate) fn node() -> String {
    "node".to_owned()
}

pub(crate) fn everything_js() -> String {
    installed("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

pub(crate) fn filesystem_js() -> String {
    installed("node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
        .display()
        .to_string()
}

pub(crate) fn python() -> String {
    installed("venv/bin/python").display().to_string()
}

pub(crate) fn fault_server_py() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/servers/fault_server.py")
        .display()
        .to_string()
}

pub(crate) fn probe_server_py() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/probe_server.py")
        .display()
        .to_string()
}

/// A marker unique to this test process and call, put on a server's command
/// line so that its processes can be counted.
pub(crate) fn marker() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "--zr-test-marker={}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

pub(crate) fn stdio(name: &str, command: String, args: Vec<String>) -> ServerConfig {
    ServerConfig::new(
        name.parse().unwrap(),
        TransportConfig::Stdio(StdioConfig::new(command).with_args(args)),
    )
}

/// server-everything over stdio, marked.
pub(crate) fn everything(name: &str, marker: &str) -> ServerConfig {
    stdio(
        name,
        node(),
        vec![everything_js(), "stdio".into(), marker.into()],
    )
}

/// The fault server, marked.
pub(crate) fn fault(name: &str, marker: &str) -> ServerConfig {
    stdio(name, python(), vec![fault_server_py(), marker.into()])
}

/// The fault server started by a shell that sleeps on after it exits, so
/// the process group outlives the MCP session (a polite close then waits
/// its full two seconds). Two marked processes while the server runs.
pub(crate) fn fault_in_lingering_shell(name: &str, marker: &str) -> ServerConfig {
    let script = format!(
        "'{py}' '{fault}' \"$0\"; sleep 300",
        py = python(),
        fault = fault_server_py(),
    );
    stdio(name, "sh".into(), vec!["-c".into(), script, marker.into()])
}

/// The fault server, which first starts a helper of its own in its process
/// group (killing only the server would leave the helper behind). Two
/// marked processes while it runs.
pub(crate) fn fault_with_helper(name: &str, marker: &str) -> ServerConfig {
    let script = format!(
        "'{py}' -c 'import time; time.sleep(300)' {marker} & exec '{py}' '{fault}' {marker}",
        py = python(),
        fault = fault_server_py(),
    );
    stdio(name, "sh".into(), vec!["-c".into(), script])
}

pub(crate) fn options() -> HubOptions {
    HubOptions::new(std::env::temp_dir())
        // Node and Python start slowly on a loaded machine.
        .with_connect_timeout(Duration::from_secs(30))
}

pub(crate) fn hub(servers: Vec<ServerConfig>, options: HubOptions) -> McpHub {
    McpHub::new(McpConfig::from_servers(servers), options)
}

/// Live (not zombie) processes whose command line holds `marker`.
pub(crate) fn count_processes(marker: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        panic!("/proc is not readable");
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .count()
}

/// Waits up to `limit` until exactly `n` live processes carry `marker`;
/// fails the test with `what` and the count found otherwise.
pub(crate) async fn expect_processes(marker: &str, n: usize, limit: Duration, what: &str) {
    assert!(
        eventually(limit, || count_processes(marker) == n).await,
        "{what}: {} marked processes, expected {n}",
        count_processes(marker)
    );
}

/// Waits until `check` holds, up to `limit`; returns whether it did.
pub(crate) async fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if check() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) fn text_of(output: &zr_types::ToolOutput) -> String {
    output
        .content
        .iter()
        .filter_map(|c| match c {
            zr_types::ToolResultContent::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Calls the fault server's `echo` tool through `lease` and fails the test
/// unless `text` comes back: the connection still works.
pub(crate) async fn expect_echo(lease: &Lease, text: &str) {
    let out = lease
        .call("echo", serde_json::json!({ "text": text }))
        .await
        .unwrap_or_else(|error| panic!("echo {text:?} failed: {error:?}"));
    assert_eq!(text_of(&out), text);
}

/// A context as the engine gives a tool.
pub(crate) fn tool_context() -> ToolContext {
    ToolContext::new(
        zr_types::SessionId::from_parts(1, 1),
        zr_types::AgentId::root(),
        std::env::temp_dir(),
        Default::default(),
    )
}

/// Runs `handler` the way the engine does, with `input`.
pub(crate) async fn run(
    handler: &McpToolHandler,
    input: serde_json::Value,
) -> Result<ToolOutput, ToolError> {
    let call = ToolCall {
        id: "1".into(),
        name: handler.name().to_string(),
        input,
    };
    let ctx = tool_context().for_call(&call.id);
    ToolHandler::call(handler, &call, ctx).await
}

/// The handler of the server's tool `remote` (its own name).
pub(crate) fn handler_of(tools: &[McpTool], remote: &str) -> Arc<McpToolHandler> {
    tools
        .iter()
        .find(|t| t.handler.remote_name() == remote)
        .unwrap_or_else(|| panic!("no tool '{remote}'"))
        .handler
        .clone()
}
