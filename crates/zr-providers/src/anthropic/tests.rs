//! Unit tests of the Anthropic decoder and settings.

use super::decode::MessageDecoder;
use super::*;
use crate::http::{Decoder, SseEvent};
use crate::provider::ModelEvent;
use zr_types::Message;

fn feed(decoder: &mut MessageDecoder, data: &str) -> Result<Vec<ModelEvent>, ProviderError> {
    let mut out = Vec::new();
    let event = SseEvent {
        event: "message".into(),
        data: data.into(),
    };
    decoder
        .decode(&event, &mut out)
        .map_err(|failure| failure.error)?;
    Ok(out)
}

#[test]
fn unknown_events_and_blocks_are_skipped() {
    let mut decoder = MessageDecoder::default();
    assert_eq!(
        feed(&mut decoder, r#"{"type":"brand_new_event","x":1}"#).unwrap(),
        vec![]
    );
    feed(
        &mut decoder,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"xx"}}"#,
    )
    .unwrap();
    feed(
        &mut decoder,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ignored"}}"#,
    )
    .unwrap();
    feed(
        &mut decoder,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#,
    )
    .unwrap();
    let out = feed(&mut decoder, r#"{"type":"message_stop"}"#).unwrap();
    let [ModelEvent::Completed(response)] = out.as_slice() else {
        panic!("expected Completed, got {out:?}");
    };
    assert!(response.content.is_empty());
}

#[test]
fn out_of_order_blocks_and_mismatched_deltas_are_protocol_errors() {
    let mut decoder = MessageDecoder::default();
    let error = feed(
        &mut decoder,
        r#"{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}"#,
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("block 3, expected block 0"),
        "{error}"
    );

    let mut decoder = MessageDecoder::default();
    feed(
        &mut decoder,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    )
    .unwrap();
    let error = feed(
        &mut decoder,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}"#,
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("input_json_delta delta does not fit a text block"),
        "{error}"
    );
}

