//! Streamable HTTP: server-everything in its HTTP mode on a free loopback port.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use zr_mcp::{HttpConfig, ServerConfig, TransportConfig};
use zr_types::ToolResultContent;

use crate::support::*;

/// The server process; killed when the test ends, whatever the outcome.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_http_everything() -> (Server, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(node())
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server(child);
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "server-everything did not listen on port {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_and_called_over_streamable_http() {
    let (_server, port) = start_http_everything();
    let config = ServerConfig::new(
        "web".parse().unwrap(),
        TransportConfig::Http(
            HttpConfig::new(format!("http://127.0.0.1:{port}/mcp")).with_header("X-Zr-Test", "1"),
        ),
    );
    let hub = hub(vec![config], options());
    let lease = hub.acquire("web").await.unwrap();
    assert_eq!(lease.process_id(), None);
    let tools = lease.tools().await.unwrap();
    let echo = tools
        .iter()
        .find(|t| t.definition.name.as_str() == "mcp__web__echo")
        .unwrap();
    assert!(echo.definition.annotations.read_only);

    let out = lease
        .call("echo", json!({"message": "over http"}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "Echo: over http");
    let out = lease
        .call("get-structured-content", json!({"location": "New York"}))
        .await
        .unwrap();
    assert!(out.content.contains(&ToolResultContent::Json {
        value: json!({"temperature": 33, "conditions": "Cloudy", "humidity": 82})
    }));

    // Two leases share one HTTP session (each tool handler holds a lease
    // too: drop them first).
    drop(tools);
    let second = hub.acquire("web").await.unwrap();
    assert_eq!(hub.lease_count("web"), 2);
    let out = second
        .call("get-sum", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "The sum of 1 and 2 is 3.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_http_server_fails_to_connect() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = ServerConfig::new(
        "gone".parse().unwrap(),
        TransportConfig::Http(HttpConfig::new(format!("http://127.0.0.1:{port}/mcp"))),
    );
    let hub = hub(
        vec![config],
        options().with_connect_timeout(Duration::from_secs(5)),
    );
    let error = hub.acquire("gone").await.unwrap_err();
    assert!(
        matches!(&error, zr_mcp::McpError::Initialize { server, .. } if server.as_str() == "gone"),
        "{error:?}"
    );
    assert!(
        error.to_string().starts_with("MCP server 'gone'"),
        "{error}"
    );
}
