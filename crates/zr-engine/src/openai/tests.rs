//! Unit tests of the OpenAI decoder and settings.

use super::decode::ChunkDecoder;
use super::*;
use crate::ModelEvent;
use crate::http::{Decoder, SseEvent};

fn feed(decoder: &mut ChunkDecoder, data: &str) -> Result<Vec<ModelEvent>, crate::http::Failure> {
    let mut out = Vec::new();
    let event = SseEvent {
        event: "message".into(),
        data: data.into(),
    };
    decoder.decode(&event, &mut out)?;
    Ok(out)
}

#[test]
fn calls_without_ids_get_stable_stand_ins() {
    let mut decoder = ChunkDecoder::default();
    let out = feed(
        &mut decoder,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"Read","arguments":"{\"path\":"}}]}}]}"#,
    )
    .unwrap();
    assert_eq!(
        out,
        vec![ModelEvent::ToolUseStarted {
            id: "call_0".into(),
            name: "Read".into()
        }]
    );
    feed(
        &mut decoder,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a\"}"}}]},"finish_reason":"tool_calls"}]}"#,
    )
    .unwrap();
    // The server closed without [DONE]: the finish reason completes it.
    let Some(ModelEvent::Completed(response)) = decoder.end() else {
        panic!("expected Completed");
    };
    assert_eq!(
        response.content,
        vec![zr_types::ContentBlock::ToolUse {
            id: "call_0".into(),
            name: "Read".into(),
            input: serde_json::json!({"path": "a"}),
        }]
    );
}

#[test]
fn numeric_5xx_error_codes_are_retried_and_others_are_not() {
    let mut decoder = ChunkDecoder::default();
    let failure = feed(&mut decoder, r#"{"error":{"message":"busy","code":503}}"#).unwrap_err();
    assert!(failure.retry.is_some(), "{failure:?}");
    let failure = feed(
        &mut decoder,
        r#"{"error":{"message":"bad","type":"invalid_request_error"}}"#,
    )
    .unwrap_err();
    assert!(failure.retry.is_none(), "{failure:?}");
    assert_eq!(
        failure.error.to_string(),
        "openai: error in the stream (invalid_request_error): bad"
    );
}

#[test]
fn an_end_without_finish_reason_is_not_complete() {
    let mut decoder = ChunkDecoder::default();
    feed(
        &mut decoder,
        r#"{"choices":[{"index":0,"delta":{"content":"hi"}}]}"#,
    )
    .unwrap();
    assert_eq!(decoder.end(), None);
}

#[test]
fn debug_never_prints_the_key() {
    let config = OpenAiConfig::new("http://127.0.0.1:1/v1").with_api_key("sk-SECRET");
    let text = format!("{config:?}");
    assert!(!text.contains("SECRET"), "{text}");
    assert!(text.contains("<redacted>"));
}

const TOOLS: &str = include_str!("../../tests/it/fixtures/openai/tools.sse");

proptest::proptest! {
    /// Law: no bytes make the decoder panic.
    #[test]
    fn prop_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
        let _ = crate::http::decode_chunks(&mut ChunkDecoder::default(), vec![bytes]);
    }

    /// Law: a corrupted fixture (one byte changed) fails or decodes, never
    /// panics.
    #[test]
    fn prop_corrupted_fixtures_never_panic(at in 0_usize..TOOLS.len(), byte in proptest::num::u8::ANY) {
        let mut bytes = TOOLS.as_bytes().to_vec();
        bytes[at] = byte;
        let _ = crate::http::decode_chunks(&mut ChunkDecoder::default(), vec![bytes]);
    }
}
