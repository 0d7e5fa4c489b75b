//! Tests of message (de)serialisation: transcripts must load whatever the model sent.

use serde_json::json;

use super::*;

#[test]
fn a_tool_use_with_a_made_up_name_still_loads() {
    let block: ContentBlock = serde_json::from_value(json!({
        "type": "tool_use", "id": "toolu_1", "name": "read file", "input": {}
    }))
    .unwrap();
    let ContentBlock::ToolUse { name, .. } = &block else {
        panic!("not a tool_use: {block:?}");
    };
    assert_eq!(name, "read file");
    assert_eq!(
        serde_json::to_value(&block).unwrap()["name"],
        json!("read file")
    );
    let message: Message = serde_json::from_value(json!({
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t", "name": "", "input": null}]
    }))
    .unwrap();
    assert_eq!(message.content.len(), 1);
}

#[test]
fn stop_reasons_round_trip_known_and_unknown() {
    for (text, reason) in [
        ("end_turn", StopReason::EndTurn),
        ("tool_use", StopReason::ToolUse),
        ("max_tokens", StopReason::MaxTokens),
        ("stop_sequence", StopReason::StopSequence),
        ("refusal", StopReason::Refusal),
        ("pause_turn", StopReason::Other("pause_turn".to_owned())),
        ("", StopReason::Other(String::new())),
    ] {
        let parsed: StopReason = serde_json::from_value(json!(text)).unwrap();
        assert_eq!(parsed, reason, "{text:?}");
        assert_eq!(serde_json::to_value(&parsed).unwrap(), json!(text));
    }
    assert!(serde_json::from_value::<StopReason>(json!(3)).is_err());
}

#[test]
fn texts_are_the_text_blocks_in_order_and_nothing_else() {
    let content = vec![
        ContentBlock::Thinking {
            thinking: "hmm".into(),
            signature: None,
        },
        ContentBlock::Text { text: "one".into() },
        ContentBlock::ToolUse {
            id: "toolu_1".into(),
            name: "Read".into(),
            input: json!({}),
        },
        ContentBlock::ToolResult {
            tool_use_id: "toolu_1".into(),
            content: vec![ToolResultContent::Text {
                text: "result".into(),
            }],
            is_error: false,
            display: Some("shown".into()),
        },
        ContentBlock::Text { text: "two".into() },
    ];
    assert_eq!(texts(&content).collect::<Vec<_>>(), ["one", "two"]);
    assert_eq!(texts(&[]).count(), 0);
}
