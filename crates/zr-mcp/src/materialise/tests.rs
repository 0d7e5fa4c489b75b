//! Tests of MCP tools to zr definitions: names, annotations, deferral.
use serde_json::json;

use super::*;

fn tools(value: serde_json::Value) -> Vec<rmcp::model::Tool> {
    serde_json::from_value(value).unwrap()
}

fn server() -> ServerName {
    "srv".parse().unwrap()
}

#[test]
fn names_schemas_annotations_and_defer_are_mapped() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"], "x-extra": [1, 2]});
    let list = tools(json!([
        {"name": "get", "description": "Reads.", "inputSchema": schema,
         "annotations": {"readOnlyHint": true, "openWorldHint": false}},
        {"name": "put", "title": "Put it", "inputSchema": {"type": "object"},
         "annotations": {"destructiveHint": false, "idempotentHint": true}},
        {"name": "bare", "inputSchema": {"type": "object"}}
    ]));
    let out = materialise(&server(), Some(true), &list);
    assert_eq!(out.len(), 3);

    let get = &out[0];
    assert_eq!(get.remote_name, "get");
    assert_eq!(get.definition.name.as_str(), "mcp__srv__get");
    assert_eq!(get.definition.description, "Reads.");
    assert_eq!(get.definition.input_schema, schema);
    assert_eq!(
        get.definition.annotations,
        Annotations {
            read_only: true,
            destructive: None,
            idempotent: None,
            open_world: Some(false)
        }
    );
    assert_eq!(get.definition.defer, Some(true));
    assert_eq!(get.definition.server(), Some(&server()));

    let put = &out[1];
    assert_eq!(
        put.definition.description, "Put it",
        "title stands in for a missing description"
    );
    assert!(!put.definition.annotations.read_only);
    assert_eq!(put.definition.annotations.destructive, Some(false));
    assert_eq!(put.definition.annotations.idempotent, Some(true));

    let bare = &out[2];
    assert_eq!(bare.definition.annotations, Annotations::default());
    assert_eq!(bare.definition.description, "");
}

#[test]
fn long_and_odd_names_are_shortened_stably_and_keep_the_remote_name() {
    let long = "a.very.long.tool.name.that.goes.on.and.on.and.on.beyond.sixty.four";
    let list = || tools(json!([{"name": long, "inputSchema": {"type": "object"}}]));
    let first = materialise(&server(), None, &list());
    let again = materialise(&server(), None, &list());
    assert_eq!(first[0].definition.name, again[0].definition.name);
    // The workspace's one naming rule, not a sanitiser of our own.
    assert_eq!(
        first[0].definition.name,
        ToolName::mcp(&server(), long).unwrap()
    );
    assert_eq!(first[0].definition.name.as_str().len(), 64);
    assert!(
        first[0]
            .definition
            .name
            .as_str()
            .starts_with("mcp__srv__a_very_long")
    );
    assert_eq!(first[0].remote_name, long);
    assert_eq!(first[0].definition.defer, None);
}

#[test]
fn empty_and_colliding_names_are_skipped() {
    let list = tools(json!([
        {"name": "", "inputSchema": {"type": "object"}},
        {"name": "x", "inputSchema": {"type": "object"}},
        {"name": "x", "description": "second", "inputSchema": {"type": "object"}}
    ]));
    let out = materialise(&server(), None, &list);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].definition.description, "");
}

#[test]
fn a_tool_hinted_read_only_and_destructive_is_not_read_only() {
    let list = tools(json!([
        {"name": "wipe", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": true, "destructiveHint": true}}
    ]));
    let out = materialise(&server(), None, &list);
    let wipe = &out[0].definition;
    assert!(!wipe.annotations.read_only, "{:?}", wipe.annotations);
    assert_eq!(wipe.annotations.destructive, Some(true));
    assert!(!wipe.is_read_only());
}
