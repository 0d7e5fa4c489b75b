//! The protocol's own checks: the committed schema is the generated one, and messages read and write as documented.

use serde_json::json;

use super::*;

/// The committed schema (`schema/host-protocol.schema.json`).
fn committed_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/host-protocol.schema.json")
}

/// The committed schema is the one the types make; `ZR_UPDATE_SCHEMA=1`
/// writes it.
#[test]
fn committed_schema_matches_the_types() {
    let generated = serde_json::to_string_pretty(&schema()).expect("a schema serialises") + "\n";
    let path = committed_path();
    if std::env::var_os("ZR_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).expect("the schema is written");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} differs from the protocol's types; run `ZR_UPDATE_SCHEMA=1 cargo test -p zr-protocol committed_schema` and commit it",
        path.display()
    );
}

#[test]
fn an_event_is_flat_with_its_kind_under_event() {
    let event = ZrMessage::Event(Event {
        at_ms: 3,
        agent: "root".into(),
        agent_type: "root".into(),
        kind: EventKind::TextDelta { text: "hi".into() },
    });
    assert_eq!(
        serde_json::to_value(&event).expect("serialises"),
        json!({"type": "event", "at_ms": 3, "agent": "root", "agent_type": "root", "event": "text_delta", "text": "hi"})
    );
}

#[test]
fn answers_read_with_defaults() {
    let answer: HostMessage =
        serde_json::from_value(json!({"type": "permission_answer", "id": 4, "behavior": "deny"}))
            .expect("parses");
    assert_eq!(
        answer,
        HostMessage::PermissionAnswer {
            id: 4,
            decision: PermissionDecision::Deny {
                message: String::new()
            }
        }
    );
    let query: HostMessage =
        serde_json::from_value(json!({"type": "query", "prompt": "go"})).expect("parses");
    assert_eq!(
        query,
        HostMessage::Query {
            prompt: "go".into(),
            options: QueryOptions::default()
        }
    );
}
