//! Tests of tool annotations: absent MCP hints keep MCP's defaults.

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
