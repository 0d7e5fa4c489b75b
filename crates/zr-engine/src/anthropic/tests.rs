//! Unit tests of the Anthropic decoder and settings.

use super::decode::MessageDecoder;
use super::*;
use crate::ModelEvent;
use crate::http::{Decoder, SseEvent};

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
fn debug_never_prints_the_key() {
    let config = AnthropicConfig::new("sk-ant-SECRET");
    let text = format!("{config:?}");
    assert!(!text.contains("SECRET"), "{text}");
    assert!(text.contains("<redacted>"));
}
