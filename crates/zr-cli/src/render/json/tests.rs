//! Tests of the NDJSON lines.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::{Event, EventKind};

use super::{JsonRenderer, line};
use crate::render::Renderer as _;

#[test]
fn keys_keep_their_order_and_values_are_json() {
    let text = line(&[
        ("type", json!("x")),
        ("b", json!(1)),
        ("a", json!({"z": 1, "y": "q\"uote"})),
    ]);
    assert_eq!(text, r#"{"type":"x","b":1,"a":{"y":"q\"uote","z":1}}"#);
    let parsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed["a"]["y"], "q\"uote");
}

#[test]
fn an_event_line_starts_with_type_then_time_and_agent() {
    let mut out = Vec::new();
    let mut renderer = JsonRenderer::new(&mut out);
    renderer.event(&Event {
        at: Duration::from_millis(12),
        agent: "root.0001-explore".parse().unwrap(),
        agent_type: Arc::from("explore"),
        kind: EventKind::ToolCallStarted {
            call_id: "c1".to_owned(),
            tool: "Glob".to_owned(),
            input: json!({"pattern": "*.rs"}),
        },
    });
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"type\":\"tool_call_started\",\"at_ms\":12,\"agent\":\"root.0001-explore\",\"agent_type\":\"explore\",\"call_id\":\"c1\",\"tool\":\"Glob\",\"input\":{\"pattern\":\"*.rs\"}}\n"
    );
}

#[test]
fn a_run_without_a_result_ends_with_an_error_result_line() {
    let mut out = Vec::new();
    let mut renderer = JsonRenderer::new(&mut out);
    let session = "s-001a22d178c73-b32470d3".parse().unwrap();
    renderer.finish(&session, None, None);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"type\":\"result\",\"session\":\"s-001a22d178c73-b32470d3\",\"status\":\"error\",\"error\":\"interrupted\"}\n"
    );
}
