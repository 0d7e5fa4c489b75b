//! The legacy HTTP+SSE transport (`"type": "sse"`) against a real server:
//! the TypeScript SDK's `SSEServerTransport` (`sse_server.mjs`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::json;
use zr_mcp::{HttpConfig, McpConfig, ServerConfig, TransportConfig};

use crate::support::*;

/// The server process; killed when the test ends, whatever the outcome.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `sse_server.mjs`; its stream URL.
fn start_sse_server() -> (Server, String) {
    let sdk =
        zr_test_support::deps::installed("node/node_modules/@modelcontextprotocol/sdk/dist/esm");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/sse_server.mjs");
    let mut child = Command::new(node())
        .arg(script)
        .arg(sdk)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    assert!(line.starts_with("http://127.0.0.1:"), "{line:?}");
    (server, line.trim().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_and_called_over_the_sse_transport_of_the_typescript_sdk() {
    let (_server, url) = start_sse_server();
    // As `.mcp.json` writes it.
    let text = format!(
        r#"{{"mcpServers": {{"legacy": {{"type": "sse", "url": "{url}", "headers": {{"X-Zr-Test": "${{ZR_SSE_TEST}}"}}}}}}}}"#
    );
    let config = McpConfig::parse(&text, &|name| {
        (name == "ZR_SSE_TEST").then(|| "yes".to_owned())
    })
    .unwrap();
    let server = config.get("legacy").unwrap();
    assert!(matches!(server.transport, TransportConfig::Sse(_)));
    assert_eq!(server.shown(), format!("sse: {url}"));
    let hub = hub(config.servers().to_vec(), options());
    let lease = hub.acquire("legacy").await.unwrap();
    assert_eq!(lease.process_id(), None);
    let tools = lease.tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.definition.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["mcp__legacy__echo", "mcp__legacy__headers"]);

    let out = lease
        .call("echo", json!({"message": "over sse"}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "Echo: over sse");
    // The configured header went with the stream's GET and every POST.
    let out = lease.call("headers", json!({})).await.unwrap();
    let seen = text_of(&out);
    assert!(seen.starts_with("GET yes,POST yes"), "{seen}");
    assert!(!seen.contains('-'), "every request had the header: {seen}");

    // Two leases share one SSE session.
    drop(tools);
    let second = hub.acquire("legacy").await.unwrap();
    assert_eq!(hub.lease_count("legacy"), 2);
    let out = second
        .call("echo", json!({"message": "again"}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "Echo: again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_url_that_is_no_event_stream_fails_to_connect_naming_the_server() {
    let (_server, url) = start_sse_server();
    // The server answers 404 for any other path.
    let config = ServerConfig::new(
        "wrong".parse().unwrap(),
        TransportConfig::Sse(HttpConfig::new(url.replace("/sse", "/nothing"))),
    );
    let hub = hub(vec![config], options());
    let error = hub.acquire("wrong").await.unwrap_err();
    let chain = zr_types::error_chain(&error);
    assert!(
        chain.starts_with("MCP server 'wrong': the handshake failed") && chain.contains("404"),
        "{chain}"
    );
}
