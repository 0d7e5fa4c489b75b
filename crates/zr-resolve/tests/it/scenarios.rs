//! Scenario files in `tests/scenarios/*.json`, each resolved and recorded as
//! a reviewed insta snapshot of the stable text form. A scenario that must
//! fail records its error message instead.

use std::error::Error;
use std::fmt::Write;

use zr_resolve::Scenario;

fn render(text: &str) -> String {
    let result = Scenario::from_json(text).and_then(|s| s.resolve());
    match result {
        Ok(report) => report.to_string(),
        Err(err) => {
            let mut out = format!("error: {err}\n");
            let mut source = err.source();
            while let Some(cause) = source {
                writeln!(out, "  caused by: {cause}").unwrap();
                source = cause.source();
            }
            out
        }
    }
}

#[test]
fn scenarios() {
    insta::glob!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenarios"),
        "*.json",
        |path| {
            let text = std::fs::read_to_string(path).unwrap();
            insta::assert_snapshot!(render(&text));
        }
    );
}

#[test]
fn json_output_has_the_documented_shape() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/research-team.json"
    ))
    .unwrap();
    let report = Scenario::from_json(&text).unwrap().resolve().unwrap();
    let json = serde_json::to_value(&report).unwrap();
    let root = &json["agents"][0];
    assert_eq!(root["agent"], "root");
    assert_eq!(root["role"], "root");
    assert_eq!(
        root["advertised"][1],
        serde_json::json!({"name": "Read", "origin": "builtin", "read_only": true})
    );
    assert_eq!(
        root["removed"][0],
        serde_json::json!({"name": "Write", "step": "R3", "reason": "denied by 'Write'"})
    );
    assert_eq!(root["skills"], serde_json::json!(["review"]));
    assert_eq!(
        root["warnings"],
        serde_json::json!([
            "session-wide disallowed_tools pattern 'Wirte' matches no tool in the root's pool"
        ])
    );
    let names: Vec<&str> = json["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["root", "researcher", "writer", "helper"]);
    assert!(json["agents"][1]["deferred"].as_array().unwrap().is_empty());
    assert_eq!(json["agents"][2]["deferred"], serde_json::json!([]));
    assert_eq!(json["agents"][0]["deferred"][5]["origin"], "mcp:gh");
}

#[test]
fn a_subagent_without_kind_is_general_purpose() {
    let without = r#"{"subagents": {"helper": {}}}"#;
    let with = r#"{"subagents": {"helper": {"kind": "general-purpose"}}}"#;
    let shown = render(without);
    assert!(!shown.starts_with("error:"), "{shown}");
    assert_eq!(shown, render(with));
    assert!(shown.contains("general-purpose"), "{shown}");
}
