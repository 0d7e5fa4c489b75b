//! Tests of the plain progress lines.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use zr_engine::{Event, EventKind};

use super::{PlainRenderer, describe_call};
use crate::render::Renderer as _;

#[test]
fn calls_are_described_by_their_main_argument() {
    assert_eq!(
        describe_call(
            "Grep",
            &json!({"pattern": "R[1-8]", "path": "../src", "-n": true})
        ),
        "Grep R[1-8] -n=true path=../src"
    );
    assert_eq!(
        describe_call("Bash", &json!({"command": "ls -la"})),
        "Bash ls -la"
    );
    assert_eq!(
        describe_call(
            "mcp__fs__read_text_file",
            &json!({"path": "a.md", "head": 3})
        ),
        "mcp__fs__read_text_file a.md head=3"
    );
    assert_eq!(
        describe_call("Custom", &json!({"q": "two words", "n": [1, 2]})),
        "Custom n=[1,2] q=\"two words\""
    );
    assert_eq!(describe_call("Odd", &json!("text")), "Odd text");
}

#[test]
fn delegation_calls_show_their_tasks() {
    assert_eq!(
        describe_call(
            "Task",
            &json!({"description": "write", "prompt": "p", "subagent_type": "writer", "run_in_background": true})
        ),
        "Task (writer, in the background): write"
    );
    assert_eq!(
        describe_call("Task", &json!({"description": "dig", "prompt": "p"})),
        "Task (fork): dig",
        "a Task without a type is a fork, not general-purpose"
    );
    assert_eq!(
        describe_call(
            "MultiTask",
            &json!({"tasks": [{"description": "a", "prompt": "p"}, {"description": "b", "prompt": "p"}]})
        ),
        "MultiTask (2 tasks): a, b"
    );
}

fn event(kind: EventKind) -> Event {
    Event {
        at: Duration::ZERO,
        agent: "root".parse().unwrap(),
        agent_type: Arc::from("root"),
        kind,
    }
}

#[test]
fn a_failed_call_has_one_line_and_a_good_result_none() {
    let mut out = Vec::new();
    let mut renderer = PlainRenderer::new(&mut out);
    for (id, failed) in [("c1", true), ("c2", false), ("c3", false)] {
        if failed {
            renderer.event(&event(EventKind::ToolFailed {
                call_id: id.to_owned(),
                tool: "Read".to_owned(),
                error: "disk on fire".to_owned(),
            }));
        }
        renderer.event(&event(EventKind::ToolCallFinished {
            call_id: id.to_owned(),
            tool: "Read".to_owned(),
            is_error: id != "c2",
            summary: "disk on fire\nreally".to_owned(),
            duration: Duration::ZERO,
        }));
    }
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "[root] Read failed: disk on fire\n[root] Read error: disk on fire really\n"
    );
}
