//! The MCP project's reference server (server-everything) over stdio: listing, materialising, calling.

use std::sync::Arc;

use serde_json::json;
use zr_mcp::McpTool;
use zr_types::{ImageSource, ToolCall, ToolHandler, ToolOrigin, ToolResultContent};

use crate::support::*;

async fn call(tools: &[McpTool], name: &str, input: serde_json::Value) -> zr_types::ToolOutput {
    let tool = tools
        .iter()
        .find(|t| t.definition.name.as_str() == name)
        .unwrap_or_else(|| panic!("no tool {name}"));
    let handler: Arc<dyn ToolHandler> = tool.handler.clone();
    handler
        .call(
            &ToolCall {
                id: "toolu_1".into(),
                name: name.into(),
                input,
            },
            tool_context(),
        )
        .await
        .unwrap_or_else(|e| panic!("{name} failed: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_with_their_flags_and_called() {
    let marker = marker();
    let hub = hub(
        vec![everything("every", &marker).with_deferred(Some(true))],
        options(),
    );
    let lease = hub.acquire("every").await.unwrap();
    // We asked for 2025-11-25 and the server speaks it.
    assert_eq!(lease.protocol_version().as_deref(), Some("2025-11-25"));
    assert_eq!(
        lease
            .server_implementation()
            .map(|(name, _)| name)
            .as_deref(),
        Some("mcp-servers/everything")
    );
    let tools = lease.tools().await.unwrap();

    let by_name = |n: &str| {
        tools
            .iter()
            .find(|t| t.definition.name.as_str() == n)
            .unwrap_or_else(|| {
                panic!(
                    "no {n} in {:?}",
                    tools
                        .iter()
                        .map(|t| t.definition.name.as_str())
                        .collect::<Vec<_>>()
                )
            })
    };
    let echo = by_name("mcp__every__echo");
    assert!(echo.definition.annotations.read_only, "echo is read-only");
    assert_eq!(
        echo.definition.origin,
        ToolOrigin::Connection {
            server: "every".parse().unwrap()
        }
    );
    assert_eq!(echo.definition.defer, Some(true));
    assert_eq!(
        echo.definition.input_schema["properties"]["message"]["type"],
        "string"
    );
    assert_eq!(echo.handler.remote_name(), "echo");
    assert!(
        by_name("mcp__every__get-sum")
            .definition
            .annotations
            .read_only
    );
    let logging = by_name("mcp__every__toggle-simulated-logging");
    assert!(!logging.definition.annotations.read_only);
    assert_eq!(logging.definition.annotations.destructive, Some(false));
    assert_eq!(logging.definition.annotations.open_world, Some(false));
    let gzip = by_name("mcp__every__gzip-file-as-resource");
    assert!(!gzip.definition.annotations.read_only);
    assert_eq!(gzip.definition.annotations.idempotent, Some(true));

    let out = call(&tools, "mcp__every__echo", json!({"message": "hi there"})).await;
    assert!(!out.is_error);
    assert_eq!(
        out.content,
        [ToolResultContent::Text {
            text: "Echo: hi there".into()
        }]
    );

    let out = call(&tools, "mcp__every__get-sum", json!({"a": 2, "b": 40})).await;
    assert!(!out.is_error);
    assert_eq!(text_of(&out), "The sum of 2 and 40 is 42.", "{out:?}");

    let out = call(
        &tools,
        "mcp__every__get-structured-content",
        json!({"location": "Chicago"}),
    )
    .await;
    assert!(!out.is_error);
    let expected = json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82});
    assert!(
        out.content.contains(&ToolResultContent::Json {
            value: expected.clone()
        }),
        "{out:?}"
    );
    // The backward-compatible text block is kept too.
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text_of(&out)).unwrap(),
        expected
    );

    let out = call(&tools, "mcp__every__get-tiny-image", json!({})).await;
    let images: Vec<_> = out
        .content
        .iter()
        .filter_map(|c| match c {
            ToolResultContent::Image {
                source: ImageSource::Base64 { media_type, data },
            } => Some((media_type, data)),
            _ => None,
        })
        .collect();
    assert_eq!(images.len(), 1, "{out:?}");
    assert_eq!(images[0].0, "image/png");
    assert!(images[0].1.starts_with("iVBOR"), "a PNG in base64");
    assert_eq!(out.content.len(), 3, "text, image, text");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_come_back_as_an_error_for_the_model() {
    let marker = marker();
    let hub = hub(vec![everything("every", &marker)], options());
    let lease = hub.acquire("every").await.unwrap();
    let tools = lease.tools().await.unwrap();
    // The server validates its input and answers isError (or a JSON-RPC
    // error); either way the model gets an error result, not a failed call.
    let out = call(&tools, "mcp__every__get-sum", json!({"a": "two"})).await;
    assert!(out.is_error, "{out:?}");
    // The server's own words reach the model: which tool, what was wrong.
    assert!(
        text_of(&out).contains("Invalid arguments for tool get-sum"),
        "{out:?}"
    );
    // Input that is not an object is refused before reaching the server.
    let out = call(&tools, "mcp__every__echo", json!([1])).await;
    assert!(out.is_error);
    assert!(text_of(&out).contains("must be a JSON object"), "{out:?}");
}