#[test]
fn message_stop_without_stop_reason_is_a_protocol_error() {
    let mut decoder = MessageDecoder::default();
    let error = feed(&mut decoder, r#"{"type":"message_stop"}"#).unwrap_err();
    assert!(matches!(error, ProviderError::Protocol { .. }), "{error:?}");
}

#[test]
fn every_documented_stop_reason_is_kept() {
    use zr_types::StopReason;
    for (reason, expected) in [
        ("end_turn", StopReason::EndTurn),
        ("tool_use", StopReason::ToolUse),
        ("max_tokens", StopReason::MaxTokens),
        ("stop_sequence", StopReason::StopSequence),
        ("refusal", StopReason::Refusal),
        // zr-types has no variant for these: kept verbatim.
        ("pause_turn", StopReason::Other("pause_turn".into())),
        (
            "model_context_window_exceeded",
            StopReason::Other("model_context_window_exceeded".into()),
        ),
    ] {
        let mut decoder = MessageDecoder::default();
        let delta = format!(r#"{{"type":"message_delta","delta":{{"stop_reason":"{reason}"}}}}"#);
        assert_eq!(feed(&mut decoder, &delta).unwrap(), vec![], "{reason}");
        let out = feed(&mut decoder, r#"{"type":"message_stop"}"#).unwrap();
        let [ModelEvent::Completed(response)] = out.as_slice() else {
            panic!("expected Completed, got {out:?}");
        };
        assert_eq!(response.stop_reason, expected, "{reason}");
    }
}

#[test]
fn debug_never_prints_the_key() {
    let config = AnthropicConfig::new("sk-ant-SECRET");
    let text = format!("{config:?}");
    assert!(!text.contains("SECRET"), "{text}");
    assert!(text.contains("<redacted>"));
}

/// Splits `bytes` at the given cut points.
fn split(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|cut| cut % (bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for point in points.into_iter().chain([bytes.len()]) {
        chunks.push(bytes[start..point].to_vec());
        start = point;
    }
    chunks
}

const TOOLS: &str = include_str!("../../../zr-test-support/fixtures/anthropic/tools.sse");

#[test]
fn a_fixture_decodes_the_same_however_it_is_split() {
    let whole = crate::http::decode_chunks(
        &mut MessageDecoder::default(),
        vec![TOOLS.as_bytes().to_vec()],
    )
    .map_err(|failure| failure.error)
    .unwrap();
    for cut in (0..TOOLS.len()).step_by(7) {
        let split = crate::http::decode_chunks(
            &mut MessageDecoder::default(),
            split(TOOLS.as_bytes(), &[cut, cut / 2]),
        )
        .map_err(|failure| failure.error)
        .unwrap();
        assert_eq!(split, whole, "cut at {cut}");
    }
}

proptest::proptest! {
    /// Law: no bytes make the decoder panic.
    #[test]
    fn prop_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300), cuts in proptest::collection::vec(0_usize..400, 0..4)) {
        let _ = crate::http::decode_chunks(&mut MessageDecoder::default(), split(&bytes, &cuts));
    }

    /// Law: a corrupted fixture (one byte changed) fails or decodes, never
    /// panics.
    #[test]
    fn prop_corrupted_fixtures_never_panic(at in 0_usize..TOOLS.len(), byte in proptest::num::u8::ANY, cuts in proptest::collection::vec(0_usize..2000, 0..3)) {
        let mut bytes = TOOLS.as_bytes().to_vec();
        bytes[at] = byte;
        let _ = crate::http::decode_chunks(&mut MessageDecoder::default(), split(&bytes, &cuts));
    }
}

/// A request of `messages` with one tool, a system prompt and
/// `cache_prefix`.
fn wire_request(messages: Vec<Message>, cache_prefix: Option<usize>) -> ModelRequest {
    let tool = zr_types::ToolDefinition::new(
        "Read".parse().unwrap(),
        "Reads a file.",
        zr_types::ToolOrigin::Builtin,
    );
    ModelRequest {
        model: "m".into(),
        system: "You are terse.".into(),
        tools: vec![std::sync::Arc::new(tool)],
        messages: std::sync::Arc::new(messages),
        max_tokens: 100,
        tool_choice: crate::provider::ToolChoice::Auto,
        origin: crate::provider::RequestOrigin {
            agent: zr_types::AgentId::root(),
            agent_type: "fork".into(),
            turn: 1,
        },
        cache_prefix,
        output: None,
        effort: None,
    }
}

/// The JSON pointers of the body's `cache_control` breakpoints, sorted.
fn breakpoints(body: &[u8]) -> Vec<String> {
    fn walk(value: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                if map.contains_key("cache_control") {
                    out.push(at.to_owned());
                }
                for (key, value) in map {
                    walk(value, &format!("{at}/{key}"), out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, value) in items.iter().enumerate() {
                    walk(value, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&serde_json::from_slice(body).unwrap(), "", &mut out);
    out.sort();
    out
}

fn assistant(text: &str) -> Message {
    Message {
        role: zr_types::MessageRole::Assistant,
        content: vec![zr_types::ContentBlock::Text { text: text.into() }],
    }
}

fn conversation() -> Vec<Message> {
    vec![
        Message::user_text("one"),
        assistant("two"),
        Message::user_text("three"),
        assistant("four"),
        Message::user_text("five"),
    ]
}

#[test]
fn a_shared_prefix_gets_its_own_breakpoint_and_at_most_four_are_set() {
    let with = |prefix| breakpoints(&wire::body(&wire_request(conversation(), prefix)).unwrap());
    let fixed = ["/system/0", "/tools/0"];
    let expect = |messages: &[usize]| {
        let mut out: Vec<String> = messages
            .iter()
            .map(|m| format!("/messages/{m}/content/0"))
            .chain(fixed.iter().map(|s| (*s).to_owned()))
            .collect();
        out.sort();
        out
    };
    assert_eq!(with(None), expect(&[4]));
    assert_eq!(with(Some(0)), expect(&[4]));
    assert_eq!(with(Some(3)), expect(&[2, 4]));
    // The whole conversation shared, or more than it: one breakpoint.
    assert_eq!(with(Some(5)), expect(&[4]));
    assert_eq!(with(Some(usize::MAX)), expect(&[4]));
}

#[test]
fn a_prefix_ending_in_a_message_that_is_not_sent_marks_the_last_one_sent() {
    let mut messages = conversation();
    // Message 2 holds only blank text: it is not sent.
    messages[2] = Message::user_text(" ");
    let body = wire::body(&wire_request(messages, Some(3))).unwrap();
    let mut expected = vec![
        "/messages/1/content/0",
        "/messages/3/content/0",
        "/system/0",
        "/tools/0",
    ];
    expected.sort_unstable();
    assert_eq!(breakpoints(&body), expected);
}

#[test]
fn tool_choice_comes_after_the_messages() {
    let mut request = wire_request(conversation(), Some(3));
    request.tool_choice = crate::provider::ToolChoice::None;
    let body = String::from_utf8(wire::body(&request).unwrap()).unwrap();
    assert!(
        body.ends_with(r#"}]}],"tool_choice":{"type":"none"}}"#),
        "{body}"
    );
    assert!(body.starts_with(r#"{"model":"m","max_tokens":100,"stream":true,"system":[{"#));
}

proptest::proptest! {
    /// Law: a request sharing its first `n` messages with another request
    /// (`cache_prefix = n`) sends a body that starts with that request's
    /// body, byte for byte, up to the end of those messages; and it never
    /// has more than four breakpoints.
    #[test]
    fn prop_a_shared_prefix_is_sent_byte_for_byte(
        texts in proptest::collection::vec("[ a-c]{0,2}", 1..7),
        tail in proptest::collection::vec("[a-c]{1,2}", 1..3),
        tool_choice_none in proptest::bool::ANY,
    ) {
        let message = |i: usize, text: &str| if i.is_multiple_of(2) {
            Message::user_text(text)
        } else {
            assistant(text)
        };
        let shared: Vec<Message> = texts.iter().enumerate().map(|(i, t)| message(i, t)).collect();
        let n = shared.len();
        let mut all = shared.clone();
        all.extend(tail.iter().enumerate().map(|(i, t)| message(n + i, t)));
        let parent = wire::body(&wire_request(shared.clone(), None)).unwrap();
        let mut fork = wire_request(all, Some(n));
        if tool_choice_none {
            fork.tool_choice = crate::provider::ToolChoice::None;
        }
        let fork = wire::body(&fork).unwrap();
        // The parent's body ends with its messages: `]}`.
        // (A shared prefix of blank messages only sends none: `[]}`.)
        proptest::prop_assert!(parent.ends_with(b"]}"), "the messages come last");
        let prefix = &parent[..parent.len() - 2];
        proptest::prop_assert!(fork.starts_with(prefix), "{} / {}", String::from_utf8_lossy(prefix), String::from_utf8_lossy(&fork));
        proptest::prop_assert!(breakpoints(&fork).len() <= 4);
    }
}
