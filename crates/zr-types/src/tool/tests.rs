//! Tests of tool definitions: absent MCP hints keep MCP's defaults, and
//! serde sees the fields in the same order whatever their layout.

use serde_json::json;

use super::*;

#[test]
fn absent_hints_take_mcps_defaults() {
    let none = Annotations::default();
    assert!(!none.read_only);
    assert!(none.is_destructive());
    assert!(!none.is_idempotent());
    assert!(none.is_open_world());

    let read_only = Annotations::read_only();
    assert!(!read_only.is_destructive());
    assert!(read_only.is_open_world());

    let stated = Annotations {
        read_only: false,
        destructive: Some(false),
        idempotent: Some(true),
        open_world: Some(false),
    };
    assert!(!stated.is_destructive());
    assert!(stated.is_idempotent());
    assert!(!stated.is_open_world());
}

#[test]
fn annotations_serialise_only_stated_hints() {
    let parsed: Annotations = serde_json::from_value(json!({})).unwrap();
    assert_eq!(parsed, Annotations::default());
    assert!(parsed.is_destructive() && parsed.is_open_world());
    assert_eq!(
        serde_json::to_value(parsed).unwrap(),
        json!({"read_only": false})
    );

    let parsed: Annotations =
        serde_json::from_value(json!({"destructive": false, "open_world": false})).unwrap();
    assert_eq!(parsed.destructive, Some(false));
    assert_eq!(parsed.idempotent, None);
    assert_eq!(
        serde_json::to_value(parsed).unwrap(),
        json!({"read_only": false, "destructive": false, "open_world": false})
    );
    assert!(serde_json::from_value::<Annotations>(json!({"readOnlyHint": true})).is_err());
}

#[test]
fn serde_keeps_the_field_order_of_before_the_layout() {
    let def = ToolDefinition::new("Read".parse().unwrap(), "Reads.", ToolOrigin::Builtin)
        .with_annotations(Annotations::read_only())
        .with_defer(Some(true));
    let text = serde_json::to_string(&def).unwrap();
    assert_eq!(
        text,
        r#"{"name":"Read","description":"Reads.","input_schema":{"type":"object"},"annotations":{"read_only":true},"origin":"builtin","defer":true}"#
    );
    assert_eq!(serde_json::from_str::<ToolDefinition>(&text).unwrap(), def);
    let seq = r#"["Read","Reads.",{"type":"object"},{"read_only":true},"builtin",true]"#;
    assert_eq!(serde_json::from_str::<ToolDefinition>(seq).unwrap(), def);
}

#[test]
fn a_tool_both_read_only_and_destructive_is_not_read_only() {
    let contradictory = Annotations {
        read_only: true,
        destructive: Some(true),
        ..Annotations::default()
    };
    let name: ToolName = "mcp__srv__wipe".parse().unwrap();
    let tool = ToolDefinition::new(name, "", ToolOrigin::Custom).with_annotations(contradictory);
    assert!(!tool.is_read_only());
    assert!(tool.annotations.is_destructive());
    let read_only = ToolDefinition::new("Peek".parse().unwrap(), "", ToolOrigin::Custom)
        .with_annotations(Annotations {
            destructive: Some(false),
            ..Annotations::read_only()
        });
    assert!(read_only.is_read_only());
}
