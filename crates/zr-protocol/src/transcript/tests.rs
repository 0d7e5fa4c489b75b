//! The transcript records: what the engine writes ([`RecordRef`]) reads
//! back as the same [`Record`], and older lines read with their defaults.

use serde_json::json;
use zr_types::{ContentBlock, MessageRole};

use super::*;

fn header() -> Header {
    Header {
        version: VERSION,
        session: SessionId::from_parts(1, 0),
        agent: AgentId::root().child(1, "worker"),
        agent_type: "worker".into(),
        parent: Some(AgentId::root()),
        definition_hash: Some("0123456789abcdef".into()),
        definition: None,
        permission_mode: Some(PermissionMode::Plan),
        system_prompt: "You work.".into(),
        model: "claude-sonnet-4-5".into(),
        cwd: "/project".into(),
        worktree: None,
        created_ms: 7,
        max_turns: 5,
        inherited_messages: 2,
        task: Some(TaskRef {
            call: "t1".into(),
            index: 1,
            description: "look".into(),
        }),
        background: true,
        output_schema: Some(json!({"type": "object"})),
        depth_ceiling: Some(3),
    }
}

fn message(role: MessageRole, text: &str) -> Message {
    Message {
        role,
        content: vec![ContentBlock::Text { text: text.into() }],
    }
}

#[test]
fn every_record_the_engine_writes_reads_back_the_same() {
    let history = vec![
        message(MessageRole::User, "go"),
        message(MessageRole::Assistant, "ok"),
    ];
    let records = [
        Record::Header(header()),
        Record::Message {
            message: message(MessageRole::User, "go"),
            at_ms: Some(9),
        },
        Record::HistoryReplaced {
            history: history.clone(),
        },
        Record::Finished(Finished {
            status: "completed".into(),
            output: "ok".into(),
            turns: 1,
            usage: Usage {
                input_tokens: 3,
                ..Usage::default()
            },
            error: None,
            at_ms: Some(10),
            value: Some(json!({"answer": 42})),
        }),
        Record::QueryFailed { history },
        Record::CallStarted { id: "c1".into() },
    ];
    for record in records {
        let written = serde_json::to_string(&record.borrowed().expect("written by the engine"))
            .expect("serialises");
        assert_eq!(
            written,
            serde_json::to_string(&record).expect("serialises"),
            "RecordRef and Record write the same line"
        );
        let read: Record = serde_json::from_str(&written).expect("reads back");
        assert_eq!(read, record);
    }
}

#[test]
fn a_version_1_header_and_a_message_without_its_time_read_with_defaults() {
    let header: Record = serde_json::from_value(json!({
        "kind": "header", "version": 1, "session": "s-0000000000001-00000000",
        "agent": "root", "agent_type": "root", "parent": null, "system_prompt": "p",
        "model": "m", "cwd": "/", "created_ms": 1, "max_turns": 5
    }))
    .expect("a version 1 header reads");
    let Record::Header(header) = header else {
        panic!("a header: {header:?}");
    };
    assert_eq!(header.version, 1);
    assert_eq!(
        (
            header.definition,
            header.permission_mode,
            header.task,
            header.background,
            header.inherited_messages,
            header.depth_ceiling
        ),
        (None, None, None, false, 0, None)
    );
    let message: Record = serde_json::from_value(json!({
        "kind": "message", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    }))
    .expect("a message without at_ms reads");
    assert_eq!(
        message,
        Record::Message {
            message: Message {
                role: MessageRole::User,
                content: vec![ContentBlock::Text { text: "hi".into() }]
            },
            at_ms: None
        }
    );
}
