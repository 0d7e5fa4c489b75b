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

const TOOLS: &str = include_str!("../../tests/it/fixtures/anthropic/tools.sse");

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
